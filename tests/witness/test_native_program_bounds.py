"""The native program stays bounded when traffic takes the wasm many ways (torture.circom: loops bounded by
values, a new path for most inputs): at most MAX_PATHS paths and MAX_PROGRAM_BYTES bytes, the paths replayed
least often dropped first (on a tie the oldest), the new one always kept; every witness still the wasm's."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import snarkd.witness.native as native
from snarkd.witness import NativeCalculator, WitnessCalculator
from wfixtures import compiled, wasm_cache  # noqa: F401


def distinct(k: int) -> dict:  # collatz and gcd take a new course for each k
    return {"a": 1000 + 37 * k, "b": 3 + k, "s": k, "v": [k, 20, 3, 40]}


@pytest.fixture
def torture(tmp_path):
    c = compiled("torture.circom", "bn128")
    wasm = tmp_path / "circuit.wasm"
    shutil.copyfile(c.wasm, wasm)
    return NativeCalculator(wasm, cache=False, strict=True), WitnessCalculator(wasm, cache=False)


def same(calc, ref, inputs) -> str:
    raw, source = calc.calculate_bytes(inputs)
    assert np.array_equal(np.frombuffer(bytes(raw), dtype="<u8").reshape(-1, 4), ref.calculate(inputs).values)
    return source


def test_the_paths_replayed_most_are_kept(torture, monkeypatch):
    calc, ref = torture
    monkeypatch.setattr(native, "CONTROL_FLOW_AFTER", 100)  # the bounds of recording misses (not the control-flow run)
    monkeypatch.setattr(native, "MAX_PATHS", 3)
    assert same(calc, ref, distinct(0)) == "recorded"
    for _ in range(3):
        assert same(calc, ref, distinct(0)) == "native"  # path of input 0: 3 hits
    for k in range(1, 8):
        assert same(calc, ref, distinct(k)) == "recorded"
        assert calc.program.n_paths <= 3
    assert same(calc, ref, distinct(0)) == "native"  # kept through 7 new shapes
    assert same(calc, ref, distinct(7)) == "native"  # the newest is kept too
    assert calc.dropped_paths >= 5
    hits = sorted(p["hits"] for p in calc.program.path_stats())
    assert hits[-1] >= 4


def test_the_byte_bound(torture, monkeypatch):
    calc, ref = torture
    monkeypatch.setattr(native, "CONTROL_FLOW_AFTER", 100)
    same(calc, ref, distinct(0))
    one = max(p["bytes"] for p in calc.program.path_stats())
    monkeypatch.setattr(native, "MAX_PROGRAM_BYTES", int(2.5 * one))
    for k in range(1, 6):
        assert same(calc, ref, distinct(k)) == "recorded"
        stats = calc.program.path_stats()
        assert sum(p["bytes"] for p in stats) <= int(2.5 * one) or len(stats) == 1
    assert same(calc, ref, distinct(5)) == "native"
    # the file holds what is kept: reloaded, the same paths
    again = NativeCalculator(calc.path, cache=False, strict=True)
    assert again.program.n_paths == calc.program.n_paths
    assert same(again, ref, distinct(5)) == "native"
