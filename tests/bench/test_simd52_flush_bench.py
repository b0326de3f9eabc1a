"""bench/simd52_flush.cpp (cpu-notes round 29) builds and runs: it compares the 8-lane IFMA adder's output
(SimdBatchAdd, whose backward pass takes the groups of eight two at a time) with ScalarBatchAdd's, byte for byte,
for G1 of both curves, on 1,024 additions and on 1, 2, 3 and 5 groups of eight (an odd group left over or not),
with a third of the sources negated and infinities on both sides, and must report them equal."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snarkd.native import _core

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "src" / "snarkd" / "native"

pytestmark = pytest.mark.slow  # one optimised g++ build (~10 s of CPU)


def test_ifma_flush_equals_scalar(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    prev = _core._set_simd52(True)
    try:
        has_ifma = _core.uses_simd52()
    finally:
        _core._set_simd52(prev)
    if sys.platform != "linux" or not has_ifma:
        pytest.skip("needs an x86-64 Linux CPU with AVX-512 IFMA")
    exe = tmp_path / "simd52_flush"
    subprocess.run(["g++", "-O3", "-std=c++17", "-fno-strict-aliasing", "-pthread", "-I", str(NATIVE),
                    str(ROOT / "bench" / "simd52_flush.cpp"), "-o", str(exe)], check=True, capture_output=True)
    for batch in ("1024", "8", "16", "24", "40"):
        out = subprocess.run([str(exe), "3", batch], check=True, capture_output=True, text=True).stdout.splitlines()
        assert len(out) == 2, out
        for line, curve in zip(out, ["bn254 G1", "bls12-381 G1"]):
            assert line.startswith(f"{curve}, B = {batch}:"), line
            assert line.endswith("outputs equal"), line
