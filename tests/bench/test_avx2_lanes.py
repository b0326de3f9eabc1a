"""bench/avx2_lanes.cpp's 4-lane AVX2 radix-2^29 Montgomery arithmetic checked with Python integers:
the program prints the raw lane values (limb sums, not reduced) of its products, squares, reductions
and subtractions over edge and random operands, and each is recomputed here from the definitions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snarkd.native._core import cpu_has_simd29  # the core's own AVX2 + BMI2/ADX check

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "bench" / "avx2_lanes.cpp"
P = 21888242871839275222246405745257275088696311157297823662689037894645226208583
R_BITS = 261  # 9 limbs of 29 bits
R_INV = pow(2, -R_BITS, P)

pytestmark = pytest.mark.slow  # an optimised g++ build of the benchmark (~15 s of CPU)


@pytest.fixture(scope="module")
def selftest_lines(tmp_path_factory) -> list[list[str]]:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed: bench/avx2_lanes.cpp is built with it")
    if sys.platform != "linux" or not cpu_has_simd29():
        pytest.skip("needs an x86-64 Linux CPU with AVX2, BMI2 and ADX")
    exe = tmp_path_factory.mktemp("avx2_lanes") / "avx2_lanes"
    subprocess.run(
        ["g++", "-O3", "-std=c++17", "-mavx2", "-mbmi2", "-madx", "-I", str(ROOT / "src/snarkd/native"), str(SOURCE), "-o", str(exe)],
        check=True,
        capture_output=True,
    )
    out = subprocess.run([str(exe), "--selftest"], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line]


def _rows(lines, kind):
    return [[int(v, 16) for v in row[1:]] for row in lines if row[0] == kind]


def test_selftest_reports_no_mismatch_against_the_scalar_product(selftest_lines):
    assert selftest_lines[0] == ["p", format(P, "x")]
    last = " ".join(selftest_lines[-1])
    assert last.startswith("selftest ok (0 mismatches"), last
    assert not [row for row in selftest_lines if row[0].startswith("MISMATCH") or row[0].startswith("REDUCE")]


def test_products_are_montgomery_products_below_their_bounds(selftest_lines):
    rows = _rows(selftest_lines, "mul")
    assert len(rows) >= 500
    operands = {x for x, _, _ in rows}
    # the edge operands were all multiplied: 0, 1, p - 1, p, 2p - 1, 2^254 - 1, 2^254, 12p - 1, 2^260 - 1
    assert {0, 1, P - 1, P, 2 * P - 1, 2**254 - 1, 2**254, 12 * P - 1, 2**260 - 1} <= operands
    for x, y, z in rows:
        assert x < 2**260 and y < 2**260
        assert z % P == x * y * R_INV % P
        assert z < 2**259 + P  # (x y + m p) / 2^261 with m < 2^261
        if x * y < P * 2**R_BITS:
            assert z < 2 * P  # no final subtraction needed
    for x, z in _rows(selftest_lines, "sqr"):
        assert z % P == x * x * R_INV % P
        assert z < 2**259 + P


def test_reduce_and_subtractions(selftest_lines):
    reds = _rows(selftest_lines, "red")
    assert reds
    for x, r in reds:
        assert r % P == x % P and r < 3 * P
    subs = _rows(selftest_lines, "sub")
    assert subs
    for x, y, z in subs:
        assert y < 3 * P
        assert z == x - y + 8 * P  # exact: the normalised limbs of a - b + 8p
    lsubs = _rows(selftest_lines, "lsub")
    assert lsubs
    for x, y, w, z in lsubs:
        # an unnormalised difference (limbs up to 2^30.6) into a product
        assert z % P == (x - y) * w * R_INV % P
        assert z < 2 * P


def test_the_r256_form_products_and_canonicalisation(selftest_lines):
    # the form an integration would use: R = 2^256 (the key's Montgomery form), inputs below 2p
    inv256 = pow(2, -256, P)
    rows = _rows(selftest_lines, "m256")
    assert len(rows) >= 400
    assert {0, 1, P - 1, P, 2 * P - 1, 2**254 - 1} <= {x for x, _, _ in rows}
    for x, y, z in rows:
        assert x < 2 * P and y < 2 * P
        assert z % P == x * y * inv256 % P and z < 2 * P
    for x, z in _rows(selftest_lines, "s256"):
        assert z % P == x * x * inv256 % P and z < 2 * P
    canons = _rows(selftest_lines, "canon")
    assert canons and max(s for s, _ in canons) >= 2 * P  # both conditional subtractions were exercised
    for s, c in canons:
        assert s < 4 * P and c == s % P
