"""Field arithmetic of all four fields against Python ints."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import CURVES, dec_many, enc_many

FIELDS = []
for c in CURVES:
    FIELDS.append((c.name + ".fr", c.mod, "fr", c.r, 4))
    FIELDS.append((c.name + ".fq", c.mod, "fq", c.q, c.L))


def _elems(p):
    edge = st.sampled_from([0, 1, 2, p - 1, p - 2, (p - 1) // 2, 1 << 64, (1 << 128) - 1])
    return st.lists(st.one_of(edge, st.integers(0, p - 1)), min_size=1, max_size=40)


def _run(mod, pfx, p, L, xs, ys):
    R = 1 << (64 * L)
    f = lambda name: getattr(mod, f"{pfx}_{name}")  # noqa: E731
    xm = f("to_mont")(enc_many(xs, L))
    ym = f("to_mont")(enc_many(ys, L))
    assert dec_many(xm, L) == [x * R % p for x in xs]
    assert dec_many(f("from_mont")(xm), L) == xs
    assert dec_many(f("from_mont")(f("mul")(xm, ym)), L) == [x * y % p for x, y in zip(xs, ys)]
    assert dec_many(f("from_mont")(f("add")(xm, ym)), L) == [(x + y) % p for x, y in zip(xs, ys)]
    assert dec_many(f("from_mont")(f("sub")(xm, ym)), L) == [(x - y) % p for x, y in zip(xs, ys)]
    inv = dec_many(f("from_mont")(f("inv")(xm)), L)
    assert inv == [pow(x, -1, p) if x else 0 for x in xs]


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_field_ops(name, mod, pfx, p, L):
    @settings(max_examples=25, deadline=None)
    @given(st.data())
    def inner(data):
        xs = data.draw(_elems(p))
        ys = data.draw(st.lists(st.integers(0, p - 1), min_size=len(xs), max_size=len(xs)))
        _run(mod, pfx, p, L, xs, ys)

    inner()


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_field_edges(name, mod, pfx, p, L):
    vals = [0, 1, 2, p - 1, p - 2]
    xs = [a for a in vals for _ in vals]
    ys = [b for _ in vals for b in vals]
    _run(mod, pfx, p, L, xs, ys)


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_inverse_of_sparse_limbs(name, mod, pfx, p, L):
    """The inversion runs on the stored (Montgomery) integer, and its divsteps take runs of
    zero bits in one shift and up to six steps in one addition: stored values with long zero
    runs, single bits, all-ones runs and near-p values, inverted and checked against Python."""
    R = 1 << (64 * L)
    stored = ([1, 2, 3, 5, 7, 63, 64, 65, (1 << 6) - 1, (1 << 12) + 1, p - 1, p - 2, p - 3, (p - 1) // 2, (p + 1) // 2]
              + [1 << k for k in range(0, p.bit_length() - 1, 7)]
              + [(1 << k) - 1 for k in range(2, p.bit_length() - 1, 11)]
              + [(1 << k) + 1 for k in (61, 62, 63, 64, 124, 186)])
    stored = [v for v in stored if 0 < v < p]
    f = lambda name: getattr(mod, f"{pfx}_{name}")  # noqa: E731
    inv_stored = dec_many(f("inv")(enc_many(stored, L)), L)  # stored v is the element v / R
    assert inv_stored == [pow(v * pow(R, -1, p), -1, p) * R % p for v in stored]


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_to_mont_reduces_large_plain(name, mod, pfx, p, L):
    xs = [p, p + 5, (1 << (64 * L)) - 1]
    got = dec_many(getattr(mod, f"{pfx}_from_mont")(getattr(mod, f"{pfx}_to_mont")(enc_many(xs, L))), L)
    assert got == [x % p for x in xs]


def test_constants(curve):
    m = curve.mod
    assert m.FQ_MODULUS == curve.q and m.FR_MODULUS == curve.r
    assert m.FQ_LIMBS == curve.L
    assert m.TWO_ADICITY == {"bn254": 28, "bls12_381": 32}[curve.name]


def test_buffer_kinds_and_errors(curve):
    m = curve.mod
    xs = [3, 5, curve.r - 1]
    a = enc_many(xs, 4)
    mont = m.fr_to_mont(a)
    # bytes, memoryview, uint8 view and an only-4-byte-aligned view all work
    raw = b"\0" * 4 + mont.tobytes()
    unaligned = np.frombuffer(raw, dtype=np.uint32, offset=4)
    for buf in (mont.tobytes(), memoryview(mont.tobytes()), mont.view(np.uint8), unaligned):
        assert dec_many(m.fr_from_mont(buf), 4) == xs
    with pytest.raises(ValueError, match="a"):
        m.fr_from_mont(b"\0" * 33)
    with pytest.raises(ValueError, match="b"):
        m.fr_mul(mont, mont[:2])
    with pytest.raises(ValueError):
        m.fr_from_mont(mont[:, ::2])  # not contiguous


def _lazy_field(p, L):
    """Whether the field has the lazily reduced products (4p < R)."""
    return 4 * p < 1 << (64 * L)


def _sqr_inputs(p):
    edge = [0, 1, 2, 3, p - 1, p - 2, p, p + 1, 2 * p - 1, 2 * p - 2, (p - 1) // 2, (p + 1) // 2,
            1 << 64, (1 << 128) - 1, (1 << 192) + 5, (1 << 63) - 1, ((1 << 64) - 1) << 64]
    # the words of 6-limb values too (BLS12-381's Fq: sqr_wide6's rows and its doubling pass)
    edge += [x for k in (256, 320) for x in ((1 << k) - 1, 1 << k, ((1 << 64) - 1) << k)]
    ks = (1, 64, 128, 192, 256, 320)
    return edge + [p - (1 << k) for k in ks if 1 << k < p] + [2 * p - (1 << k) for k in ks if 1 << k < p]


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_square_matches_product(name, mod, pfx, p, L):
    """The dedicated squaring (with ADX, 4 limbs: mont_sqr4; 6 limbs: sqr_wide6 + redc6) against Python and against the
    product a * a, byte for byte, on canonical edges and random values (hypothesis)."""
    f = lambda n: getattr(mod, f"{pfx}_{n}")  # noqa: E731
    R = 1 << (64 * L)
    Rinv = pow(R, -1, p)

    def check(xs):
        a = enc_many(xs, L)
        sq = f("sqr")(a)
        assert dec_many(sq, L) == [x * x * Rinv % p for x in xs]
        assert np.array_equal(sq, f("mul")(a, a))

    check([x for x in _sqr_inputs(p) if x < p])

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(0, p - 1), min_size=1, max_size=64))
    def inner(xs):
        check(xs)

    inner()


@pytest.mark.parametrize("name,mod,pfx,p,L", FIELDS, ids=[f[0] for f in FIELDS])
def test_lazy_square_and_product_bounds(name, mod, pfx, p, L):
    """The lazily reduced forms take stored values below 2p (not canonical) and return a value
    below 2p congruent to a^2/R (a*b/R): edges near p and 2p, the largest words, random values."""
    f = lambda n: getattr(mod, f"{pfx}_{n}")  # noqa: E731
    if not _lazy_field(p, L):
        with pytest.raises(ValueError):
            f("sqr_lazy")(enc_many([1], L))
        return
    R = 1 << (64 * L)
    Rinv = pow(R, -1, p)

    def check(xs, ys):
        got = dec_many(f("sqr_lazy")(enc_many(xs, L)), L)
        assert all(g < 2 * p for g in got)
        assert [g % p for g in got] == [x * x * Rinv % p for x in xs]
        prod = dec_many(f("mul_lazy")(enc_many(xs, L), enc_many(ys, L)), L)
        assert all(g < 2 * p for g in prod)
        assert [g % p for g in prod] == [x * y * Rinv % p for x, y in zip(xs, ys)]

    edge = [x for x in _sqr_inputs(p) if x < 2 * p]
    check(edge, list(reversed(edge)))

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 2 * p - 1), st.integers(0, 2 * p - 1)), min_size=1, max_size=64))
    def inner(pairs):
        check([a for a, _ in pairs], [b for _, b in pairs])

    inner()


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("alias", [0, 1, 2])
@pytest.mark.parametrize("conj", [False, True])
def test_fq2_product(curve, alias, conj):
    """Fq2's product a b and a conj(b) (u^2 = -1; BN254's 4-limb form sums two products per
    component in one reduction, with 2p - b1 for the negated term) against Python integers,
    every pair of edge values on every component, output over a fresh value and over either
    operand, canonical as stored."""
    p, L = curve.q, curve.L
    edges = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, (1 << 64) - 1, 1 << 64, (1 << (64 * (L - 1))) - 1]
    rng = random.Random(5)
    vals = edges + [rng.randrange(p) for _ in range(6)]
    pairs = [(x, y) for x in vals for y in vals]
    xs = [pairs[k][0] for k in range(len(pairs))]
    ys = [pairs[(7 * k + 3) % len(pairs)][1] for k in range(len(pairs))]
    a = list(zip(xs, ys))  # a0 + a1 u
    b = [(pairs[(11 * k + 5) % len(pairs)][0], pairs[k][1]) for k in range(len(pairs))]
    mod = curve.mod

    def enc2(v):
        c0 = mod.fq_to_mont(enc_many([x for x, _ in v], L))
        c1 = mod.fq_to_mont(enc_many([y for _, y in v], L))
        return np.ascontiguousarray(np.hstack([c0, c1]))

    out = np.asarray(mod.fq2_mul(enc2(a), enc2(b), alias=alias, conj=conj)).reshape(-1, 2 * L)
    if conj:
        b = [(b0, -b1) for b0, b1 in b]
    assert all(v < p for v in dec_many(np.ascontiguousarray(out), L))  # canonical as stored
    got0 = dec_many(mod.fq_from_mont(np.ascontiguousarray(out[:, :L])), L)
    got1 = dec_many(mod.fq_from_mont(np.ascontiguousarray(out[:, L:])), L)
    want0 = [(a0 * b0 - a1 * b1) % p for (a0, a1), (b0, b1) in zip(a, b)]
    want1 = [(a0 * b1 + a1 * b0) % p for (a0, a1), (b0, b1) in zip(a, b)]
    assert got0 == want0
    assert got1 == want1


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("conj", [False, True])
def test_fq2_product_montgomery_words(curve, conj):
    """Fq2's a b and a conj(b) on Montgomery words drawn directly (hypothesis): edge words (0, 1,
    p - 1, limb boundaries) reach the product kernels as such, not as the images of edge values.
    On 6 limbs (BLS12-381) the components are sums of two products in registers
    (adx::mont_fp2_sum6, cpu-notes round 22), where b1 = 0 gives its largest operand, 2p - b1 = 2p.
    Word w stands for w / R, so the product's words are (a0 b0 -+ a1 b1) / R and (a0 b1 +- a1 b0) / R."""
    p, L = curve.q, curve.L
    r_inv = pow(1 << (64 * L), -1, p)
    edge = st.sampled_from([0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, (1 << 64) - 1, 1 << 64,
                            (1 << (64 * (L - 1))) - 1, 1 << (64 * (L - 1)), p - (1 << 64)])
    word = st.one_of(edge, st.integers(0, p - 1))
    mod = curve.mod

    def enc2(rows):
        c0 = np.asarray(enc_many([x for x, _ in rows], L)).reshape(-1, L)
        c1 = np.asarray(enc_many([y for _, y in rows], L)).reshape(-1, L)
        return np.ascontiguousarray(np.hstack([c0, c1]))

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(word, word, word, word), min_size=1, max_size=48), st.sampled_from([0, 1, 2]))
    def inner(rows, alias):
        a = [(r[0], r[1]) for r in rows]
        b = [(r[2], r[3]) for r in rows]
        out = np.asarray(mod.fq2_mul(enc2(a), enc2(b), alias=alias, conj=conj)).reshape(-1, 2 * L)
        got0 = dec_many(np.ascontiguousarray(out[:, :L]), L)
        got1 = dec_many(np.ascontiguousarray(out[:, L:]), L)
        s = -1 if conj else 1
        assert got0 == [(a0 * b0 - s * a1 * b1) * r_inv % p for (a0, a1), (b0, b1) in zip(a, b)]
        assert got1 == [(s * a0 * b1 + a1 * b0) * r_inv % p for (a0, a1), (b0, b1) in zip(a, b)]

    inner()


def test_generated_mont_adx_is_current():
    # ff/mont_adx.hpp (the BMI2/ADX products and the lazy NTT butterflies) is ff/gen_mont_adx.py's output, byte for
    # byte: a hand edit of the header (round 31's dif_lazy_rev4 was one) would be lost at the next generation
    import pathlib
    import subprocess
    import sys

    ff = pathlib.Path(__file__).resolve().parents[2] / "src" / "snarkd" / "native" / "ff"
    out = subprocess.run([sys.executable, str(ff / "gen_mont_adx.py")], capture_output=True, text=True, check=True)
    assert out.stdout == (ff / "mont_adx.hpp").read_text()
