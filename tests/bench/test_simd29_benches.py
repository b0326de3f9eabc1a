"""bench/simd29_flush.cpp and bench/simd29_bls_product.cpp (cpu-notes round 25) build and run: the flush benchmark
compares the 4-lane AVX2 adder's output with ScalarBatchAdd's, byte for byte, on 2,048 random additions (a third of
them negated) for G1 of both curves, and must report them equal (since round 28 also on a flush of edge cases:
infinity on either side, equal x under negated sources, the `equal` lists compared); the product benchmark
reports both fields.
bench/simd29_g2_flush.cpp (cpu-notes round 27) likewise for G2 (Simd29G2Add against ScalarBatchAdd; since round 28
"outputs equal" also covers a flush of edge cases: dst and src at infinity, zero y components of negated sources,
equal x with the `equal` lists compared) and the lanes' Fq2 product (Karatsuba on BN254, the sums form on
BLS12-381) against the scalar one, values equal."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snarkd.native._core import cpu_has_simd29  # the core's own AVX2 + BMI2/ADX check

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "src" / "snarkd" / "native"

pytestmark = pytest.mark.slow  # three optimised g++ builds (~60 s of CPU)


def _build(name: str, tmp_path: Path) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    if sys.platform != "linux" or not cpu_has_simd29():
        pytest.skip("needs an x86-64 Linux CPU with AVX2, BMI2 and ADX")
    exe = tmp_path / name
    subprocess.run(["g++", "-O3", "-std=c++17", "-fno-strict-aliasing", "-pthread", "-I", str(NATIVE),
                    str(ROOT / "bench" / f"{name}.cpp"), "-o", str(exe)], check=True, capture_output=True)
    return exe


def test_flush_lanes_equal_scalar(tmp_path):
    exe = _build("simd29_flush", tmp_path)
    for batch in ("2048", "6"):
        out = subprocess.run([str(exe), "3", batch], check=True, capture_output=True, text=True).stdout.splitlines()
        assert len(out) == 4, out
        for line, curve in zip(out, ["bn254 G1", "bls12-381 G1"] * 2):
            assert line.startswith(curve), line
            assert line.endswith("outputs equal"), line


def test_product_benchmark_reports_both_fields(tmp_path):
    exe = _build("simd29_bls_product", tmp_path)
    out = subprocess.run([str(exe), "3"], check=True, capture_output=True, text=True).stdout.splitlines()
    assert [line.split(":")[0] for line in out] == ["bn254 Fq (9 x 29 vs 4 x 64)", "bls12-381 Fq (14 x 29 vs 6 x 64)"] * 2


def test_g2_flush_lanes_equal_scalar(tmp_path):
    exe = _build("simd29_g2_flush", tmp_path)
    for batch in ("2048", "6"):
        out = subprocess.run([str(exe), "3", batch], check=True, capture_output=True, text=True).stdout.splitlines()
        assert len(out) == 8, out
        for line, curve in zip(out, ["bn254 G2", "bn254 G2", "bls12-381 G2", "bls12-381 G2"] * 2):
            assert line.startswith(curve), line
            assert line.endswith("outputs equal") or line.endswith("values equal"), line
