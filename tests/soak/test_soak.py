"""The soak with faults, short (CI): both curves, 16 in flight, a bad request every tenth, SIGTERM and
kill -9 with restarts; then a steady run. The long run is bench/soak.py (numbers in bench/results)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver import soak  # noqa: E402

from snarkd.daemon.netcheck import free_tcp_port  # noqa: E402

JOBS, STEADY, WARMUP = 120, 200, 50
RSS_GROWTH_MIB = 64  # bound on RSS growth over the steady run (the long run states the same over 1,000 proofs)


pytestmark = pytest.mark.slow  # the soak run: the slow tier (pytest -m "not slow" leaves it out)


def test_soak_with_faults(tmp_path):
    out = soak(tmp_path, free_tcp_port(), JOBS, STEADY, warmup=WARMUP, log=lambda m: None)
    assert out["faults"] == ["sigterm", "kill9"] and out["starts"] == 3, out
    assert out["rejected"] == JOBS // 10, out
    assert out["jobs"] == JOBS - JOBS // 10, out
    for what in ("lost", "strays", "mixed_up", "invalid", "duplicated"):
        assert out[what] == [], (what, out)
    st = out["steady"]
    assert st["all_verified"] and st["verified_samples"] >= STEADY // 50, st
    assert st["rss_growth_mib"] < RSS_GROWTH_MIB, st
    assert st["fds_end"] <= st["fds_after_warmup"] + 4, st
    assert not out["log_errors"], out["log_errors"]
