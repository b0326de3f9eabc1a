"""Batch verification (snarkd.verifier.batch) against the single verifier and snarkjs.

The proofs are made in process by snarkd's CPU prover (fresh blinding each call, so
every proof is distinct) on the shared `chain` fixture key, for two witnesses (two
different public lists). Every expected answer comes from the single verifier
(`snarkd.verifier.verify`, itself held to snarkjs by tests/verifier and tests/fuzz) and,
on a sample, from `snarkjs groth16 verify` itself.
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle
import vhelpers as h
from snarkd.errors import InputError
from snarkd.prover.oneshot import prove_files
from snarkd.verifier import verify
from snarkd.verifier.batch import verify_batch



class Pool:
    """Valid (public, proof) pairs of one key, and the makers of each kind of bad one."""

    def __init__(self, curve: str, vk: dict, good: list, other_key: tuple, other_witness: list):
        self.curve, self.vk, self.good = curve, vk, good
        self.other_key = other_key          # (public, proof) valid under another key
        self.other_witness = other_witness  # proofs of a second witness (another public list)

    def item(self, i: int):
        return copy.deepcopy(self.good[i % len(self.good)])

    def bad(self, kind: str, i: int, rng: random.Random):
        """One invalid (public, proof) of the given kind."""
        c = h.CURVE[self.curve]
        public, proof = self.item(i)
        donor = self.item(i + 1)[1]
        if kind == "A":  # another proof's A: a subgroup point, the equation fails
            proof["pi_a"] = donor["pi_a"]
        elif kind == "B":
            proof["pi_b"] = donor["pi_b"]
        elif kind == "C":
            proof["pi_c"] = donor["pi_c"]
        elif kind == "public":
            public[0] = str((int(public[0]) + 1) % c.r)
        elif kind == "public_ge_r":
            public[1] = str(int(public[1]) + c.r)
        elif kind == "swapped":  # a proof of the second witness with the first witness's publics
            public = self.item(i)[0]
            proof = copy.deepcopy(self.other_witness[i % len(self.other_witness)][1])
        elif kind == "other_key":
            public, proof = copy.deepcopy(self.other_key)
        elif kind == "off_curve":
            proof["pi_a"][1] = str((int(proof["pi_a"][1]) + 1) % c.q)
        elif kind == "off_curve_b":
            proof["pi_b"][1][0] = str((int(proof["pi_b"][1][0]) + 1) % c.q)
        elif kind == "non_canonical":  # x + q: snarkjs would read x; snarkd calls it invalid
            proof["pi_c"][0] = str(int(proof["pi_c"][0]) + c.q)
        elif kind == "non_subgroup_b":  # a point of the twist outside G2
            x, y = h.random_curve_g2(self.curve, rng)
            proof["pi_b"] = [[str(x[0]), str(x[1])], [str(y[0]), str(y[1])], ["1", "0"]]
        elif kind == "non_subgroup_a":  # BLS12-381: a curve point outside G1 (BN254's G1 is the whole curve)
            x, y = h.random_curve_g1(self.curve, rng)
            proof["pi_a"] = [str(x), str(y), "1"]
        elif kind == "infinity_a":
            proof["pi_a"] = ["0", "1", "0"]
        else:
            raise AssertionError(kind)
        return public, proof


KINDS = ["A", "B", "C", "public", "public_ge_r", "swapped", "other_key", "off_curve", "off_curve_b",
         "non_canonical", "non_subgroup_b", "non_subgroup_a", "infinity_a"]


@pytest.fixture(scope="module")
def pool(curve, chain_circuit):
    import cases

    vk = json.loads(chain_circuit.vk.read_text())
    good = []
    for _ in range(8):
        p = prove_files(chain_circuit.zkey, chain_circuit.wtns)
        good.append((p.public, p.proof))
    second = chain_circuit.circuit.witness({"k": 5, "x": 7})
    other_witness = []
    for _ in range(3):
        p = prove_files(chain_circuit.zkey, second)
        other_witness.append((p.public, p.proof))
    assert other_witness[0][0] != good[0][0]
    other = cases.build_case("chain_exact", curve)  # another key with the same public count
    p = prove_files(other.zkey, other.wtns)
    return Pool(curve, vk, good, (p.public, p.proof), other_witness)


def _single(vk, items) -> list[int]:
    return [i for i, (pub, proof) in enumerate(items) if not verify(vk, pub, proof)]


def test_valid_batches_pass(pool):
    items = [pool.item(i) for i in range(8)] + [copy.deepcopy(x) for x in pool.other_witness]
    result = verify_batch(pool.vk, items)
    assert result.valid and result.bad == [] and result.n == 11
    assert result.checks == 1  # one combination, no bisection
    assert verify_batch(pool.vk, []).valid
    assert verify_batch(pool.vk, items[:1]).valid


def test_each_kind_of_bad_proof_is_named(pool):
    rng = random.Random(27)
    items, expected = [], []
    for k, kind in enumerate(KINDS):
        items.append(pool.item(k))
        items.append(pool.bad(kind, k, rng))
        expected.append(2 * k + 1)
    assert _single(pool.vk, items) == expected  # the single verifier agrees every one is invalid
    result = verify_batch(pool.vk, items)
    assert result.bad == expected


@pytest.mark.parametrize("kind", KINDS)
def test_one_bad_among_good(pool, kind):
    rng = random.Random(kind)
    items = [pool.item(i) for i in range(7)]
    items.insert(5, pool.bad(kind, 5, rng))
    assert verify_batch(pool.vk, items).bad == [5]


def test_all_bad(pool):
    rng = random.Random(3)
    items = [pool.bad(kind, i, rng) for i, kind in enumerate(["A", "B", "C", "public", "swapped"])]
    assert verify_batch(pool.vk, items).bad == [0, 1, 2, 3, 4]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bad_indices_any_pattern(pool, data):
    n = data.draw(st.integers(1, 20), label="n")
    bad = data.draw(st.sets(st.integers(0, n - 1)), label="bad")
    kinds = ["A", "B", "C", "public", "swapped", "other_key"]
    rng = random.Random(n)
    items = [pool.bad(data.draw(st.sampled_from(kinds)), i, rng) if i in bad else pool.item(i) for i in range(n)]
    assert verify_batch(pool.vk, items).bad == sorted(bad)


def test_bad_input_is_input_error_naming_the_file(pool):
    items = [pool.item(i) for i in range(3)]
    names = [(f"pub{i}.json", f"proof{i}.json") for i in range(3)]
    broken = copy.deepcopy(items)
    del broken[1][1]["pi_c"]
    with pytest.raises(InputError, match=r"proof1\.json"):
        verify_batch(pool.vk, broken, names=names)
    short = copy.deepcopy(items)
    short[2] = (short[2][0][:1], short[2][1])
    with pytest.raises(InputError, match=r"pub2\.json: 1 public values, but the key expects 2"):
        verify_batch(pool.vk, short, names=names)
    word = copy.deepcopy(items)
    word[0][1]["pi_a"][0] = "twelve"
    with pytest.raises(InputError, match=r"proof0\.json\.pi_a"):
        verify_batch(pool.vk, word, names=names)
    other_curve = copy.deepcopy(items)
    other_curve[0][1]["curve"] = "bls12381" if pool.curve == "bn128" else "bn128"
    with pytest.raises(InputError, match="does not match"):
        verify_batch(pool.vk, other_curve, names=names)
    bad_vk = copy.deepcopy(pool.vk)
    bad_vk["vk_alpha_1"][1] = "5"
    with pytest.raises(InputError, match=r"vk\.vk_alpha_1"):
        verify_batch(bad_vk, items)


@pytest.mark.slow
def test_snarkjs_agrees_on_a_sample(pool, tmp_path):
    rng = random.Random(5)
    items = [pool.item(0), pool.bad("C", 1, rng), pool.bad("swapped", 2, rng), pool.item(3),
             pool.bad("other_key", 4, rng)]
    vk_path = tmp_path / "vk.json"
    vk_path.write_text(json.dumps(pool.vk))
    snarkjs_bad = []
    for i, (pub, proof) in enumerate(items):
        (tmp_path / f"pub{i}.json").write_text(json.dumps(pub))
        (tmp_path / f"proof{i}.json").write_text(json.dumps(proof))
        if not oracle.snarkjs_verify(vk_path, tmp_path / f"pub{i}.json", tmp_path / f"proof{i}.json"):
            snarkjs_bad.append(i)
    assert snarkjs_bad == [1, 2, 4]
    assert verify_batch(pool.vk, items).bad == snarkjs_bad


def _jacobian(c, x: int, y: int, z: int):
    return [str(x * z * z % c.q), str(y * z * z * z % c.q), str(z)]


def test_encodings_agree_with_the_single_verifier(pool):
    """Every way snarkjs JSON may spell a proof: the native text path and the fallback to the
    single verifier give `verify`'s answer for each."""
    c = h.CURVE[pool.curve]
    public, proof = pool.item(0)
    variants = []

    def variant(fn):
        pub, pr = copy.deepcopy(public), copy.deepcopy(proof)
        fn(pub, pr)
        variants.append((pub, pr))

    variant(lambda pub, pr: None)
    variant(lambda pub, pr: pr["pi_a"].__setitem__(0, hex(int(pr["pi_a"][0]))))        # 0x hex: fallback, valid
    variant(lambda pub, pr: pub.__setitem__(1, int(pub[1])) if int(pub[1]) < 2**53 else None)  # JSON number
    variant(lambda pub, pr: pr.__setitem__("pi_a", pr["pi_a"][:2]))                     # [x, y]: z = 1
    variant(lambda pub, pr: pr["pi_c"].__setitem__(0, "000" + pr["pi_c"][0]))          # leading zeros
    variant(lambda pub, pr: pr["pi_c"].__setitem__(0, "0" * 300 + pr["pi_c"][0]))      # long: fallback
    variant(lambda pub, pr: pr.__setitem__("pi_a", _jacobian(c, int(pr["pi_a"][0]), int(pr["pi_a"][1]), 12345)))
    variant(lambda pub, pr: pr["pi_b"].__setitem__(1, [pr["pi_b"][1][0], str(int(pr["pi_b"][1][1]) + c.q)]))
    variant(lambda pub, pr: pr["pi_a"].__setitem__(2, "0"))                               # A at infinity
    variant(lambda pub, pr: pr.__setitem__("pi_c", ["0", "0", "1"]))                      # (0, 0)
    variant(lambda pub, pr: pub.__setitem__(0, str(int(pub[0]) + c.r)))                  # public >= r
    variant(lambda pub, pr: pub.__setitem__(0, str(c.r - 1)))                             # in range, wrong
    variant(lambda pub, pr: pr["pi_a"].__setitem__(0, str(int(pr["pi_a"][0]) + 2**256 * c.q)))  # huge
    expected = _single(pool.vk, variants)
    assert expected == [7, 8, 9, 10, 11, 12]
    assert verify_batch(pool.vk, variants).bad == expected


def test_large_batch_bisection_reuses_chunks(pool):
    """Over a few chunks of pairs: bad proofs at chunk edges are named, and the sub-checks
    (which reuse cached Miller-loop chunks) agree with fresh ones."""
    rng = random.Random(300)
    n = 300
    bad = [0, 63, 64, 150, 299]
    items = [pool.bad("C", i, rng) if i in bad else pool.item(i) for i in range(n)]
    result = verify_batch(pool.vk, items)
    assert result.bad == bad
    assert result.checks < 8 * len(bad) * 9  # bisection, not one check per proof


def test_native_check_any_index_list(pool):
    """ProofBatch.check on arbitrary (overlapping, unaligned) index lists: the chunk cache is
    keyed by the exact lists, so answers never depend on what was checked before."""
    from array import array

    import secrets
    from snarkd.verifier import groth16
    from snarkd.verifier.batch import _text_line

    rng = random.Random(7)
    items = [pool.item(i) for i in range(150)]
    items[70] = pool.bad("A", 70, rng)
    key = groth16.read_key(pool.vk)
    pvk = key.prepared()
    text = "\n".join(_text_line(p, q, key.n_public) for p, q in items).encode()
    batch = pvk.batch_text(text, len(items), secrets.token_bytes(16 * len(items)))
    assert list(batch.status) == [0] * len(items)
    for lo, hi in [(0, 150), (0, 64), (64, 128), (1, 65), (70, 71), (0, 70), (71, 150), (6, 134), (0, 64)]:
        idx = array("I", range(lo, hi))
        assert batch.check(pvk, idx) == (not lo <= 70 < hi), (lo, hi)
    odd = array("I", [149, 3, 70, 5])  # any order, not contiguous
    assert not batch.check(pvk, odd)
    assert batch.check(pvk, array("I", [149, 3, 5]))
    with pytest.raises(IndexError):
        batch.check(pvk, array("I", [150]))


@pytest.mark.parametrize("name", ["bn128", "bls12381"])
def test_glv_coefficients_are_2_128_distinct_values(name):
    """The batch's coefficients are r = a + b*lambda mod r with a, b < 2^64 (two 64-bit halves of
    one 128-bit random value). They are 2^128 distinct values, so the soundness bound is 2^-128,
    iff no nonzero (x, y) with |x|, |y| < 2^64 has x + y*lambda = 0 mod r: the lattice of those
    vectors (Gauss-reduced here) has no vector that short. (That the native beta matches lambda,
    phi(P) = [lambda] P, is what makes every valid batch above pass.)"""
    from snarkd.native import _pairing

    c = h.CURVE[name]
    lam = int.from_bytes(getattr(_pairing, c.native).GLV_LAMBDA, "little")
    assert 0 < lam < c.r and (lam * lam + lam + 1) % c.r == 0  # a cube root of unity mod r
    v1, v2 = (c.r, 0), (lam, 1)
    norm = lambda v: v[0] * v[0] + v[1] * v[1]  # noqa: E731
    while True:  # Gauss (Lagrange) reduction
        if norm(v1) < norm(v2):
            v1, v2 = v2, v1
        m = (2 * (v1[0] * v2[0] + v1[1] * v2[1]) + norm(v2)) // (2 * norm(v2))
        if m == 0:
            break
        v1 = (v1[0] - m * v2[0], v1[1] - m * v2[1])
    # v2 is a shortest nonzero lattice vector; any (x, y) with |x|, |y| < 2^64 has norm < 2^129
    assert norm(v2) >= 2**129


@pytest.mark.parametrize("circuit", ["no_public", "many_public"])
def test_public_counts(curve, circuit):
    """No public values, and many: the scalar sums and the text layout follow n_public."""
    import cases

    case = cases.build_case(circuit, curve)
    vk = json.loads(case.vk.read_text())
    items = []
    for _ in range(5):
        p = prove_files(case.zkey, case.wtns)
        items.append((p.public, p.proof))
    assert verify_batch(vk, items).valid
    bad = copy.deepcopy(items)
    bad[1][1]["pi_c"] = items[2][1]["pi_c"]
    if bad[3][0]:
        bad[3][0][-1] = str((int(bad[3][0][-1]) + 1) % h.CURVE[curve].r)
    else:
        bad[3][1]["pi_a"] = items[4][1]["pi_a"]
    expected = [1, 3]
    assert _single(vk, bad) == expected
    assert verify_batch(vk, bad).bad == expected
