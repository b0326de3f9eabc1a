"""The wasm engine keeps no file descriptor per calculator or per dropped instance. wasmtime-py keeps every host
callable in a process-wide table until its Store is deleted; the circuit's callbacks held their CircuitInstance,
and through it the Store, so no Store was ever deleted: every calculator leaked its module's memory image (a
memfd, one descriptor) and every instance its Store (a failed run drops its instance: one per failed request in
the daemon). Counted in /proc/self/fd over 50 calculations, through the wasm engine, the native engine's wasm
fallback (what the daemon's keys hold) and make_calculator (the daemon's and the CLI's entry)."""

from __future__ import annotations

import gc
import json
import os
import shutil
import weakref

import pytest

from snarkd.witness import CircuitAssertError, NativeCalculator, WitnessCalculator, make_calculator
from snarkd.witness.calculator import words_to_u64
from wfixtures import compiled, wasm_cache  # noqa: F401

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")

N = 50
GOOD = {"a": 27, "b": 4, "s": 3, "v": [1, 20, 3, 40]}
BAD = {"a": 27, "b": 4, "s": 2**32, "v": [1, 20, 3, 40]}  # torture.circom: assert(s < 4294967296)


def fds() -> int:
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(scope="module")
def torture():
    return compiled("torture.circom", "bn128")


@pytest.mark.parametrize("how", ["wasm", "make_calculator", "native_fallback"])
def test_no_descriptor_per_calculator(torture, how, tmp_path):
    wasm = tmp_path / "circuit.wasm"  # the native engine keeps its program beside the .wasm: not in the fixtures
    shutil.copyfile(torture.wasm, wasm)

    def one():
        if how == "wasm":
            calc = WitnessCalculator(wasm)
            witness = calc.calculate(GOOD)
        elif how == "make_calculator":
            calc = make_calculator(wasm, "wasm")
            witness, source = calc.calculate_with_source(GOOD)
            assert source == "wasm"
        else:
            calc = NativeCalculator(wasm, cache=False)
            witness = calc.calculate_on_wasm(GOOD)
        calc.close()
        return witness.values.tobytes()

    expect = one()
    before = fds()
    for _ in range(N):
        assert one() == expect
    assert fds() == before


def test_no_descriptor_or_store_per_failed_run(torture):
    calc = WitnessCalculator(torture.wasm)
    good = calc.calculate(GOOD).values.tobytes()
    dropped = []
    before = fds()
    for _ in range(N):
        dropped.extend(weakref.ref(i) for i in calc._idle)  # the instance the failing run takes, then drops
        with pytest.raises(CircuitAssertError):
            calc.calculate(BAD)
        assert calc.calculate(GOOD).values.tobytes() == good
    assert fds() == before
    assert len(dropped) == N and all(r() is None for r in dropped[:-1])  # freed, not held by wasmtime's table
    assert words_to_u64(calc.calculate_words(GOOD)).tobytes() == good


@pytest.mark.parametrize("engine", ["wasm", "auto"])
def test_the_daemons_witness_path_keeps_no_descriptor_per_key_load(engine, tmp_path, monkeypatch, wasm_cache):
    """The engine as the daemon runs it: a key loaded with its .wasm, a job from inputs, the key unloaded; 50
    times (each load makes the key's calculator anew). Each proof is checked against the key's vk. A finished
    job keeps its key, and so the key's calculator, while the engine remembers it (the last KEEP_FINISHED jobs,
    1024): cut to 2 here, so what stays is what the witness engine itself leaks (before: a memfd per load)."""
    import oracle
    from snarkd.engine import COMPLETED, Engine, EngineConfig, jobtable
    from snarkd.verifier import verify

    monkeypatch.setattr(jobtable, "KEEP_FINISHED", 2)
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    key = tmp_path / "chain.zkey"
    shutil.copyfile(circ.zkey, key)
    shutil.copyfile(circ.wasm, tmp_path / "chain.wasm")
    vk = json.loads(circ.vk.read_text())
    eng = Engine(EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1, memory_budget="256MiB",
                              witness_engine=engine, wasm_cache=str(wasm_cache)))  # the engine reads no environment
    eng.start()
    try:
        def one(i):
            eng.keys.load("k", str(key))
            job = eng.await_(eng.submit("k", inputs=[{"k": 3, "x": 2 + i}]).id, 60)
            assert job.state == COMPLETED, job.error
            p = job.partitions[0]
            assert verify(vk, p.result.public, p.result.proof)
            eng.keys.unload("k")

        for i in range(4):  # past the 2 finished jobs kept
            one(i)
        before = fds()
        for i in range(4, N + 4):
            one(i)
        assert fds() == before
    finally:
        eng.stop(0)
        assert eng.join_workers(10)
