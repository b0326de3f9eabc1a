"""The CI slice of the fuzz run: ~1,000 seeded mutated inputs over the six targets,
each target in a process of its own (tests/fuzz/harness.py: deadline per input,
RLIMIT_DATA, fd and mapping leak checks, snarkjs differential).

SNARKD_FUZZ_N=10000 runs the long version (the numbers in tests/fuzz/README.md);
SNARKD_FUZZ_SEED picks another slice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

# inputs per target in CI: ~1,200 in all, a minute or two on two cores (wasm: the native witness recorder on
# mutated circuit .wasm, ~10 s; the long run is bench/fuzz_wasm_recorder.sh)
SLICE = {"zkey": 200, "wtns": 150, "r1cs": 150, "verify": 250, "inputs": 150, "prove": 100, "wasm": 200}


@pytest.fixture(scope="session")
def fixtures_built():
    """Build every seed fixture once in this process (the harness subprocesses
    then find them in the on-disk cache)."""
    from cases import CURVES, build_case

    for curve in CURVES:
        for name in ("chain", "many_public", "no_public", "circomlib_cmp"):
            build_case(name, curve)
        c = build_case("chain", curve)
        c.circuit.witness({**c.inputs, "k": 7})
        m = build_case("many_public", curve)
        m.circuit.witness({**m.inputs, "secret": 11})


@pytest.mark.slow
@pytest.mark.parametrize("target", list(SLICE))
def test_fuzz_slice(target, fixtures_built, tmp_path):
    n = int(os.environ.get("SNARKD_FUZZ_N") or SLICE[target])
    seed = int(os.environ.get("SNARKD_FUZZ_SEED") or 1)
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, str(HERE / "harness.py"), "--target", target, "--n", str(n), "--seed", str(seed),
         "--json", str(out), "--timeout", "60"],
        capture_output=True, text=True, timeout=3600,
    )
    assert out.exists(), f"the harness died (exit {proc.returncode}): a crash or a hang\n{proc.stderr[-4000:]}"
    res = json.loads(out.read_text())
    print(json.dumps({k: res[k] for k in ("target", "inputs", "outcomes", "seconds", "peak_rss_mib") if k in res}))
    assert res["findings"] == [], json.dumps(res["findings"][:5], indent=1)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert sum(res["outcomes"].values()) == n
    assert res["fds_end"] == res["fds_after_warmup"]
    if target in ("verify", "prove") and isinstance(res.get("snarkjs"), dict):
        sj = res["snarkjs"]
        assert sj.get("snarkd_only_accepts", 0) == 0
        assert sj.get("classified_differences", {}).get("unexplained", 0) == 0
    if target == "prove":
        # the mutations reach the self-check: most damaged inputs are caught there
        assert res["outcomes"].get("exit4_selfcheck", 0) > n // 4
