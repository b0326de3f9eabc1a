"""snarkd's Groth16 verifier (native pairing) against `snarkjs groth16 verify`.

Proofs come from `snarkjs groth16 prove` on the shared fixture circuits; each
case is written to files and checked by snarkjs, by snarkd's Python API and
(some) by the `snarkd verify` CLI.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import oracle
import vhelpers as h
from snarkd.errors import InputError
from snarkd.verifier import verify, verify_files
from ref_verifier import verify_reference

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    """(vk, public, proof) JSON objects per (circuit, curve), proved by snarkjs."""
    import cases

    cache = {}

    def get(name: str, curve: str):
        if (name, curve) not in cache:
            case = cases.build_case(name, curve)
            d = tmp_path_factory.mktemp(f"{name}-{curve}")
            proof, public = case.circuit.snarkjs_prove(case.wtns, d)
            cache[(name, curve)] = (json.loads(case.vk.read_text()), json.loads(public.read_text()), json.loads(proof.read_text()))
        return copy.deepcopy(cache[(name, curve)])

    return get


def _write(d: Path, tag: str, vk, public, proof):
    paths = [d / f"{tag}_{n}.json" for n in ("vk", "public", "proof")]
    for p, obj in zip(paths, (vk, public, proof)):
        p.write_text(json.dumps(obj))
    return paths


def _both(tmp_path, tag, vk, public, proof):
    """(snarkd's answer, snarkjs's answer)."""
    paths = _write(tmp_path, tag, vk, public, proof)
    return verify_files(*paths), oracle.snarkjs_verify(*paths)


def _tampered(curve: str, proof: dict):
    q = h.CURVE[curve].q
    for key, idx in (("pi_a", [0]), ("pi_a", [1]), ("pi_c", [0]), ("pi_c", [1]),
                     ("pi_b", [0, 0]), ("pi_b", [0, 1]), ("pi_b", [1, 0]), ("pi_b", [1, 1])):
        p = copy.deepcopy(proof)
        ref = p[key]
        for i in idx[:-1]:
            ref = ref[i]
        ref[idx[-1]] = str((int(ref[idx[-1]]) + 1) % q)
        yield f"{key}{idx}", p


@pytest.mark.slow
@pytest.mark.parametrize("circuit", ["chain", "many_public", "no_public"])
def test_valid_proofs(proved, curve, circuit, tmp_path):
    vk, public, proof = proved(circuit, curve)
    assert verify(vk, public, proof)
    assert _both(tmp_path, "ok", vk, public, proof) == (True, True)


@pytest.mark.slow
def test_valid_agrees_with_py_ecc_reference(proved, curve):
    vk, public, proof = proved("chain", curve)
    assert verify_reference(vk, public, proof) is True
    public[0] = str(int(public[0]) + 1)
    assert verify_reference(vk, public, proof) is False
    assert verify(vk, public, proof) is False


@pytest.mark.slow
def test_tampered_coordinates(proved, curve, tmp_path):
    vk, public, proof = proved("chain", curve)
    for tag, bad in _tampered(curve, proof):
        assert verify(vk, public, bad) is False, tag
        assert _both(tmp_path, "t", vk, public, bad) == (False, False), tag


@pytest.mark.slow
def test_other_valid_points_and_swaps(proved, curve, tmp_path):
    vk, public, proof = proved("chain", curve)
    ecc = h.PYECC[curve]
    c = h.CURVE[curve]
    a = [int(v) for v in proof["pi_a"][:2]]
    two_a = ecc.normalize(ecc.double((ecc.FQ(a[0]), ecc.FQ(a[1]), ecc.FQ.one())))
    cases = {
        "2A": dict(proof, pi_a=[str(two_a[0].n), str(two_a[1].n), "1"]),
        "swapAC": dict(proof, pi_a=proof["pi_c"], pi_c=proof["pi_a"]),
        "A=inf": dict(proof, pi_a=["0", "1", "0"]),
        "C=inf": dict(proof, pi_c=["0", "1", "0"]),
        "B=inf": dict(proof, pi_b=[["0", "0"], ["1", "0"], ["0", "0"]]),
        "negA": dict(proof, pi_a=[proof["pi_a"][0], str(c.q - int(proof["pi_a"][1])), "1"]),
    }
    for tag, bad in cases.items():
        assert _both(tmp_path, "o", vk, public, bad) == (False, False), tag


@pytest.mark.slow
def test_jacobian_coordinates(proved, curve, tmp_path):
    """snarkjs reads [X, Y, Z] as Jacobian (x = X/Z^2, y = Y/Z^3); so does snarkd."""
    vk, public, proof = proved("chain", curve)
    q = h.CURVE[curve].q
    z = 7
    x, y = (int(v) for v in proof["pi_a"][:2])
    scaled = dict(proof, pi_a=[str(x * z * z % q), str(y * z**3 % q), str(z)])
    (x0, x1), (y0, y1) = ([int(v) for v in c] for c in proof["pi_b"][:2])
    scaled["pi_b"] = [[str(x0 * z * z % q), str(x1 * z * z % q)], [str(y0 * z**3 % q), str(y1 * z**3 % q)], [str(z), "0"]]
    assert _both(tmp_path, "jac", vk, public, scaled) == (True, True)
    # homogeneous scaling (x = X/Z) is a different point
    homog = dict(proof, pi_a=[str(x * z % q), str(y * z % q), str(z)])
    assert _both(tmp_path, "hom", vk, public, homog) == (False, False)


@pytest.mark.slow
def test_off_curve_and_outside_subgroup(proved, curve, tmp_path):
    vk, public, proof = proved("chain", curve)
    rng = random.Random(5)
    cases = {"A off curve": dict(proof, pi_a=["1", "1", "1"]),
             "B off curve": dict(proof, pi_b=[["1", "0"], ["1", "0"], ["1", "0"]])}
    (x0, x1), (y0, y1) = h.random_curve_g2(curve, rng)
    cases["B outside G2"] = dict(proof, pi_b=[[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]])
    if curve == "bls12381":  # BN254's G1 has cofactor 1
        x, y = h.random_curve_g1(curve, rng)
        cases["A outside G1"] = dict(proof, pi_a=[str(x), str(y), "1"])
        cases["C outside G1"] = dict(proof, pi_c=[str(x), str(y), "1"])
    m = h.native(curve)
    for tag, bad in cases.items():
        if "outside" in tag:  # really on the curve
            key = "pi_b" if "B" in tag else ("pi_a" if "A" in tag else "pi_c")
            pt = bad[key]
            raw = h.g2_raw(curve, [int(v) for v in pt[0]], [int(v) for v in pt[1]]) if key == "pi_b" else h.g1_raw(curve, int(pt[0]), int(pt[1]))
            assert (m.g2_on_curve(raw) if key == "pi_b" else m.g1_on_curve(raw)), tag
        assert _both(tmp_path, "s", vk, public, bad) == (False, False), tag


@pytest.mark.slow
def test_public_values(proved, curve, tmp_path):
    vk, public, proof = proved("many_public", curve)
    r = h.CURVE[curve].r
    assert len(public) > 2
    for i in (0, len(public) - 1):
        for tag, value in (("+1", int(public[i]) + 1), ("+r", int(public[i]) + r), ("=r", r), ("=r-1", r - 1), ("2^256", 2**256 - 1)):
            bad = list(public)
            bad[i] = str(value)
            assert verify(vk, bad, proof) is False, (i, tag)
            if tag != "2^256":
                assert _both(tmp_path, "p", vk, bad, proof) == (False, False), (i, tag)


@pytest.mark.slow
def test_non_canonical_coordinate_is_rejected(proved, curve, tmp_path):
    """Coordinate x + q: snarkjs reduces it mod q (and accepts); snarkd rejects it (documented)."""
    vk, public, proof = proved("chain", curve)
    q = h.CURVE[curve].q
    bad = dict(proof, pi_a=[str(int(proof["pi_a"][0]) + q), proof["pi_a"][1], "1"])
    mine, theirs = _both(tmp_path, "nc", vk, public, bad)
    assert mine is False
    # observed with snarkjs 0.7.x: True on both curves (ffjavascript reduces mod q); not required here
    assert theirs in (True, False)


def test_bad_input_raises(proved, curve):
    vk, public, proof = proved("chain", curve)
    with pytest.raises(InputError):
        verify(vk, public[:-1], proof)
    with pytest.raises(InputError):
        verify(vk, public, {k: v for k, v in proof.items() if k != "pi_b"})
    with pytest.raises(InputError):
        verify(dict(vk, curve="secp256k1"), public, proof)
    with pytest.raises(InputError):
        verify(vk, ["abc"] + public[1:], proof)
    with pytest.raises(InputError):
        verify(dict(vk, vk_alpha_1=["1", "1", "1"]), public, proof)


@pytest.mark.slow
def test_cli_exit_codes(proved, curve, tmp_path):
    vk, public, proof = proved("chain", curve)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def cli(*paths):
        return subprocess.run([sys.executable, "-m", "snarkd", "verify", *map(str, paths)], capture_output=True, text=True, env=env).returncode

    assert cli(*_write(tmp_path, "ok", vk, public, proof)) == 0
    bad = list(public)
    bad[0] = str(int(bad[0]) + 1)
    assert cli(*_write(tmp_path, "bad", vk, bad, proof)) == 1
    assert cli(*_write(tmp_path, "short", vk, public[:-1], proof)) == 3
    assert cli(tmp_path / "missing.json", tmp_path / "ok_public.json", tmp_path / "ok_proof.json") == 3


def test_verify_with_a_key_read_once_answers_as_verify(proved, curve):
    """verify_with_key (the engine's self-check: the key's points read once per loaded key) gives verify's answer
    on a valid proof, tampered coordinates and public values, and raises its errors with its messages."""
    from snarkd.verifier.groth16 import read_key, verify_with_key

    vk, public, proof = proved("many_public", curve)
    key = read_key(vk)
    cases = [("ok", public, proof)] + [(tag, public, bad) for tag, bad in _tampered(curve, proof)]
    r = h.CURVE[curve].r
    cases += [("+1", [str(int(public[0]) + 1)] + public[1:], proof), ("=r", public[:-1] + [str(r)], proof)]
    for tag, pub, pf in cases:
        assert verify_with_key(key, pub, pf) is verify(vk, pub, pf) is (tag == "ok"), tag
    for pub, pf in ((public[:-1], proof), (["abc"] + public[1:], proof),
                    (public, {k: v for k, v in proof.items() if k != "pi_b"}), (public, dict(proof, curve="bls12381"
                                                                                           if curve == "bn128" else "bn128"))):
        with pytest.raises(InputError) as mine:
            verify_with_key(key, pub, pf)
        with pytest.raises(InputError) as theirs:
            verify(vk, pub, pf)
        assert str(mine.value) == str(theirs.value)
