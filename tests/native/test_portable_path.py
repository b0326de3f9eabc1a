"""The portable C multiplication (used on CPUs without BMI2/ADX) gives the same
results as the mulx/adcx/adox asm path: rerun field ops, a small MSM and an NTT
with the asm path switched off."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import dec_many, enc_many, native_setting

rng = random.Random(3)


@pytest.fixture
def c_path():
    with native_setting(_core._set_adx, False):
        yield


def test_c_path_matches(curve, c_path):
    m = curve.mod
    for pfx, p, L in (("fr", curve.r, 4), ("fq", curve.q, curve.L)):
        xs = [0, 1, p - 1] + [rng.randrange(p) for _ in range(50)]
        ys = [p - 1, p - 1, p - 1] + [rng.randrange(p) for _ in range(50)]
        to = getattr(m, f"{pfx}_to_mont")
        got = dec_many(getattr(m, f"{pfx}_from_mont")(getattr(m, f"{pfx}_mul")(to(enc_many(xs, L)), to(enc_many(ys, L)))), L)
        assert got == [x * y % p for x, y in zip(xs, ys)]
    # MSM and NTT: same bytes with either path
    G = curve.g1_enc(curve.pe.G1)
    n = 300
    bases = m.g1_mul(G, enc_many([rng.randrange(curve.r) for _ in range(n)], 4))
    sc = enc_many([rng.randrange(curve.r) for _ in range(n)], 4)
    v = enc_many([rng.randrange(curve.r) for _ in range(256)], 4)
    res_c = m.msm_g1(bases, sc, threads=2)
    v_c = v.copy()
    m.coset_shift_evals(v_c)
    _core._set_adx(True)
    assert np.array_equal(m.msm_g1(bases, sc, threads=2), res_c)
    v_a = v.copy()
    m.coset_shift_evals(v_a)
    assert np.array_equal(v_a, v_c)
    _core._set_adx(False)
