"""The GPU MSM's last host step (runs without a GPU): window sums in XYZZ coordinates (Montgomery words, as the
kernels leave them) to affine Montgomery limbs, all points' denominators inverted at once, against py_ecc's
affine points for random multiples of each group's generator and random Z, infinity rows kept all-zero."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pb = pytest.importorskip("py_ecc.bls12_381", reason="the reference points come from py_ecc (a test extra; the GPU "
                         "machine's Python has none): this test needs no GPU and runs in CI")
pn = pytest.importorskip("py_ecc.bn128", reason="as above")

from snarkd.curves.encoding import g1_from_ints, g2_from_ints  # noqa: E402
from snarkd.curves.params import BLS12_381, BN254  # noqa: E402
from snarkd.gpu.msm import _batch_inverse, xyzz_to_affine_words  # noqa: E402

CURVES = {"bn128": (BN254, pn), "bls12381": (BLS12_381, pb)}


def _mont_words(curve, values) -> np.ndarray:
    return np.frombuffer(b"".join((v * curve.rq % curve.q).to_bytes(curve.n8q, "little") for v in values), dtype="<u4")


def _fq2(x) -> tuple[int, int]:
    return int(x.coeffs[0]), int(x.coeffs[1])


def _f2mul(a, b, q):
    return (a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q


@pytest.mark.parametrize("name", sorted(CURVES))
@pytest.mark.parametrize("g2", [False, True])
@settings(max_examples=8, deadline=None)
@given(ks=st.lists(st.one_of(st.just(0), st.integers(1, 2**64)), min_size=1, max_size=5),
       zs=st.lists(st.integers(1, 2**255), min_size=10, max_size=10))
def test_xyzz_window_sums_become_the_affine_points(name, g2, ks, zs):
    curve, ecc = CURVES[name]
    q = curve.q
    words, expect = [], []
    for i, k in enumerate(ks):
        per = 8 if g2 else 4
        if k == 0:  # infinity: ZZ = ZZZ = 0
            words.append(_mont_words(curve, [0] * per))
            expect.append(np.zeros(per // 2 * curve.n8q // 8, dtype="<u8"))
            continue
        p = ecc.multiply(ecc.G2 if g2 else ecc.G1, k)
        if g2:
            x, y = _fq2(p[0]), _fq2(p[1])
            z = (zs[2 * i] % q, zs[2 * i + 1] % q)
            zz = _f2mul(z, z, q)
            zzz = _f2mul(zz, z, q)
            vals = [*_f2mul(x, zz, q), *_f2mul(y, zzz, q), *zz, *zzz]
            expect.append(g2_from_ints(curve, x, y))
        else:
            x, y, z = int(p[0]), int(p[1]), zs[i] % q
            vals = [x * z * z % q, y * z * z * z % q, z * z % q, z * z * z % q]
            expect.append(g1_from_ints(curve, x, y))
        words.append(_mont_words(curve, vals))
    got = xyzz_to_affine_words(curve, g2, np.concatenate(words))
    assert got.dtype == np.dtype("<u8") and got.shape == (len(ks), len(expect[0]))
    assert np.array_equal(got, np.stack(expect))


@given(st.lists(st.integers(1, BN254.q - 1), max_size=12))
def test_batch_inverse_is_each_inverse(values):
    assert _batch_inverse(values, BN254.q) == [pow(v, -1, BN254.q) for v in values]
    with pytest.raises(ValueError):
        _batch_inverse(values + [0], BN254.q)
