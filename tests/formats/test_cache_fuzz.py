"""Mutated cache files (.cwasm, .wprog, .prep) never crash, hang or change a result (bench/cache_fuzz.py: each
case in a child process, the witness compared with snarkjs's, the proof verified). The full run (10,000
mutations of each kind, every single-bit flip of a program) is bench/results/cache-fuzz.json; here a sample."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import cache_fuzz  # noqa: E402


def _clean(report):
    for kind, r in report["kinds"].items():
        t = r["tally"]
        assert t["wrong"] == t["raised"] == t["crashed"] == t["hung"] == 0, (kind, r["problems"])
        assert t["refused"] + t["accepted"] == r["cases"] > 0


def test_random_mutations_of_each_cache_kind():
    report = cache_fuzz.run(cache_fuzz.KINDS, count=150, seed=33)
    _clean(report)
    assert report["ok"]


def test_single_bit_flips_of_a_program():
    report = cache_fuzz.run(["wprog"], bits=True, bit_step=11)  # every 11th bit: ~3,400 flips in seconds
    _clean(report)
    assert report["kinds"]["wprog"]["cases"] > 3000
