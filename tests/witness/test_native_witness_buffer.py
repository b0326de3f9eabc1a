"""The native engine hands its witness to Python without copies (round 21): the control-flow run's and a recording's
witness is the block the run wrote it to (`_witness.WitnessBytes`, read-only, kept alive by its last reference), and
`_witness.Wasm` keeps the caller's bytes instead of a copy. Each witness is held to snarkjs's, also after everything
that made it is gone and its memory reused."""

from __future__ import annotations

import gc
import shutil
import sys
from pathlib import Path

import pytest

from snarkd.witness import NativeCalculator
from test_native_control_flow import K_LIMBS, N_BITS, bigint_inputs
from wfixtures import compiled, wasm_cache  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import mutate_wasm  # noqa: E402


def snarkjs_values(circuit, inputs) -> bytes:
    """The values of `snarkjs wtns calculate`'s .wtns (its last section: witness_size * 32 bytes)."""
    data = circuit.snarkjs_witness(inputs).read_bytes()
    return data[-32 * NativeCalculator(circuit.wasm, cache=False).witness_size:]


def run_inputs(calc, inputs) -> list:
    return [(p.hash, p.data) for p in calc.prepare(inputs)]


@pytest.fixture
def bigint(curve, tmp_path):
    c = compiled("bigint.circom", curve, N=N_BITS, K=K_LIMBS)
    wasm = tmp_path / "circuit.wasm"
    shutil.copyfile(c.wasm, wasm)
    return c, NativeCalculator(wasm, cache=False, strict=True)


def test_control_flow_witness_is_a_read_only_block_that_outlives_its_run(bigint):
    circuit, calc = bigint
    inputs = bigint_inputs(3)
    res = calc._run(run_inputs(calc, inputs))
    assert res.ok, res.message
    view = memoryview(res.witness)
    assert view.readonly and view.format == "B" and view.nbytes == 32 * calc.witness_size == len(res.witness)
    with pytest.raises(TypeError):
        view[0] = 1
    expected = snarkjs_values(circuit, inputs)
    assert bytes(view) == expected
    # the block is the view's now: the result, the calculator and its module gone, other runs reusing their memory
    del res, calc
    gc.collect()
    again = NativeCalculator(circuit.wasm, cache=False, strict=True)
    other = [again._run(run_inputs(again, bigint_inputs(i))) for i in (4, 5)]
    assert all(r.ok for r in other)
    assert bytes(view) == expected
    assert bytes(other[1].witness) == snarkjs_values(circuit, bigint_inputs(5))


def test_recorded_witness_is_plain_and_equal_to_snarkjs(bigint):
    circuit, calc = bigint
    inputs = bigint_inputs(6)
    res = calc._record(run_inputs(calc, inputs), force=False)
    assert res.ok, res.message
    assert memoryview(res.witness).readonly
    assert bytes(res.witness) == snarkjs_values(circuit, inputs)


def test_calculate_bytes_gives_a_view_of_the_control_flow_block(bigint, monkeypatch):
    circuit, calc = bigint
    monkeypatch.setattr(type(calc), "value_dependent", property(lambda self: True))  # every request a control-flow run
    monkeypatch.setattr(calc, "_hits", 0)
    inputs = bigint_inputs(7)
    raw, source = calc.calculate_bytes(inputs)
    assert source == "control" and isinstance(raw, memoryview) and raw.readonly
    assert bytes(raw) == snarkjs_values(circuit, inputs)


def test_wasm_keeps_the_callers_bytes(bigint):
    """A module parsed from bytes whose only reference is the Wasm object still runs (its bodies and data segments
    point into those bytes), and gives the witness a copy gave."""
    circuit, calc = bigint
    calc._parsed = calc._native.Wasm(bytes(bytearray(calc._bytes)))  # a fresh object, referenced by nothing else
    gc.collect()
    inputs = bigint_inputs(8)
    res = calc._run(run_inputs(calc, inputs))
    assert res.ok, res.message
    assert bytes(res.witness) == snarkjs_values(circuit, inputs)
    assert calc._parsed.inspect()["witness_size"] == calc.witness_size


def initial_memory_bytes(wasm: bytes) -> int:
    """The module's own memory's initial size (its memory section: one memory, its limits flag, then its pages)."""
    payload = next(p for sid, p in mutate_wasm.sections(wasm) if sid == 5)
    return mutate_wasm.uleb(payload, 2)[0] << 16


def test_control_flow_run_in_huge_pages_gives_snarkjs_witness(curve):
    """circomlib's SHA-256 declares more than 4 MiB of memory: the control-flow run asks for it in 2 MiB pages
    (advise_huge_pages), and each run, in memory mapped afresh, gives snarkjs's witness."""
    sha = compiled("sha256.circom", curve, include_circomlib=True)
    calc = NativeCalculator(sha.wasm, cache=False, strict=True)
    assert initial_memory_bytes(calc._bytes) >= 4 << 20
    for bits in ([0] * 64, [1, 0] * 32, [1] * 64):
        inputs = {"in": bits}
        for _ in range(2):
            res = calc._run(run_inputs(calc, inputs))
            assert res.ok, res.message
            assert bytes(res.witness) == snarkjs_values(sha, inputs)


def test_a_one_shot_runs_large_buffers_are_fresh_huge_pages_unless_huge_pages_is_off(monkeypatch):
    """Round 34: without numpy (the one-shot CLI), a replay's large frame and a compiled run's witness block are fresh
    mappings of whole 2 MiB pages (file_trust.fresh_pages), zero and writable; with [cpu] huge_pages off, or numpy
    loaded (a daemon), the frame is a bytearray (numpy's empty in a daemon) and the block a mapping of its own
    length, as before; small frames stay bytearrays."""
    from snarkd.formats.file_trust import HUGE_MIN
    from snarkd.native import _witness
    from snarkd.witness import native

    import numpy as np

    monkeypatch.setitem(sys.modules, "numpy", None)  # sys.modules.get("numpy") is None: the CLI's process
    n = 3 * HUGE_MIN + 5
    prev = _witness.set_huge_pages(True)
    try:
        for buf in (native._uninitialized(n), native._zero_pages(n)):
            assert not isinstance(buf, bytearray) and len(buf) % (2 << 20) == 0 and len(buf) >= n
            assert memoryview(buf)[:n].tobytes() == bytes(n)
        assert isinstance(native._uninitialized(HUGE_MIN - 1), bytearray)
        monkeypatch.setitem(sys.modules, "numpy", np)  # a daemon (numpy loaded): its block populated at the mapping
        assert len(native._zero_pages(n)) == n
        monkeypatch.setitem(sys.modules, "numpy", None)
        _witness.set_huge_pages(False)
        assert isinstance(native._uninitialized(n), bytearray)
        block = native._zero_pages(n)
        assert len(block) == n and memoryview(block).tobytes() == bytes(n)
    finally:
        _witness.set_huge_pages(prev)
