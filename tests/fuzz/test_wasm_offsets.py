"""Field elements that overlap, in a module circom would never emit: every address constant of the circuit's own
code (not ffwasm's field functions) moved by 4, 8, 16 or 32 bytes either way, so that a var's element is written over
part of its neighbour's. The native engine's control-flow run must then compute the wasm's witness (wasmtime's, on
the same mutated file) or refuse the module; never another witness. An element written at a + 8 over one written
at a left every shadow byte at a marked as the native engine's own, and the read at a took the mixed bytes without
the checks where the wasm decodes them as a short value (record.hpp's START mark: an element's first shadow byte)."""

from __future__ import annotations

import pytest

import mutate_wasm
import oracle
from snarkd.witness import NativeCalculator, WitnessCalculator

# vars in neighbouring slots of one frame, each written from the last and read again after its neighbours were
# written; one constraint so that the circuit compiles
SLOTS = """pragma circom 2.0.0;
template Slots() {
    signal input a;
    signal input b;
    signal output c;
    signal d;
    var x = a * b + 3;
    var y = x * x - a;
    var z = (y + x) * (a + 7);
    c <-- z * b + y + x;
    d <== a * b;
}
component main = Slots();
"""
RUNTIME = ("Fr_", "readSharedRWMemory", "writeSharedRWMemory", "setInputSignal", "init", "getWitness")


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


def mutants(wasm: bytes):
    secs = mutate_wasm.sections(wasm)
    names = mutate_wasm.function_names(wasm)
    n_imported = mutate_wasm.n_imported_funcs(secs)
    code = next(i for i, (sid, _) in enumerate(secs) if sid == 10)
    bodies = mutate_wasm.bodies(secs[code][1])
    for f, body in enumerate(bodies):
        if names.get(f + n_imported, "").startswith(RUNTIME):
            continue
        for start, end, v in address_constants(body):
            for dv in (4, -4, 8, -8, 16, -16, 32, -32):
                b = body[: start + 1] + sleb(v + dv) + body[end:]
                s = list(secs)
                s[code] = (10, mutate_wasm.join_bodies(bodies[:f] + [b] + bodies[f + 1:]))
                yield f"function {names.get(f + n_imported)} const {v} {dv:+d}", mutate_wasm.join(s)


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_overlapping_elements_give_the_wasms_witness_or_a_refusal(curve, tmp_path):
    wasm = (oracle.compile_circuit(SLOTS, "w_slots", curve) / "circuit_js" / "circuit.wasm").read_bytes()
    inputs = {"a": "12345678901234567890123456789012345678901234567890", "b": "98765432109876543210987654321"}
    counts = {"equal": 0, "refused": 0}
    wrong = []
    for k, (what, data) in enumerate(mutants(wasm)):
        path = tmp_path / f"m{k}.wasm"
        path.write_bytes(data)
        try:
            want = WitnessCalculator(path, cache=False).calculate(inputs).values.tobytes()
        except Exception:  # noqa: BLE001 -- the mutant broke the module for the wasm engine too: any outcome but a witness
            want = None
        try:
            calc = NativeCalculator(path, cache=False)
            res = calc._run([(q.hash, q.data) for q in calc.prepare(inputs)])
            got = bytes(res.witness) if res.ok else None
        except Exception:  # noqa: BLE001 -- a refusal (NativeUnavailable, the circuit's error): what `auto` falls back on
            got = None
        path.unlink()
        if got is None:
            counts["refused"] += 1
        elif got == want:
            counts["equal"] += 1
        else:
            wrong.append(what)
    assert not wrong, f"the control-flow run's witness is not the wasm's for {len(wrong)} mutants: {wrong[:5]}"
    assert counts["equal"] >= 50 and counts["refused"] >= 50, counts  # both outcomes exercised
    assert counts["equal"] + counts["refused"] >= 200
