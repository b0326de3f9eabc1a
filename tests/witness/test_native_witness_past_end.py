"""A getWitnessSize that says more than there is (the wasm fuzz, seed 13: 21 -> 39/40 on circom 2.0.8's
torture.circom for BLS12-381): getWitness then reads its signal index past the witness list, from the short
word of a signal the Fr functions wrote. The native Fr functions write every element in their own form (short
word 0, long Montgomery), the wasm's in another: the same value, other raw bytes, another signal taken, and a
native witness unlike wasmtime's. The native engine now refuses raw reads of bytes its Fr functions wrote:
`--engine native` names the reason (exit 3), `auto` (and NativeCalculator's users) get the wasm engine's
witness, equal to `snarkjs wtns calculate` byte for byte. The module is rewritten here from the compiled seed,
under tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import oracle
from snarkd.witness import NativeCalculator, NativeUnavailable, WitnessCalculator, make_calculator
from wfixtures import compiled, wasm_cache  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import mutate_wasm  # noqa: E402

INPUTS = [{"a": str(2**64 + 7), "b": 97, "s": 2**32 - 1, "v": [5, 11, 99, 1]},
          {"a": 27, "b": 4, "s": 3, "v": [1, 20, 3, 40]}]
REFUSAL = "of a field element the native Fr functions wrote"


def sleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            return bytes(out + bytes([b]))
        out.append(b | 0x80)


def with_witness_size(wasm: bytes, size: int) -> bytes:
    """The module with getWitnessSize's body replaced by `i32.const size` (no locals)."""
    secs = mutate_wasm.sections(wasm)
    index = {name: i for i, name in mutate_wasm.function_names(wasm).items()}["getWitnessSize"]
    j = index - mutate_wasm.n_imported_funcs(secs)
    for k, (sid, payload) in enumerate(secs):
        if sid == 10:
            bodies = mutate_wasm.bodies(payload)
            bodies[j] = b"\x00\x41" + sleb(size) + b"\x0b"
            secs[k] = (sid, mutate_wasm.join_bodies(bodies))
    return mutate_wasm.join(secs)


def snarkjs_wtns(wasm: Path, inputs: dict, out_dir: Path) -> bytes:
    inp, out = out_dir / "snarkjs-input.json", out_dir / "snarkjs.wtns"
    inp.write_text(json.dumps(inputs))
    oracle.snarkjs("wtns", "calculate", wasm, inp, out)
    return out.read_bytes()


@pytest.fixture(scope="module")
def seed():
    return compiled("torture.circom", "bls12381", compiler="circom-2.0.8")


@pytest.mark.parametrize("size", [39, 40])
def test_witness_read_past_the_end_is_refused_and_served_by_wasm(seed, size, tmp_path):
    wasm = tmp_path / "circuit.wasm"
    wasm.write_bytes(with_witness_size(seed.wasm.read_bytes(), size))
    assert WitnessCalculator(wasm, cache=False).witness_size == size  # the rewrite took

    with pytest.raises(NativeUnavailable) as info:
        NativeCalculator(wasm, cache=False, strict=True)
    assert REFUSAL in str(info.value) and "getWitness" in str(info.value) and str(wasm) in str(info.value)
    assert not (tmp_path / "circuit.wasm.wprog").exists()

    calc = make_calculator(wasm, "auto", cache=False)
    assert isinstance(calc, WitnessCalculator)
    for i, inputs in enumerate(INPUTS):
        out = tmp_path / f"auto-{i}.wtns"
        calc.calculate_to_file(inputs, out)
        theirs = snarkjs_wtns(wasm, inputs, tmp_path)
        assert len(theirs) > 12 + 32 * 21 and out.read_bytes() == theirs, f"input {i}"


def test_witness_read_past_the_end_through_the_cli(seed, tmp_path):
    wasm = tmp_path / "circuit.wasm"
    wasm.write_bytes(with_witness_size(seed.wasm.read_bytes(), 39))
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps(INPUTS[0]))

    def snarkd(*args):
        return subprocess.run([sys.executable, "-m", "snarkd", "witness", *map(str, args)], capture_output=True,
                              text=True)

    res = snarkd(wasm, inp, tmp_path / "native.wtns", "--engine", "native")
    assert res.returncode == 3, res.stderr
    assert REFUSAL in res.stderr and "getWitness" in res.stderr
    assert not (tmp_path / "native.wtns").exists()

    res = snarkd(wasm, inp, tmp_path / "auto.wtns", "--engine", "auto")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "auto.wtns").read_bytes() == snarkjs_wtns(wasm, INPUTS[0], tmp_path)


def test_the_unmutated_seed_stays_native(seed, tmp_path):
    """The refusal is not the circuit's: its own getWitnessSize gives a native witness, snarkjs's bytes."""
    wasm = tmp_path / "circuit.wasm"
    wasm.write_bytes(with_witness_size(seed.wasm.read_bytes(), 21))
    native = NativeCalculator(wasm, cache=False, strict=True)
    for i, inputs in enumerate(INPUTS):
        out = tmp_path / f"native-{i}.wtns"
        native.calculate_to_file(inputs, out)
        assert out.read_bytes() == snarkjs_wtns(wasm, inputs, tmp_path), f"input {i}"
    assert native.stats.wasm == 0
