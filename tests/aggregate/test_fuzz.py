"""Mutated aggregates and SRS files are never accepted and never crash (bench/fuzz_aggregate.py;
10,000 cases were run once, see docs/aggregation.md and bench/results/aggregate-fuzz.json; here 400)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fuzz_aggregate  # noqa: E402


@pytest.mark.slow
def test_mutations_refused():
    res = fuzz_aggregate.run(400, seed=7)
    t = res["tally"]
    assert t["accepted"] == 0 and t["crashed"] == 0, res["problems"]
    assert t["refused_invalid"] > 50 and t["refused_input_error"] > 50  # both paths were reached
