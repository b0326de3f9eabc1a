"""Field elements that overlap, in a module circom would never emit: every address constant of the circuit's own
code (its template's functions, not ffwasm's runtime) moved by 4, 8, 16 or 32 bytes either way, so that a var's element is written over
part of its neighbour's. The native engine's control-flow run must then compute the wasm's witness (wasmtime's, on
the same mutated file) or refuse the module; never another witness. An element written at a + 8 over one written
at a left every shadow byte at a marked as the native engine's own, and the read at a took the mixed bytes without
the checks where the wasm decodes them as a short value (record.hpp's START mark: an element's first shadow byte)."""

from __future__ import annotations

import pytest

import mutate_wasm
import oracle
from snarkd.witness import NativeCalculator, WitnessCalculator
from snarkd.witness.native import CURVES
from snarkd.witness.wasm_runtime import validate_module

# vars in neighbouring slots of one frame, each written from the last, written again after its neighbours were
# (a moved write then lands over a neighbour's header) and read again; one constraint so that the circuit compiles
SLOTS = """pragma circom 2.0.0;
template Slots() {
    signal input a;
    signal input b;
    signal output c;
    signal d;
    var x = a * b + 3;
    var y = x * x - a;
    var z = (y + x) * (a + 7);
    x = x * y + z;
    y = y * b;
    c <-- z * b + y + x;
    d <== a * b;
}
component main = Slots();
"""
# the template's own functions (Slots_0_create, Slots_0_run): the rest is ffwasm's runtime and the host protocol,
# which the native engine does not take from the file (tests/fuzz/wasm_target.py's "trusted_runtime")
TEMPLATE = "Slots_"


def sleb(v: int) -> bytes:
    out = bytearray()
    while True:
        byte, v = v & 0x7F, v >> 7
        if (v == 0 and not byte & 0x40) or (v == -1 and byte & 0x40):
            return bytes(out + bytes([byte]))
        out.append(byte | 0x80)


def address_constants(body: bytes):
    """(start, end, value) of each i32.const in a function body whose value looks like a frame offset (a multiple
    of 4 from 8 up): a byte scan, so some hits are no instruction at all (their mutants are other modules, fine)."""
    pos = body.find(b"\x41")
    while pos >= 0:
        v, shift, end = 0, 0, pos + 1
        while end < len(body):
            byte = body[end]
            end += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                if byte & 0x40:
                    v -= 1 << shift
                if 8 <= v < 1 << 20 and v % 4 == 0:
                    yield pos, end, v
                break
        pos = body.find(b"\x41", pos + 1)


def mutants(wasm: bytes, deltas=(4, -4, 8, -8, 16, -16, 32, -32)):
    secs = mutate_wasm.sections(wasm)
    names = mutate_wasm.function_names(wasm)
    n_imported = mutate_wasm.n_imported_funcs(secs)
    code = next(i for i, (sid, _) in enumerate(secs) if sid == 10)
    bodies = mutate_wasm.bodies(secs[code][1])
    for f, body in enumerate(bodies):
        if not names.get(f + n_imported, "").startswith(TEMPLATE):
            continue
        for start, end, v in address_constants(body):
            for dv in deltas:
                b = body[: start + 1] + sleb(v + dv) + body[end:]
                s = list(secs)
                s[code] = (10, mutate_wasm.join_bodies(bodies[:f] + [b] + bodies[f + 1:]))
                yield f"function {names.get(f + n_imported)} const {v} {dv:+d}", mutate_wasm.join(s)


def control_flow_result(calc: NativeCalculator, data: bytes, inputs: list):
    """The control-flow run alone on a module's bytes (the facts and inputs of the unmutated circuit's calculator): a
    NativeCalculator on the mutant would first record a program, whose own checks refuse most overlaps before the
    control-flow run is reached. (witness, None), or (None, why) where it refuses."""
    try:
        validate_module(data, "mutant")  # what NativeCalculator does first: an invalid module is no one's witness
        parsed = calc._native.Wasm(data)
        res = calc._native.run(parsed, CURVES[calc.curve], inputs, max_steps=1 << 20,
                               input_base=calc.input_base, n_inputs=calc.input_size)
    except Exception as e:  # noqa: BLE001 -- a refusal (Unsupported, bad module): what `auto` falls back on
        return None, str(e)
    return (bytes(res.witness), None) if res.ok else (None, str(res.message))


def control_flow_run(calc: NativeCalculator, data: bytes, inputs: list):
    """control_flow_result's witness: None where the run refuses."""
    return control_flow_result(calc, data, inputs)[0]


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_overlapping_elements_give_the_wasms_witness_or_a_refusal(curve, tmp_path):
    src = oracle.compile_circuit(SLOTS, "w_slots", curve) / "circuit_js" / "circuit.wasm"
    inputs = {"a": "123456789012345678901234567890123456789", "b": "98765432109876543210987654321"}
    calc = NativeCalculator(src, cache=False)
    prepared = [(q.hash, q.data) for q in calc.prepare(inputs)]
    assert control_flow_run(calc, src.read_bytes(), prepared) == WitnessCalculator(src, cache=False).calculate(
        inputs).values.tobytes()
    counts = {"equal": 0, "refused": 0, "changed": 0}
    wrong = []
    for k, (what, data) in enumerate(mutants(src.read_bytes())):
        path = tmp_path / f"m{k}.wasm"
        path.write_bytes(data)
        try:
            want = WitnessCalculator(path, cache=False).calculate(inputs).values.tobytes()
        except Exception:  # noqa: BLE001 -- the mutant broke the module for the wasm engine too: any outcome but a witness
            want = None
        path.unlink()
        got = control_flow_run(calc, data, prepared)
        if got is None:
            counts["refused"] += 1
        elif got == want:
            counts["equal"] += 1
        else:
            wrong.append(what)
    assert not wrong, f"the control-flow run's witness is not the wasm's for {len(wrong)} mutants: {wrong[:5]}"
    assert counts["equal"] >= 50 and counts["refused"] >= 10, counts  # both outcomes exercised


# Element addresses off the grid: constants moved by 1 to 3 bytes (misaligned), far down (into ffwasm's constants
# and scratch below the shared memory) and far up (past the memory's end). record.hpp tests an element access's
# address with one compare (elem_address_ok) and runs its three tests, in their order, only when that fails: each
# of their refusals must still come, and every module the run does not refuse must give the wasm's witness.
OFF_GRID = (1, -2, 3, -1024, -6000, 1 << 16, 1 << 20)
ADDRESS_REFUSALS = {
    "misaligned": "unaligned field element",
    "past the end": "out of bounds memory access",
    "a read of ffwasm's constants": "takes a field element from ffwasm's constants",
    "a write into them": "writes into ffwasm's constants",
}


def test_element_addresses_off_the_grid_give_the_wasms_witness_or_their_refusal(tmp_path):
    src = oracle.compile_circuit(SLOTS, "w_slots", "bn128") / "circuit_js" / "circuit.wasm"
    inputs = {"a": "123456789012345678901234567890123456789", "b": "98765432109876543210987654321"}
    calc = NativeCalculator(src, cache=False)
    prepared = [(q.hash, q.data) for q in calc.prepare(inputs)]
    seen = {kind: 0 for kind in ADDRESS_REFUSALS}
    equal, wrong = 0, []
    for k, (what, data) in enumerate(mutants(src.read_bytes(), OFF_GRID)):
        got, why = control_flow_result(calc, data, prepared)
        if got is None:
            for kind, text in ADDRESS_REFUSALS.items():
                seen[kind] += text in why
            continue
        path = tmp_path / f"m{k}.wasm"
        path.write_bytes(data)
        try:
            want = WitnessCalculator(path, cache=False).calculate(inputs).values.tobytes()
        except Exception:  # noqa: BLE001 -- the wasm engine fails where the run gave a witness: wrong too
            want = None
        path.unlink()
        if got == want:
            equal += 1
        else:
            wrong.append(what)
    assert not wrong, f"the control-flow run's witness is not the wasm's for {len(wrong)} mutants: {wrong[:5]}"
    assert all(seen.values()) and equal >= 50, (seen, equal)  # every refusal and the witnesses exercised
