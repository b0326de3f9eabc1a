"""Witnesses from inputs in the engine: the [witness] engine setting, the native program built when the
key loads, witnesses counted by how they were made, and the safety net (a native witness whose proof
fails self-verification is recomputed on the wasm engine and proved again, never returned wrong)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import oracle
from snarkd.engine import COMPLETED, Engine, EngineConfig
from snarkd.errors import InputError
from snarkd.formats.wtns import Witness
from snarkd.verifier import verify
from snarkd.witness import NativeCalculator, WitnessCalculator

INPUTS = {"k": 3, "x": 2}


def make(circ, engine: str, tmp_path) -> Engine:
    eng = Engine(EngineConfig(synthesis_workers=2, threads=1, workers_per_device=1, memory_budget="256MiB",
                              witness_engine=engine))
    key = tmp_path / "chain.zkey"  # beside its own copy of the wasm: the program is written there
    shutil.copy(circ.zkey, key)
    shutil.copy(circ.wasm, tmp_path / "chain.wasm")
    eng.keys.load("k", str(key))
    return eng


@pytest.mark.parametrize("engine, source", [("native", "native"), ("auto", "native"), ("wasm", "wasm")])
def test_inputs_jobs_on_each_engine(chain_bn128, tmp_path, running, engine, source):
    circ, _ = chain_bn128
    eng = running(make(circ, engine, tmp_path))
    calc = eng.keys.get("k").require_wasm()
    assert isinstance(calc, NativeCalculator if source == "native" else WitnessCalculator)
    if source == "native":  # built when the key loaded, kept beside the wasm
        assert calc.loaded_from == tmp_path / "chain.wasm.wprog"
    job = eng.await_(eng.submit("k", inputs=[INPUTS, {"k": 5, "x": 7}]).id, 60)
    assert job.state == COMPLETED, job.error
    vk = json.loads(circ.vk.read_text())
    assert all(verify(vk, p.result.public, p.result.proof) for p in job.partitions)
    jobs = eng.status().jobs
    assert getattr(jobs, f"witness_{source}") == 2 and jobs.witness_failed == 0
    assert sum(getattr(jobs, f"witness_{s}") for s in ("native", "recorded", "wasm")) == 2


def test_native_engine_refuses_a_key_whose_circuit_cannot_be_native(chain_bn128, tmp_path):
    circ, _ = chain_bn128
    (tmp_path / "chain.wasm").write_bytes(b"\0asm\1\0\0\0")  # a module with nothing in it
    shutil.copy(circ.zkey, tmp_path / "chain.zkey")
    eng = Engine(EngineConfig(threads=1, memory_budget="256MiB", witness_engine="native"))
    with pytest.raises(InputError, match="no native witness program"):
        eng.keys.load("k", str(tmp_path / "chain.zkey"))
    with pytest.raises(Exception):
        eng.keys.get("k")


def test_a_native_witness_whose_proof_fails_is_proved_again_from_the_wasm(chain_bn128, tmp_path, running,
                                                                           monkeypatch, caplog):
    circ, _ = chain_bn128
    eng = running(make(circ, "native", tmp_path))
    calc = eng.keys.get("k").require_wasm()
    real = calc.calculate_with_source

    def wrong(inputs, log=None, frame=None):  # a native engine bug: one witness value off by one
        w, source = real(inputs, log=log, frame=frame)
        values = np.array(w.values)
        values[-1, 0] += 1
        return Witness(w.prime, values), source

    monkeypatch.setattr(calc, "calculate_with_source", wrong)
    job = eng.await_(eng.submit("k", inputs=[INPUTS]).id, 60)
    assert job.state == COMPLETED, job.error
    p = job.partitions[0]
    assert verify(json.loads(circ.vk.read_text()), p.result.public, p.result.proof)
    ref = oracle.Circuit.witness(circ, INPUTS)  # snarkjs's witness: the public signals it gives
    from snarkd.formats.wtns import read_wtns

    w = read_wtns(ref)
    assert p.result.public == [str(w.value(i)) for i in range(1, 1 + len(p.result.public))]
    jobs = eng.status().jobs
    assert jobs.witness_failed == 1 and jobs.witness_native == 1
    assert "witness_wasm" in p.timings
    assert any("failed self-verification" in r.message for r in caplog.records)


@pytest.mark.parametrize("setting, wanted", [("auto", True), ("off", False)])
def test_the_compiled_setting_reaches_each_keys_calculator(chain_bn128, tmp_path, setting, wanted):
    """[witness] compiled, as the engine's witness_compiled, is what a key's native calculator asks before it runs a
    compiled library (witness/compiled): "off" keeps a daemon's synthesis workers off a library a user built."""
    circ, _ = chain_bn128
    shutil.copy(circ.zkey, tmp_path / "chain.zkey")
    shutil.copy(circ.wasm, tmp_path / "chain.wasm")
    eng = Engine(EngineConfig(threads=1, memory_budget="256MiB", witness_engine="native", witness_compiled=setting))
    eng.keys.load("k", str(tmp_path / "chain.zkey"))
    calc = eng.keys.get("k").require_wasm()
    assert isinstance(calc, NativeCalculator) and calc._compiled_wanted() is wanted
