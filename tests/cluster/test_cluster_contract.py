"""ClusterEngine against the engine contract: tests/engine/test_contract.py's cluster half (a private Ray,
[cluster] address = "local", one engine actor), run by pytest inside a network namespace of its own."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install -e '.[test,cluster]')")

import netns  # noqa: E402
from cases import CURVES, build_case  # noqa: E402

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
INSIDE = "import sys, netns, pytest; netns.loopback_up(); sys.exit(pytest.main(sys.argv[1:]))"


pytestmark = pytest.mark.slow  # a private Ray in a network namespace: the slow tier (pytest -m "not slow" leaves it out)


def test_cluster_engine_passes_the_engine_contract(tmp_path):
    why = netns.why_unavailable()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the cluster tests need a private network namespace: {why}")
        pytest.skip(f"the cluster tests need a private network namespace: {why}")
    for c in CURVES:
        build_case("chain", c)  # compiled out here (circom, snarkjs), found in the fixture cache inside
    env = {**os.environ, "SNARKD_CONTRACT_CLUSTER": "1", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
           "PYTHONPATH": os.pathsep.join([str(HERE), str(TESTS), str(TESTS.parent / "src")])}
    log = tmp_path / "contract.log"
    r = netns.run([sys.executable, "-c", INSIDE, str(TESTS / "engine" / "test_contract.py"), "-k", "cluster",
                   "-p", "no:cacheprovider", "-q", "-rs", "--basetemp", str(tmp_path / "inner")],
                  timeout=600, env=env, log_path=log)
    out = log.read_text()
    assert r.returncode == 0, out[-6000:]
    passed = re.search(r"(\d+) passed", out)
    wanted = len(re.findall(r"^def test_", (TESTS / "engine" / "test_contract.py").read_text(), re.M))
    assert passed and int(passed.group(1)) == wanted, out[-3000:]
