"""snarkjs's proofs must pass `snarkd verify`; tampered ones must not."""

from __future__ import annotations

import copy
import json

import pytest
from snarkd.verifier import verify


def _load(case, tmp_path):
    proof_path, public_path = case.circuit.snarkjs_prove(case.wtns, tmp_path)
    vk = json.loads(case.vk.read_text())
    return vk, json.loads(public_path.read_text()), json.loads(proof_path.read_text())


@pytest.mark.slow
def test_snarkjs_proofs_verify(all_circuits, tmp_path):
    for case in all_circuits:
        out = tmp_path / case.name
        out.mkdir()
        vk, public, proof = _load(case, out)
        assert verify(vk, public, proof), case.name


@pytest.mark.slow
def test_tampered_proof_is_rejected(many_public_circuit, tmp_path):
    vk, public, proof = _load(many_public_circuit, tmp_path)
    bad = copy.deepcopy(proof)
    bad["pi_c"][0] = str((int(bad["pi_c"][0]) + 1))
    assert not verify(vk, public, bad)
    bad_pub = list(public)
    bad_pub[0] = str(int(bad_pub[0]) + 1)
    assert not verify(vk, bad_pub, proof)
