"""cli/prove.quick_args: `snarkd prove`'s usual local arguments read without argparse give exactly argparse's
Namespace; anything else is left to argparse (None), so its help, messages and exit codes stay as they are."""

from __future__ import annotations

import subprocess
import sys

import pytest

from snarkd.cli import build_parser
from snarkd.cli.prove import quick_args, run

FILES = ["k.zkey", "w.wtns", "proof.json", "public.json"]
TAKEN = [
    FILES,
    ["-q", *FILES],
    [*FILES, "--timings", "--threads", "2"],
    ["--threads", "16", "--backend", "cuda", *FILES, "--no-verify"],
    ["--backend", "auto", "--check-points", *FILES],
    ["--progress", *FILES, "--no-progress"],  # the last of the two wins, as in argparse
    ["--no-progress", "--progress", *FILES],
    ["--quiet", "-q", *FILES],  # two spellings of one flag
    ["", "w wtns", "p", "q"],
    ["--threads", "0", *FILES],
]
LEFT_TO_ARGPARSE = [
    [], FILES[:3], [*FILES, "extra"],  # counts argparse (or run) answers
    ["-h", *FILES], ["--help"],
    ["--time", *FILES],  # an abbreviation argparse accepts
    ["--threads=2", *FILES],
    ["--backend", "gpu", *FILES],  # not a choice: argparse's message
    ["--threads", "x", *FILES], ["--threads", "-1", *FILES], ["--threads", "+2", *FILES], ["--threads", "٣", *FILES],
    ["--threads"], [*FILES, "--backend"],
    ["-q", "-q", *FILES], ["--", *FILES], ["-", "b", "c", "d"],
    ["k.zkey", "w.wtns", "--timings", "proof.json", "public.json"],  # files split by an option
    ["--addr", "h:1", "--key", "k", "w", "p", "q"], ["--token-file", "t", *FILES], ["--deadline", "5", *FILES],
    ["--unknown", *FILES], ["-qx", *FILES],
]


@pytest.mark.parametrize("argv", TAKEN)
def test_quick_args_are_argparse_namespace(argv):
    quick = quick_args(argv)
    assert quick is not None
    assert vars(quick) == vars(build_parser("prove").parse_args(["prove", *argv]))
    assert quick.func is run


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE)
def test_anything_else_is_left_to_argparse(argv):
    assert quick_args(argv) is None


def test_argparse_still_answers_what_quick_args_leaves():
    def prove(*args):
        return subprocess.run([sys.executable, "-m", "snarkd", "prove", *args], capture_output=True, text=True)

    res = prove("--backend", "gpu", *FILES)
    assert res.returncode == 2 and "invalid choice: 'gpu'" in res.stderr
    res = prove("--threads", "x", *FILES)
    assert res.returncode == 2 and "invalid int value: 'x'" in res.stderr
    res = prove("--help")
    assert res.returncode == 0 and "KEY.zkey WITNESS.wtns PROOF.json PUBLIC.json" in res.stdout
