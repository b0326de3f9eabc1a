"""tools/hop_trace.py, which took ARCHITECTURE.md's three traces: on a real `snarkd prove` of the bundled example it
reports the one-shot path's module hops in order, and their count."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import clirun

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "chain-bn128"


def test_hop_trace_of_a_one_shot_proof(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "tools" / "hop_trace.py"), "prove", EXAMPLE / "chain.zkey",
                          EXAMPLE / "chain.wtns", tmp_path / "proof.json", tmp_path / "public.json"],
                         capture_output=True, text=True, timeout=120, env=clirun.env())
    assert res.returncode == 0, res.stderr
    hops = [line.split()[1:4] for line in res.stderr.splitlines() if re.match(r"\s*\d+  \S", line)]
    assert hops[0] == ["cli/__init__", "->", "cli/prove"]
    assert ["cli/prove", "<-", "cli/__init__"] in hops  # a call back into a module below on the stack is marked
    # the one-shot proof runs the one sequence of the prover's steps (prover/groth16), which calls the core
    sequence = hops.index(["prover/oneshot", "->", "prover/groth16"])
    native = hops.index(["prover/groth16", "->", "native/_core.bn254"])
    assert hops.index(["cli/prove", "->", "prover/oneshot"]) < sequence < native < \
        hops.index(["prover/oneshot", "->", "verifier/groth16"]) < hops.index(["prover/oneshot", "->", "prover/output"])
    # the steps time nothing of their own (their caller does), and the CLI leaves the key to the proof
    assert not [h for h in hops if h[0] == "prover/qap" and h[2] == "prover/timing"]
    assert [h[2] for h in hops if h[0] == "cli/prove"] == ["cli/__init__", "config/prove", "prover/oneshot"]
    assert [h for h in hops if h[1] == "<-"] == [["cli/prove", "<-", "cli/__init__"]]  # the proof never calls back up
    assert len(set(map(tuple, hops))) == len(hops)  # each hop once
    assert res.stderr.rstrip().endswith(f"{len(hops)} hops")
    assert (tmp_path / "proof.json").is_file()
