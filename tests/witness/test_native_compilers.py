"""The native witness engine on the wasm of each circom compiler we pin (tests/oracle.COMPILERS: circom
2.0.8, 2.1.9 and the current circom2): torture.circom (loops bounded by values, recursion, \\ and %, shifts, bit
operations, ternaries, indices computed from values, assert, log) and circomlib's EdDSA, Poseidon and
SHA-256, every .wtns byte-identical to `snarkjs wtns calculate` for several inputs, none from the wasm
engine. circom 2.0.x's wasm copies values out with Fr_int_copy (getWitness, log) where 2.1+ copies the
element: before, the recorder crashed the process on it (SIGSEGV) or refused it."""

from __future__ import annotations

import random
import shutil

import pytest

import snarkd.witness.native as native_module
from snarkd.curves.params import BLS12_381, BN254
from snarkd.witness import CircuitAssertError, NativeCalculator, WitnessCalculator, make_calculator
from wfixtures import POSEIDON_INPUT, compiled, eddsa_inputs, wasm_cache  # noqa: F401

COMPILERS = ["circom-2.0.8", "circom-2.1.9", "circom2"]
R = {"bn128": BN254.r, "bls12381": BLS12_381.r}


def torture_inputs(curve: str) -> list[dict]:
    r = R[curve]
    return [
        {"a": 27, "b": 4, "s": 3, "v": [1, 20, 3, 40]},
        {"a": 0, "b": 0, "s": 0, "v": [0, 0, 0, 0]},
        {"a": str(r - 1), "b": "123456789123456789", "s": 299, "v": [str(r - 1), 11, 10, 12]},
        {"a": str(2**64 + 7), "b": 97, "s": 2**32 - 1, "v": [5, 11, 99, 1]},
        {"a": 27, "b": 5, "s": 3, "v": [1, 20, 3, 40]},  # a path seen before but for b: gcd and digits differ
    ]


def fresh_native(circuit, tmp_path) -> NativeCalculator:
    """A calculator that records its program now: the .wasm copied where no .wprog lies beside it."""
    wasm = tmp_path / "fresh" / "circuit.wasm"
    wasm.parent.mkdir(exist_ok=True)
    shutil.copyfile(circuit.wasm, wasm)
    return NativeCalculator(wasm, cache=False, strict=True)


def byte_identical(circuit, inputs_list, tmp_path, native=None):
    """Each input's native .wtns equals snarkjs's; returns the calculator (its stats say how)."""
    native = native or fresh_native(circuit, tmp_path)
    for i, inputs in enumerate(inputs_list):
        out = tmp_path / f"native-{i}.wtns"
        lines: list[str] = []
        native.calculate_to_file(inputs, out, log=lines.append)
        assert out.read_bytes() == circuit.snarkjs_witness(inputs).read_bytes(), f"input {i}: {inputs}"
    assert native.stats.wasm == 0, "a witness came from the wasm engine"
    return native


@pytest.mark.parametrize("compiler", COMPILERS)
def test_torture_byte_identical_to_snarkjs(compiler, curve, tmp_path, monkeypatch):
    monkeypatch.setattr(native_module, "CONTROL_FLOW_AFTER", native_module.MAX_PATHS + 1)  # recording misses, never the control-flow run
    torture = compiled("torture.circom", curve, compiler=compiler)
    inputs = torture_inputs(curve)
    native = byte_identical(torture, inputs, tmp_path)
    assert native.stats.recorded >= 3  # value-dependent loops: the inputs took new paths
    again = native.stats.native
    byte_identical(torture, inputs, tmp_path, native)  # every path is known now: all replays
    assert native.stats.native == again + len(inputs)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_torture_logs_and_failed_assert_as_the_wasm(compiler, tmp_path):
    torture = compiled("torture.circom", "bn128", compiler=compiler)
    native = fresh_native(torture, tmp_path)
    wasm = WitnessCalculator(native.path, cache=False)
    lines_n: list[str] = []
    lines_w: list[str] = []
    inputs = {"a": 12345, "b": 6, "s": 7, "v": [1, 2, 3, 4]}
    native.calculate(inputs, log=lines_n.append)
    wasm.calculate(inputs, log=lines_w.append)
    assert lines_n == lines_w == ["a 12345 s 7"]
    failing = {**inputs, "s": 2**32}
    with pytest.raises(CircuitAssertError) as got:
        native.calculate(failing)
    with pytest.raises(CircuitAssertError) as ref:
        wasm.calculate(failing)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_auto_engine_is_native_on_every_compilers_wasm(compiler, tmp_path):
    torture = compiled("torture.circom", "bn128", compiler=compiler)
    wasm = fresh_native(torture, tmp_path).path
    (wasm.parent / (wasm.name + ".wprog")).unlink()
    calc = make_calculator(wasm, engine="auto", cache=False)
    assert isinstance(calc, NativeCalculator) and calc.build_ms > 0


@pytest.mark.parametrize("compiler", COMPILERS)
def test_circomlib_poseidon(compiler, curve, tmp_path):
    poseidon = compiled("poseidon.circom", curve, include_circomlib=True, compiler=compiler, N=3)
    other = {"preimage": [[7, 8], [0, 0], [str(R[curve] - 1), 2**64]], "x": 0, "bound": 5}
    native = byte_identical(poseidon, [POSEIDON_INPUT, other], tmp_path)
    assert native.program.n_paths == 1  # IsZero and IsEqual are ternaries: one path


@pytest.mark.parametrize("compiler", COMPILERS)
def test_circomlib_sha256(compiler, tmp_path):
    sha = compiled("sha256.circom", "bn128", include_circomlib=True, compiler=compiler)
    rng = random.Random(11)
    byte_identical(sha, [{"in": [0] * 64}, {"in": [rng.getrandbits(1) for _ in range(64)]}], tmp_path)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_circomlib_eddsa(compiler, tmp_path):
    eddsa = compiled("eddsa.circom", "bn128", include_circomlib=True, compiler=compiler)
    byte_identical(eddsa, eddsa_inputs(), tmp_path)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_the_control_flow_run_reads_the_witness_as_the_wasm(compiler, curve, tmp_path):
    """The control-flow run reads the witness natively where getWitness is circom 2.1+'s (record.hpp's read_witness:
    2.1.9 and the current circom2) and through the interpreter where it is not (2.0.8's Fr_int_copy): either way
    byte for byte the wasm's witness, on each of torture.circom's inputs."""
    torture = compiled("torture.circom", curve, compiler=compiler)
    native = fresh_native(torture, tmp_path)
    wasm = WitnessCalculator(torture.wasm, cache=False)
    for inputs in torture_inputs(curve):
        try:
            expect = wasm.calculate(inputs).values.tobytes()
        except CircuitAssertError:
            continue
        res = native._run([(q.hash, q.data) for q in native.prepare(inputs)])
        assert res.ok, res.message
        assert bytes(res.witness) == expect, f"{compiler}: the control-flow run's witness differs for {inputs}"
