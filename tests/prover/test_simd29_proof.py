"""Whole proofs, BN254 and BLS12-381, with G1's and G2's batch-affine additions on the 4-lane AVX2 adders
(msm/bucket_simd29.hpp; BLS12-381's Fq in 14 limbs; G2 in Fq2 pairs of lanes), IFMA off, pass `snarkjs groth16 verify`. The fixture circuits are small (domain <= 2^6), so a forced
window of 7 or 8 bits puts every MSM of the proof (H, A, B1, C and B2 on the lanes) on the
batch-affine buckets, with batches far from full: the lanes past a batch's end are exercised too.
(The 2^16 / 2^17 benchmark proofs on this path are checked by bench/cpu_trees.py.)"""

from __future__ import annotations

import pytest

import oracle
from snarkd.formats.wtns import read_wtns
from snarkd.native import _core
from snarkd.prover import ProvingKey, prove, write_proof


@pytest.fixture
def lanes_path():
    if not _core.cpu_has_simd29():
        pytest.skip("no AVX2 + BMI2/ADX on this CPU")
    names = ("bn254", "bls12_381")
    prev = (_core._set_simd52(False), {(c, g2): _core._set_simd29(True, c, g2) for c in names for g2 in (False, True)},
            _core._set_msm_window(0))
    yield
    _core._set_msm_window(prev[2])
    for (c, g2), v in prev[1].items():
        _core._set_simd29(v, c, g2)
    _core._set_simd52(prev[0])


@pytest.mark.parametrize("window", [7, 8])
def test_fixture_proofs_on_the_lanes_verify(all_circuits, curve, lanes_path, window, tmp_path):
    _core._set_msm_window(window)
    name = "bn254" if curve == "bn128" else "bls12_381"
    for case in all_circuits:
        out = tmp_path / case.name
        out.mkdir()
        with ProvingKey.load(case.zkey) as key:
            assert _core.uses_simd29(name) and _core.uses_simd29(name, True) and not _core.uses_simd52()
            result = prove(key, read_wtns(case.wtns))
        proof, public = out / "proof.json", out / "public.json"
        write_proof(result, proof, public)
        assert oracle.snarkjs_verify(case.vk, public, proof), f"{case.name} (window {window}) rejected by snarkjs"
