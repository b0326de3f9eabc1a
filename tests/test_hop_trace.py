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
    # the usual arguments are read by the command's quick_args over cli/quick, below it: calls down, no parser
    assert hops[:2] == [["cli/__init__", "->", "cli/prove"], ["cli/prove", "->", "cli/quick"]]
    assert not [h for h in hops if h[2] == "cli/parsing"]
    # the one-shot proof runs the one sequence of the prover's steps (prover/groth16), which calls the core
    sequence = hops.index(["prover/oneshot", "->", "prover/groth16"])
    native = hops.index(["prover/groth16", "->", "native/_core.bn254"])
    assert hops.index(["cli/prove", "->", "prover/oneshot"]) < sequence < native < \
        hops.index(["prover/oneshot", "->", "verifier/groth16"]) < hops.index(["prover/oneshot", "->", "prover/output"])
    # the steps time nothing of their own (their caller does), and the CLI leaves the key to the proof
    assert not [h for h in hops if h[0] == "prover/qap" and h[2] == "prover/timing"]
    assert [h[2] for h in hops if h[0] == "cli/prove"] == ["cli/quick", "config/prove", "prover/oneshot"]
    assert [h for h in hops if h[1] == "<-"] == []  # nothing calls back up
    assert len(set(map(tuple, hops))) == len(hops)  # each hop once
    assert res.stderr.rstrip().endswith(f"{len(hops)} hops")
    assert (tmp_path / "proof.json").is_file()


def test_hop_trace_of_a_native_witness_first_and_cached(tmp_path):
    """`snarkd witness --engine native` the first time (the program recorded and saved, the wasm cache's folder
    read through config.deferred) and again with the program beside the .wasm: nothing calls back up, and the
    second run reads no setting (the cache is needed only when no program lies beside the .wasm); the witness is
    the bundled one, byte for byte."""
    for name in ("chain.wasm", "input.json"):
        (tmp_path / name).write_bytes((EXAMPLE / name).read_bytes())
    env = {**clirun.env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        res = subprocess.run([sys.executable, str(REPO / "tools" / "hop_trace.py"), "witness", "--engine", "native",
                              tmp_path / "chain.wasm", tmp_path / "input.json", tmp_path / "w.wtns"],
                             capture_output=True, text=True, timeout=120, env=env)
        assert res.returncode == 0, res.stderr
        runs.append([line.split()[1:4] for line in res.stderr.splitlines() if re.match(r"\s*\d+  \S", line)])
        assert (tmp_path / "w.wtns").read_bytes() == (EXAMPLE / "chain.wtns").read_bytes()
    first, cached = runs
    assert (tmp_path / "chain.wasm.wprog").is_file()
    assert ["witness/inputs", "->", "config/__init__"] in first  # the deferred setting, read by a call down
    assert ["witness/inputs", "->", "config/__init__"] not in cached
    for hops in runs:
        assert [h for h in hops if h[1] == "<-"] == []  # nothing calls back up
        assert len(set(map(tuple, hops))) == len(hops)


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
