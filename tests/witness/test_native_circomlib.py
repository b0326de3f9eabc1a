"""The native witness engine on circomlib: SHA-256, Poseidon, MiMC7, MiMCSponge, EdDSA (Poseidon,
BabyJubjub), comparators, Num2Bits/Bits2Num, IsZero/IsEqual and multiplexers, each .wtns byte-identical
to `snarkjs wtns calculate` on several inputs, both curves (EdDSA on BN254, where BabyJubjub lives)."""

from __future__ import annotations

import random

import pytest

from snarkd.witness import NativeCalculator, WitnessCalculator
from wfixtures import compiled, eddsa_inputs, wasm_cache  # noqa: F401



def assert_byte_identical(circuit, inputs_list, tmp_path):
    native = NativeCalculator(circuit.wasm, cache=False, strict=True)
    for i, inputs in enumerate(inputs_list):
        out = tmp_path / f"native-{i}.wtns"
        native.calculate_to_file(inputs, out)
        assert out.read_bytes() == circuit.snarkjs_witness(inputs).read_bytes(), f"input {i}: {inputs}"
    assert native.stats.wasm == 0
    return native


def test_zoo(curve, tmp_path):
    zoo = compiled("zoo.circom", curve, include_circomlib=True)
    rng = random.Random(7)
    inputs = [
        {"x": 1, "y": 2, "small": 5, "sel": [0, 1, 1], "c": list(range(8))},
        {"x": 9, "y": 9, "small": 0, "sel": [1, 0, 0], "c": [3] * 8},
        {"x": str(rng.getrandbits(250)), "y": str(rng.getrandbits(250)), "small": 4_000_000_000,
         "sel": [1, 1, 1], "c": [str(rng.getrandbits(200)) for _ in range(8)]},
    ]
    native = assert_byte_identical(zoo, inputs, tmp_path)
    assert native.program.n_paths == 1  # IsZero/IsEqual are ternaries: one path for every input


def test_sha256(curve, tmp_path):
    sha = compiled("sha256.circom", curve, include_circomlib=True)
    rng = random.Random(11)
    inputs = [{"in": [0] * 64}, {"in": [1] * 64}, {"in": [rng.getrandbits(1) for _ in range(64)]}]
    assert_byte_identical(sha, inputs, tmp_path)


def test_eddsa_poseidon_bn254(tmp_path):
    eddsa = compiled("eddsa.circom", "bn128", include_circomlib=True)
    assert_byte_identical(eddsa, eddsa_inputs(), tmp_path)


def test_eddsa_rejects_a_forged_signature_as_the_wasm_does():
    from snarkd.witness import CircuitAssertError

    eddsa = compiled("eddsa.circom", "bn128", include_circomlib=True)
    native = NativeCalculator(eddsa.wasm, cache=False, strict=True)
    forged = {"enabled": 1, "Ax": "0", "Ay": "1", "R8x": "0", "R8y": "1", "S": "5", "M": "1"}
    with pytest.raises(CircuitAssertError) as exc:
        native.calculate(forged)
    with pytest.raises(CircuitAssertError) as ref:
        WitnessCalculator(eddsa.wasm, cache=False).calculate(forged)
    assert str(exc.value) == str(ref.value)
