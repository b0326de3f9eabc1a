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
    # the command's parser is built from cli/parsing, below the command modules: a call down, never back up
    assert hops[:3] == [["cli/__init__", "->", "cli/parsing"], ["cli/__init__", "->", "cli/prove"],
                        ["cli/prove", "->", "cli/parsing"]]
    # the one-shot proof runs the one sequence of the prover's steps (prover/groth16), which calls the core
    sequence = hops.index(["prover/oneshot", "->", "prover/groth16"])
    native = hops.index(["prover/groth16", "->", "native/_core.bn254"])
    assert hops.index(["cli/prove", "->", "prover/oneshot"]) < sequence < native < \
        hops.index(["prover/oneshot", "->", "verifier/groth16"]) < hops.index(["prover/oneshot", "->", "prover/output"])
    # the steps time nothing of their own (their caller does), and the CLI leaves the key to the proof
    assert not [h for h in hops if h[0] == "prover/qap" and h[2] == "prover/timing"]
    assert [h[2] for h in hops if h[0] == "cli/prove"] == ["cli/parsing", "config/prove", "prover/oneshot"]
    assert [h for h in hops if h[1] == "<-"] == []  # nothing calls back up
    assert len(set(map(tuple, hops))) == len(hops)  # each hop once
    assert res.stderr.rstrip().endswith(f"{len(hops)} hops")
    assert (tmp_path / "proof.json").is_file()


def test_a_call_back_into_a_module_below_on_the_stack_is_marked(tmp_path, monkeypatch):
    """Two modules of a stand-in source tree: lower calls upper, which calls back into lower (down and back up):
    that hop is marked `<-`, the others `->`."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import hop_trace
    finally:
        sys.path.remove(str(REPO / "tools"))
    src = tmp_path / "snarkd"
    src.mkdir()
    (src / "lower.py").write_text("import upper\n\ndef start():\n    return upper.work()\n\ndef helper():\n    return 1\n")
    (src / "upper.py").write_text("import lower\n\ndef work():\n    return lower.helper() + 1\n")
    monkeypatch.setattr(hop_trace, "SRC", str(src) + "/")
    monkeypatch.syspath_prepend(str(src))
    import lower

    hops = hop_trace.Hops(None, None)
    sys.setprofile(hops.profile)
    try:
        assert lower.start() == 2
    finally:
        sys.setprofile(None)
    report = hops.report()
    assert "lower -> upper" in report and "upper <- lower" in report and report.endswith("2 hops\n")
