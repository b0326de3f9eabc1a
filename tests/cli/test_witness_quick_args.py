"""cli/witness.quick_args: `snarkd witness`'s usual arguments read without argparse give exactly argparse's
Namespace; anything else is left to argparse (None), so its help, messages and exit codes stay as they are."""

from __future__ import annotations

import subprocess
import sys

import pytest

from snarkd.cli import build_parser
from snarkd.cli.witness import quick_args, run_witness

TAKEN = [
    ["c.wasm", "in.json", "out.wtns"],
    ["--engine", "native", "c.wasm", "in.json", "out.wtns"],
    ["c.wasm", "--engine", "wasm", "in.json", "-q", "out.wtns"],
    ["c.wasm", "in.json", "out.wtns", "--engine", "auto", "--timings", "--quiet"],
    ["--sym", "c.sym", "--sanity-check", "c.wasm", "in.json", "out.wtns"],
    ["--progress", "c.wasm", "in.json", "out.wtns", "--no-progress"],  # the last of the two wins, as in argparse
    ["--no-progress", "--progress", "c.wasm", "in.json", "out.wtns"],
    ["", "in.json", "out wtns"],
    ["-q", "--quiet", "a", "b", "c"],  # two spellings of one flag
    ["--compile", "c.wasm", "in.json", "out.wtns"],
    ["c.wasm", "--compile-tier", "fast", "in.json", "out.wtns"],  # (round 31: the tiers of the compiled library)
]
LEFT_TO_ARGPARSE = [
    [], ["c.wasm", "in.json"], ["a", "b", "c", "d"],  # wrong counts: argparse's usage error
    ["-h", "a", "b", "c"], ["--help"],
    ["--eng", "native", "a", "b", "c"],  # an abbreviation argparse accepts
    ["--engine=native", "a", "b", "c"],
    ["--engine", "fast", "a", "b", "c"],  # not a choice: argparse's message
    ["--compile-tier", "quick", "a", "b", "c"],
    ["--engine"], ["a", "b", "c", "--sym"], ["--sym", "-x", "a", "b", "c"],
    ["-q", "-q", "a", "b", "c"], ["--", "a", "b", "c"], ["-", "b", "c"], ["-1", "b", "c"],
    ["--unknown", "a", "b", "c"], ["-qx", "a", "b", "c"],
]


@pytest.mark.parametrize("argv", TAKEN)
def test_quick_args_are_argparse_namespace(argv):
    quick = quick_args(argv)
    assert quick is not None
    assert vars(quick) == vars(build_parser("witness").parse_args(["witness", *argv]))
    assert quick.func is run_witness


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE)
def test_anything_else_is_left_to_argparse(argv):
    assert quick_args(argv) is None


def test_argparse_still_answers_what_quick_args_leaves():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "snarkd", "witness", *args], capture_output=True, text=True)

    res = run("--engine", "fast", "a", "b", "c")
    assert res.returncode == 2 and "invalid choice: 'fast'" in res.stderr
    res = run("a", "b")
    assert res.returncode == 2 and "the following arguments are required: OUT.wtns" in res.stderr
    res = run("--help")
    assert res.returncode == 0 and "CIRCUIT.wasm INPUT.json OUT.wtns" in res.stdout
