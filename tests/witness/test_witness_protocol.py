"""The witness seam (witness/protocol.py): both engines are a `WitnessEngine` and give the same witness through
each of its calls, and `wasm_safety_net` is the one native -> wasm fallback after a failed self-check, the one
`snarkd fullprove` uses (the engine's is tests/engine/test_engine_witness.py and test_batch_verify.py)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import oracle
from snarkd.formats.wtns import Witness
from snarkd.witness import (NATIVE_SOURCES, NativeCalculator, WitnessCalculator, WitnessEngine, make_calculator,
                            wasm_safety_net)
from wfixtures import ARRAYS_INPUT, arrays, wasm_cache  # noqa: F401


@pytest.fixture
def engines(arrays, tmp_path):
    wasm = tmp_path / "circuit.wasm"  # the native program is kept beside it: not in the fixtures
    shutil.copyfile(arrays.wasm, wasm)
    return {"native": make_calculator(wasm, "native", sym=arrays.sym),
            "wasm": make_calculator(wasm, "wasm", sym=arrays.sym)}


def test_both_engines_are_a_witness_engine_and_agree(engines, arrays, tmp_path):
    expect = arrays.snarkjs_witness(ARRAYS_INPUT).read_bytes()
    assert isinstance(engines["native"], NativeCalculator) and isinstance(engines["wasm"], WitnessCalculator)
    for kind, calc in engines.items():
        assert isinstance(calc, WitnessEngine)
        assert calc.native is (kind == "native")
        assert calc.describe()["engine"] == kind
        w, source = calc.calculate_with_source(ARRAYS_INPUT)
        assert source == ("native" if kind == "native" else "wasm") or source in NATIVE_SOURCES
        values, source2 = calc.calculate_bytes(ARRAYS_INPUT)
        assert bytes(memoryview(values).cast("B")) == w.values.tobytes()
        assert calc.calculate_on_wasm(ARRAYS_INPUT).values.tobytes() == w.values.tobytes()
        out = tmp_path / f"{kind}.wtns"
        calc.calculate_to_file(ARRAYS_INPUT, out)
        assert out.read_bytes() == expect
        calc.close()


@pytest.mark.parametrize("source", ["native", "recorded", "control", "wasm"])
def test_the_safety_net_recomputes_only_native_witnesses_on_the_wasm(engines, source):
    calc = engines["native"]
    wasm_witness = engines["wasm"].calculate(ARRAYS_INPUT).values.tobytes()
    reports, attempts = [], []
    got = wasm_safety_net(calc, ARRAYS_INPUT, source, lambda w: attempts.append(w) or "proof",
                          report=lambda: reports.append(1))
    if source == "wasm":  # nothing to fall back on: the caller's failure stands
        assert got is None and reports == [] and attempts == []
    else:
        assert got == "proof" and reports == [1] and len(attempts) == 1
        assert attempts[0].values.tobytes() == wasm_witness
    assert wasm_safety_net(calc, None, "native", lambda w: "proof") is None  # the inputs are gone


@pytest.fixture
def chain_native(chain_circuit, tmp_path):
    wasm = tmp_path / "chain.wasm"
    shutil.copyfile(chain_circuit.circuit.wasm, wasm)
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps(chain_circuit.inputs))
    return chain_circuit, wasm, inp


def _off_by_one(monkeypatch, cls):
    real = cls.calculate_with_source

    def wrong(self, inputs, log=None):  # an engine bug: one witness value off by one
        w, source = real(self, inputs, log=log)
        values = np.array(w.values)
        values[-1, 0] += 1
        return Witness(w.prime, values), source

    monkeypatch.setattr(cls, "calculate_with_source", wrong)


def test_fullprove_falls_back_on_the_wasm_for_a_native_witness_whose_proof_fails(chain_native, tmp_path,
                                                                                  monkeypatch, capsys):
    from snarkd.cli import main

    case, wasm, inp = chain_native
    _off_by_one(monkeypatch, NativeCalculator)
    proof, public, wtns = tmp_path / "proof.json", tmp_path / "public.json", tmp_path / "w.wtns"
    rc = main(["fullprove", str(inp), str(wasm), str(case.zkey), str(proof), str(public), "--wtns", str(wtns),
               "--engine", "native", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "failed self-verification; recomputing the witness on the wasm engine" in err
    assert oracle.snarkjs_verify(case.circuit.vk, public, proof)
    assert wtns.read_bytes() == case.wtns.read_bytes()  # the wasm engine's witness replaced the wrong one


def test_fullprove_has_no_fallback_for_a_wasm_witness(chain_native, tmp_path, monkeypatch, capsys):
    from snarkd.cli import main

    case, wasm, inp = chain_native
    _off_by_one(monkeypatch, WitnessCalculator)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    rc = main(["fullprove", str(inp), str(wasm), str(case.zkey), str(proof), str(public), "--engine", "wasm",
               "--quiet"])
    err = capsys.readouterr().err
    assert rc == 4, err
    assert "recomputing" not in err and not proof.exists()


def test_a_replay_writes_into_the_frame_it_is_given_and_the_wasm_engine_ignores_it(engines):
    """protocol.FrameAllocator: the daemon's engine hands page-locked memory to a native replay so the witness's GPU
    upload is one transfer; the witness then lies in that memory and equals the one made in the engine's own. An
    allocator that answers None (a frame too large to pin) leaves the replay its own memory."""
    calc, wasm = engines["native"], engines["wasm"]
    expect = wasm.calculate(ARRAYS_INPUT).values.tobytes()
    calc.calculate(ARRAYS_INPUT)  # a first run may record; the frame is the replay's
    given = []

    def frame(nbytes: int):
        given.append(np.full(nbytes, 0xA5, dtype=np.uint8))  # garbage a replay must overwrite where it reads
        return given[-1]

    w, source = calc.calculate_with_source(ARRAYS_INPUT, frame=frame)
    assert source == "native" and len(given) == 1 and given[0].nbytes >= w.values.nbytes
    assert np.shares_memory(w.values, given[0]) and w.values.tobytes() == expect
    w2, _ = calc.calculate_with_source(ARRAYS_INPUT, frame=lambda nbytes: None)
    assert w2.values.tobytes() == expect and not np.shares_memory(w2.values, given[0])
    w3, source3 = wasm.calculate_with_source(ARRAYS_INPUT, frame=frame)
    assert source3 == "wasm" and len(given) == 1 and w3.values.tobytes() == expect
