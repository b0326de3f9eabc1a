"""G1's batch-affine adder on 4 AVX2 lanes (ff/simd29.hpp, msm/bucket_simd29.hpp), BN254 (9 limbs of 29
bits) and BLS12-381 (14 limbs, the product in asm: ff/gen_simd29_asm.py), the path CPUs without AVX-512
IFMA take where each field's calibration (at its first use) found it faster. With IFMA off, both curves:
the lane product against Python integers; G1 MSMs on the lanes against naive sums (native scalar
multiplications, themselves checked against py_ecc in test_points) at sizes that reach the
batch-affine buckets and the bucket-sorted top window, with zeros, ones, r - 1, infinity, repeated
bases (doubling) and P + (-P) pairs, with and without the endomorphism split (GLV halves); the same
bytes as the scalar adder; the witness MSMs likewise. G2 (Fq2 coordinates, Simd29G2Add, cpu-notes round 27)
the same way: G2 MSMs on the lanes against naive sums and the scalar adder, with and without the GLS split,
all-cancelling and all-equal MSMs, the witness MSMs' G2 jobs with G2's switch on and off separately.
test_msm.py and test_msm_mixed.py run their cases on this path too (their "avx2" parameter)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import CURVES, dec_many, enc_many

pytestmark = pytest.mark.skipif(not _core.cpu_has_simd29(), reason="no AVX2 + BMI2/ADX on this CPU")

rng = random.Random(29)
NAMES = ("bn254", "bls12_381")
BY_NAME = {c.name: c for c in CURVES}
assert set(NAMES) <= set(BY_NAME)


@pytest.fixture(params=NAMES)
def C(request):
    """the curve under test (G1 on the lanes: both)"""
    return BY_NAME[request.param]


@pytest.fixture
def lanes():
    """IFMA off (it has priority); yields a switch of both curves' AVX2 adders, restored after"""
    prev52 = _core._set_simd52(False)
    prev29 = {(c, g2): _core._set_simd29(True, c, g2) for c in NAMES for g2 in (False, True)}
    yield lambda on, g2=None: [_core._set_simd29(on, c, g2) for c in NAMES]
    for (c, g2), v in prev29.items():
        _core._set_simd29(v, c, g2)
    _core._set_simd52(prev52)


def _w(C):
    return 2 * C.L  # 64-bit words of a G1 point


def test_lane_product_against_python(C):
    # inputs below 2p (the product's contract), edges first; output canonical a b / R mod p
    P, L = C.q, C.L
    top = P.bit_length() - 1
    edges = [0, 1, 2, P - 1, P, P + 1, 2 * P - 1, (1 << top) - 1, 1 << top, (1 << (29 * (L * 64 // 29 - 1))) - 1,
             1 << (29 * (L * 64 // 29 - 1)), (1 << 29) - 1, (1 << 58) + 1, (1 << 64) - 1]
    xs = [rng.randrange(2 * P) for _ in range(400)]
    ys = [rng.randrange(2 * P) for _ in range(400)]
    a = [e for e in edges for _ in edges] + xs
    b = [f for _ in edges for f in edges] + ys
    a += [0] * (-len(a) % 4)
    b += [0] * (-len(b) % 4)
    assert max(a + b) < 2 * P
    out = _core._simd29_mul(enc_many(a, L).tobytes(), enc_many(b, L).tobytes(), C.name)
    got = dec_many(np.frombuffer(out, dtype=np.uint64), L)
    rinv = pow(1 << (64 * L), -1, P)
    assert got == [x * y * rinv % P for x, y in zip(a, b)]


def test_switch_and_default():
    prev = {c: _core._set_simd29(True, c) for c in NAMES}
    try:
        for c in NAMES:
            assert _core.uses_simd29(c) == _core.cpu_has_simd29()
        assert _core._set_simd29(False, "bls12_381") == _core.cpu_has_simd29()
        assert not _core.uses_simd29("bls12_381") and _core.uses_simd29("bn254") == _core.cpu_has_simd29()
        assert _core._set_simd29(False) == _core.cpu_has_simd29()  # both
        assert not _core.uses_simd29() and not _core.uses_simd29("bls12_381")
        _core._set_simd29(True)
        assert _core.uses_simd29("bls12_381") == _core.cpu_has_simd29()
        with pytest.raises(ValueError):
            _core.uses_simd29("secp256k1")
    finally:
        for c, v in prev.items():
            _core._set_simd29(v, c)
    for c in NAMES:
        assert not _core.simd29_default(c) or _core.cpu_has_simd29()
    assert _core.simd29_default() == _core.simd29_default("bn254")


def _mul(C, bases, sc):
    return C.mod.g1_mul(bases, enc_many([s % (1 << 256) for s in sc], 4)).reshape(-1, _w(C))


def _sum(C, rows):
    W = _w(C)
    add = C.mod.g1_add
    terms = np.asarray(rows).reshape(-1, W)
    if len(terms) == 0:
        return np.zeros(W, dtype=np.uint64)
    while len(terms) > 1:
        if len(terms) % 2:
            terms = np.concatenate([terms, np.zeros((1, W), dtype=np.uint64)])
        h = len(terms) // 2
        terms = add(terms[:h].reshape(-1), terms[h:].reshape(-1)).reshape(h, W)
    return terms[0]


def _naive_grouped(C, bases, sc):
    """sum s_i B_i with the scalars of equal bases summed first (mod r)"""
    W = _w(C)
    groups = {}
    for row, s in zip(bases.reshape(-1, W), sc):
        k = row.tobytes()
        groups[k] = (row, (groups.get(k, (row, 0))[1] + s) % C.r)
    if not groups:
        return np.zeros(W, dtype=np.uint64)
    rows = np.stack([g[0] for g in groups.values()])
    return _sum(C, _mul(C, rows.reshape(-1), [g[1] for g in groups.values()]))


def _pool(C, k):
    """k random points, the negation of the first two, twice the third, infinity"""
    W = _w(C)
    G = C.g1_enc(C.pe.G1)
    pts = C.mod.g1_mul(G, enc_many([rng.randrange(1, C.r) for _ in range(k)], 4)).reshape(k, W)
    neg = [C.mod.g1_neg(pts[i]) for i in (0, 1)]
    dbl = C.mod.g1_add(pts[2], pts[2])
    return np.concatenate([pts, np.stack(neg), dbl.reshape(1, W), np.zeros((1, W), dtype=np.uint64)])


def _scalars(C, n):
    r = C.r
    return [rng.choice([0, 1, 2, r - 1, rng.randrange(1, 1000), rng.randrange(r), rng.randrange(r), rng.randrange(r)])
            for _ in range(n)]


@pytest.mark.parametrize("n,distinct", [(3000, 3000), (5000, 40), (2 ** 14 + 3, 300), (3 * 8192 + 5, 7)])
@pytest.mark.parametrize("glv", [0, 2], ids=["plain", "glv"])
def test_g1_msm_vs_naive(lanes, C, n, distinct, glv):
    pool = _pool(C, distinct)
    idx = [rng.randrange(len(pool)) for _ in range(n)]
    bases = np.ascontiguousarray(pool[idx]).reshape(-1)
    sc = _scalars(C, n)
    want = _naive_grouped(C, bases, sc)
    prev = _core._set_glv(glv)
    try:
        got = {}
        for on in (True, False):
            lanes(on)
            got[on] = [C.mod.msm_g1(bases, enc_many(sc, 4), threads=t) for t in (1, 2)]
        for on in (True, False):
            for g in got[on]:
                assert np.array_equal(g, want), (n, distinct, glv, on)
    finally:
        _core._set_glv(prev)


def test_g1_msm_all_cancelling(lanes, C):
    # P and -P with equal scalars: every bucket meets P + (-P); the sum is infinity
    W = _w(C)
    base = _pool(C, 3)[:1]
    negb = C.mod.g1_neg(base[0]).reshape(1, W)
    n = 4096
    bases = np.concatenate([base, negb] * (n // 2)).reshape(-1)
    sc = [rng.randrange(C.r)] * n
    for on in (True, False):
        lanes(on)
        assert not C.mod.msm_g1(bases, enc_many(sc, 4), threads=2).any()
    # equal points only: doublings in every bucket
    bases = np.concatenate([base] * n).reshape(-1)
    want = _mul(C, base.reshape(-1), [sum(sc) % C.r])[0]
    for on in (True, False):
        lanes(on)
        assert np.array_equal(C.mod.msm_g1(bases, enc_many(sc, 4), threads=2), want)


def test_witness_msms(lanes, C):
    m, n, start = C.mod, 6000, 11
    pa, pc = _pool(C, 500), _pool(C, 50)
    a = np.ascontiguousarray(pa[[rng.randrange(len(pa)) for _ in range(n)]]).reshape(-1)
    c = np.ascontiguousarray(pc[[rng.randrange(len(pc)) for _ in range(n - start)]]).reshape(-1)
    G2 = C.g2_enc(C.pe.G2)
    b2 = m.g2_mul(G2, enc_many([rng.randrange(1, C.r) for _ in range(40)], 4)).reshape(40, -1)
    b2 = np.ascontiguousarray(b2[[rng.randrange(40) for _ in range(n)]]).reshape(-1)
    w = [1] + [rng.choice([0, 0, 1, 1, rng.randrange(2, 1000), rng.randrange(C.r)]) for _ in range(n - 1)]
    Wb = enc_many(w, 4)
    want = [_naive_grouped(C, a, w), _naive_grouped(C, c, w[start:])]
    want_g2 = m.msm_g2(b2, Wb)
    for on in (True, False):
        lanes(on)
        g1, g2 = m.msm_witness(Wb, [(a, 0), (c, start)], [(b2, 0)], threads=2)
        assert np.array_equal(g1[0], want[0]) and np.array_equal(g1[1], want[1]), on
        assert np.array_equal(g2[0], want_g2), on


def _w2(C):
    return 4 * C.L  # 64-bit words of a G2 point


def _mul2(C, bases, sc):
    return C.mod.g2_mul(bases, enc_many([s % (1 << 256) for s in sc], 4)).reshape(-1, _w2(C))


def _sum2(C, rows):
    W = _w2(C)
    terms = np.asarray(rows).reshape(-1, W)
    if len(terms) == 0:
        return np.zeros(W, dtype=np.uint64)
    while len(terms) > 1:
        if len(terms) % 2:
            terms = np.concatenate([terms, np.zeros((1, W), dtype=np.uint64)])
        h = len(terms) // 2
        terms = C.mod.g2_add(terms[:h].reshape(-1), terms[h:].reshape(-1)).reshape(h, W)
    return terms[0]


def _naive_grouped2(C, bases, sc):
    W = _w2(C)
    groups = {}
    for row, s in zip(bases.reshape(-1, W), sc):
        k = row.tobytes()
        groups[k] = (row, (groups.get(k, (row, 0))[1] + s) % C.r)
    rows = np.stack([g[0] for g in groups.values()])
    return _sum2(C, _mul2(C, rows.reshape(-1), [g[1] for g in groups.values()]))


def _pool2(C, k):
    """k random G2 points, the negation of the first two, twice the third, infinity"""
    W = _w2(C)
    G2 = C.g2_enc(C.pe.G2)
    pts = _mul2(C, G2, [rng.randrange(1, C.r) for _ in range(k)])
    neg = [C.mod.g2_neg(pts[i]).reshape(W) for i in (0, 1)]
    dbl = C.mod.g2_add(pts[2], pts[2]).reshape(1, W)
    return np.concatenate([pts, np.stack(neg), dbl, np.zeros((1, W), dtype=np.uint64)])


@pytest.mark.parametrize("n,distinct", [(3000, 3000), (5000, 40), (2 ** 14 + 3, 300)])
@pytest.mark.parametrize("gls", [0, 2], ids=["plain", "gls"])
def test_g2_msm_vs_naive(lanes, C, n, distinct, gls):
    pool = _pool2(C, distinct)
    idx = [rng.randrange(len(pool)) for _ in range(n)]
    bases = np.ascontiguousarray(pool[idx]).reshape(-1)
    sc = _scalars(C, n)
    want = _naive_grouped2(C, bases, sc)
    prev = _core._set_gls(gls)
    try:
        got = {}
        for on in (True, False):
            lanes(on, True)  # G2's switch only
            assert _core.uses_simd29(C.name, True) == on
            got[on] = [C.mod.msm_g2(bases, enc_many(sc, 4), threads=t) for t in (1, 2)]
        for on in (True, False):
            for g in got[on]:
                assert np.array_equal(g, want), (n, distinct, gls, on)
    finally:
        _core._set_gls(prev)


def test_g2_msm_all_cancelling(lanes, C):
    W = _w2(C)
    base = _pool2(C, 3)[:1]
    negb = C.mod.g2_neg(base[0]).reshape(1, W)
    n = 4096
    bases = np.concatenate([base, negb] * (n // 2)).reshape(-1)
    sc = [rng.randrange(C.r)] * n
    for on in (True, False):
        lanes(on, True)
        assert not C.mod.msm_g2(bases, enc_many(sc, 4), threads=2).any()
    bases = np.concatenate([base] * n).reshape(-1)
    want = _mul2(C, base.reshape(-1), [sum(sc) % C.r])[0]
    for on in (True, False):
        lanes(on, True)
        assert np.array_equal(C.mod.msm_g2(bases, enc_many(sc, 4), threads=2), want)


@pytest.mark.parametrize("g1_on,g2_on", [(True, True), (True, False), (False, True)])
def test_witness_g2_jobs(lanes, C, g1_on, g2_on):
    # the witness MSM's G2 jobs: G1's lanes' template where G1's switch is on (G2's own switch decides at each
    # flush), else G2 alone on the lanes where G2's is on (batch_adder.hpp Simd29G2OnlyAdd: g1_on=False, g2_on=True)
    m, n = C.mod, 7000
    pool = _pool2(C, 200)
    b2 = np.ascontiguousarray(pool[[rng.randrange(len(pool)) for _ in range(n)]]).reshape(-1)
    b2b = np.ascontiguousarray(pool[[rng.randrange(len(pool)) for _ in range(n - 5)]]).reshape(-1)
    pa = _pool(C, 30)
    a = np.ascontiguousarray(pa[[rng.randrange(len(pa)) for _ in range(n)]]).reshape(-1)
    w = [1] + [rng.choice([0, 1, 2, C.r - 1, rng.randrange(C.r)]) for _ in range(n - 1)]
    Wb = enc_many(w, 4)
    want = [_naive_grouped2(C, b2, w), _naive_grouped2(C, b2b, w[5:])]
    lanes(g1_on, False)
    lanes(g2_on, True)
    g1, g2 = m.msm_witness(Wb, [(a, 0)], [(b2, 0), (b2b, 5)], threads=2)
    assert np.array_equal(g2[0], want[0]) and np.array_equal(g2[1], want[1]), (g1_on, g2_on)
    assert np.array_equal(g1[0], _naive_grouped(C, a, w))


def test_defaults_decided_at_first_use_and_kept():
    # a fresh process (no switch set yet): each switch reads its calibration's default, decided once at the
    # first ask (not at the module's load) and the same when asked again
    import json
    import subprocess
    import sys

    code = (
        "import json\n"
        "from snarkd.native import _core\n"
        "pairs = [(c, g2) for c in ('bn254', 'bls12_381') for g2 in (False, True)]\n"
        "first = [_core.uses_simd29(c, g2) for c, g2 in pairs]\n"
        "print(json.dumps([first, [_core.simd29_default(c, g2) for c, g2 in pairs],\n"
        "                  [_core.uses_simd29(c, g2) for c, g2 in pairs]]))\n"
    )
    first, default, again = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                      check=True).stdout)
    assert first == default == again
    assert not any(default) or _core.cpu_has_simd29()


def test_rule_by_cpu_model():
    # ff/simd29_rule.hpp: the measured model's row fixes each curve and group; every other CPU calibrates
    emr = ("GenuineIntel", 6, 207)  # Emerald Rapids (cpu-notes round 38)
    for g2 in (False, True):
        assert _core.simd29_rule(*emr, "bn254", g2) == "off"
        assert _core.simd29_rule(*emr, "bls12_381", g2) == "on"
        for other in (("AuthenticAMD", 25, 17), ("AuthenticAMD", 23, 49), ("GenuineIntel", 6, 143),
                      ("GenuineIntel", 6, 85), ("", 0, 0)):
            for c in NAMES:
                assert _core.simd29_rule(*other, c, g2) == "calibrate", (other, c, g2)
    with pytest.raises(ValueError):
        _core.simd29_rule(*emr, "secp256k1")
    vendor, family, model = _core.cpu_model()
    assert isinstance(vendor, str) and family >= 0 and model >= 0


def test_defaults_follow_the_rule_in_fresh_processes():
    # where this CPU's row fixes the choice, every fresh process's default is the rule's (no calibration runs)
    import json
    import subprocess
    import sys

    if not _core.cpu_has_simd29():
        pytest.skip("no AVX2 + BMI2/ADX")
    pairs = [(c, g2) for c in ("bn254", "bls12_381") for g2 in (False, True)]
    rule = [_core.simd29_rule(*_core.cpu_model(), c, g2) for c, g2 in pairs]
    if all(r == "calibrate" for r in rule):
        pytest.skip(f"no row for this CPU {_core.cpu_model()}: its calibration decides")
    code = (
        "import json\n"
        "from snarkd.native import _core\n"
        f"print(json.dumps([_core.simd29_default(c, g2) for c, g2 in {pairs!r}]))\n"
    )
    for _ in range(4):
        got = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True).stdout)
        for r, d in zip(rule, got):
            if r != "calibrate":
                assert d == (r == "on"), (rule, got)


def test_g2_switch_and_default():
    prev = {(c, g2): _core._set_simd29(True, c, g2) for c in NAMES for g2 in (False, True)}
    try:
        assert _core._set_simd29(False, "bls12_381", True) == _core.cpu_has_simd29()
        assert not _core.uses_simd29("bls12_381", True) and _core.uses_simd29("bls12_381") == _core.cpu_has_simd29()
        assert _core.uses_simd29("bn254", True) == _core.cpu_has_simd29()
        _core._set_simd29(False, None, False)  # both curves' G1 only
        assert not _core.uses_simd29("bn254") and _core.uses_simd29("bn254", True) == _core.cpu_has_simd29()
        _core._set_simd29(False)
        assert not any(_core.uses_simd29(c, g2) for c in NAMES for g2 in (False, True))
    finally:
        for (c, g2), v in prev.items():
            _core._set_simd29(v, c, g2)
    for c in NAMES:
        assert not _core.simd29_default(c, True) or _core.cpu_has_simd29()


def test_generated_asm_is_current():
    # ff/simd29_asm.hpp (BLS12-381's 14-limb lane product) is ff/gen_simd29_asm.py's output, byte for byte
    import pathlib
    import subprocess
    import sys

    ff = pathlib.Path(__file__).resolve().parents[2] / "src" / "snarkd" / "native" / "ff"
    out = subprocess.run([sys.executable, str(ff / "gen_simd29_asm.py")], capture_output=True, text=True, check=True)
    assert out.stdout == (ff / "simd29_asm.hpp").read_text()
