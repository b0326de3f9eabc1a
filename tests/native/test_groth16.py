"""spmv_ab / h_from_coset / fr_mul_pointwise against Python references."""
import random
import struct

import numpy as np
import pytest

from helpers import dec_many, enc_many

rng = random.Random(5)


def _section(entries, r):
    out = [struct.pack("<I", len(entries))]
    for mat, con, sig, coef in entries:
        out.append(struct.pack("<III", mat, con, sig) + (coef * (1 << 512) % r).to_bytes(32, "little"))
    return b"".join(out)


def _random_case(curve, domain=16, nwit=20, count=120):
    r = curve.r
    w = [1] + [rng.randrange(r) for _ in range(nwit - 1)]
    ents = []
    for _ in range(count):
        coef = rng.choice([1, r - 1, 2, rng.randrange(r)])
        ents.append((rng.randrange(2), rng.randrange(domain), rng.randrange(nwit), coef))
    return w, ents


def test_spmv_ab(curve):
    r = curve.r
    domain = 16
    w, ents = _random_case(curve, domain)
    sec = _section(ents, r)
    wit = enc_many(w, 4).tobytes()
    want = [[0] * domain, [0] * domain]
    for mat, con, sig, coef in ents:
        want[mat][con] = (want[mat][con] + coef * w[sig]) % r
    for t in (1, 2, 5):
        a, b = (np.asarray(v) for v in curve.mod.spmv_ab(sec, wit, domain, threads=t))  # FrVectors: numpy views
        assert a.shape == (domain, 4) and a.dtype == np.uint64
        assert [curve.ur(x) for x in dec_many(a, 4)] == want[0]
        assert [curve.ur(x) for x in dec_many(b, 4)] == want[1]
    # trailing bytes are tolerated; numpy uint8 view of a bigger file works
    blob = np.frombuffer(b"xxxx" + sec + b"tail", dtype=np.uint8)
    a2 = np.asarray(curve.mod.spmv_ab(blob[4:4 + len(sec)], np.frombuffer(wit, dtype=np.uint8), domain)[0])
    assert [curve.ur(x) for x in dec_many(a2, 4)] == want[0]
    # empty section
    a0, b0 = (np.asarray(v) for v in curve.mod.spmv_ab(struct.pack("<I", 0), wit, domain))
    assert not a0.any() and not b0.any()


def test_spmv_errors(curve):
    r = curve.r
    w, ents = _random_case(curve, 16, 20, 5)
    wit = enc_many(w, 4).tobytes()
    m = curve.mod
    bad = list(ents)
    bad[3] = (2, 0, 0, 1)
    with pytest.raises(ValueError, match="entry 3: matrix 2"):
        m.spmv_ab(_section(bad, r), wit, 16)
    bad = list(ents)
    bad[1] = (0, 16, 0, 1)
    with pytest.raises(ValueError, match="entry 1: constraint 16"):
        m.spmv_ab(_section(bad, r), wit, 16)
    bad = list(ents)
    bad[4] = (1, 0, 20, 1)
    with pytest.raises(ValueError, match="entry 4: signal 20"):
        m.spmv_ab(_section(bad, r), wit, 16)
    with pytest.raises(ValueError, match="entries need"):
        m.spmv_ab(_section(ents, r)[:-1], wit, 16)
    with pytest.raises(ValueError, match="coefs_section"):
        m.spmv_ab(b"\1\0", wit, 16)
    with pytest.raises(ValueError, match="witness"):
        m.spmv_ab(_section(ents, r), wit[:-1], 16)


def _raw_section(entries):
    """Like _section with each value given as the stored 32-byte integer (may be >= r)."""
    return b"".join([struct.pack("<I", len(entries))] +
                    [struct.pack("<III", m, c, s) + v.to_bytes(32, "little") for m, c, s, v in entries])


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_spmv_ab_classes(curve, order):
    """Enough entries for one index chunk per thread (>= 4096 each): coefficients 0, +-1,
    +-2^j (j < 8: the doubling classes), 2^8 and -2^8 (products), large random ones, stored
    values >= r (reduced first), repeated (matrix, constraint, signal) triples, witness values
    r - 1, 0, r and 2^256 - 1 (reduced), a constraint with 3000 entries where the chunks meet;
    entries in snarkjs's constraint order (split by index ranges) or shuffled (rows per thread)."""
    r = curve.r
    rng2 = random.Random(17)
    domain, nwit = 256, 300
    w = [1, r - 1, 0, r, (1 << 256) - 1] + [rng2.randrange(r) for _ in range(nwit - 5)]
    coefs = [0, 1, r - 1, 256, r - 256] + [c for j in range(1, 8) for c in (1 << j, r - (1 << j))]
    ents = []
    for con in range(domain):
        n = 3000 if con == 128 else rng2.randrange(0, 60)
        for _ in range(n):
            coef = rng2.choice(coefs) if rng2.random() < 0.9 else rng2.randrange(r)
            ents.append((rng2.randrange(2), con, rng2.randrange(nwit), coef))
    ents += [ents[7], ents[7], ents[100]]  # repeats (out of constraint order: appended last)
    if order == "sorted":
        ents.sort(key=lambda e: e[1])
    else:
        rng2.shuffle(ents)
    stored = [(m, c, s, coef * (1 << 512) % r) for m, c, s, coef in ents]
    for k in range(0, len(stored), 97):  # non-canonical stored values: v + r < 2^256
        m, c, s, v = stored[k]
        if v + r < (1 << 256):
            stored[k] = (m, c, s, v + r)
    sec = _raw_section(stored)
    wit = enc_many([x % (1 << 256) for x in w], 4).tobytes()
    want = [[0] * domain, [0] * domain]
    for m, c, s, coef in ents:
        want[m][c] = (want[m][c] + coef * w[s]) % r
    assert len(ents) > 2 * 4096
    for t in (1, 2, 3):
        a, b = (np.asarray(v) for v in curve.mod.spmv_ab(sec, wit, domain, threads=t))
        assert [curve.ur(x) for x in dec_many(a, 4)] == want[0]
        assert [curve.ur(x) for x in dec_many(b, 4)] == want[1]
        assert all(x < r for x in dec_many(a, 4) + dec_many(b, 4))  # canonical as stored
    # the first bad entry in file order is named, also when a later chunk has one too
    bad = list(stored)
    bad[len(bad) - 5] = (0, domain, 0, 1)
    bad[len(bad) // 3] = (1, 0, nwit, 1)
    with pytest.raises(ValueError, match=f"entry {len(bad) // 3}: signal {nwit}"):
        curve.mod.spmv_ab(_raw_section(bad), wit, domain, threads=2)


def test_h_and_pointwise(curve):
    r, m = curve.r, curve.mod
    n = 64
    a, b, c = ([rng.randrange(r) for _ in range(n)] for _ in range(3))
    a[0], b[0], c[0] = 0, r - 1, 1
    A, B, C = (enc_many([curve.mr(x) for x in v], 4) for v in (a, b, c))
    h = m.h_from_coset(A, B, C, threads=2)
    assert h.shape == (n, 4)
    assert dec_many(h, 4) == [(x * y - z) % r for x, y, z in zip(a, b, c)]
    p = m.fr_mul_pointwise(A, B)
    assert [curve.ur(x) for x in dec_many(p, 4)] == [x * y % r for x, y in zip(a, b)]
    with pytest.raises(ValueError, match="c"):
        m.h_from_coset(A, B, C[:-1])


def test_the_steps_domain_vectors(curve):
    """spmv_ab/qap_h hand FrVectors along (numpy-free; numpy views them without a copy); qap_h(release=True), a
    one-shot proof's, frees a and b once read and gives the same H."""
    r, m, domain = curve.r, curve.mod, 16
    w, ents = _random_case(curve, domain)
    sec, wit = _section(ents, r), enc_many(w, 4).tobytes()
    a, b = m.spmv_ab(sec, wit, domain)
    assert type(a).__name__ == "FrVector" and len(a) == domain and a.nbytes == 32 * domain
    keep, _ = m.qap_h(a, b)
    h, _ = m.qap_h(a, b, release=True)
    assert len(a) == len(b) == 0 and np.array_equal(np.asarray(h), np.asarray(keep))
    with pytest.raises(ValueError, match="release"):
        m.qap_h(np.asarray(keep), np.asarray(keep), release=True)
