"""[limits] checked by the engine: partitions, inputs JSON size and depth, unfinished jobs in all."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snarkd.config import EngineConfig
from snarkd.engine import Busy, Engine, KeyStore, TooLarge
from snarkd.engine.limits import check_request, json_depth, object_depth

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='ab[]{}"\\ ,:'),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                               st.text(alphabet='k[]{}"\\', max_size=3), inner, max_size=3), max_leaves=25)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(json_values)
def test_json_depth_matches_the_parsed_value(value):
    """Counted before parsing, brackets inside strings (and escaped quotes) left out: the real depth.
    (The count once took a "]" inside a string for a closing bracket: {"]": []} counted 1, not 2.)"""
    text = json.dumps(value)
    assert json_depth(text.encode()) == object_depth(json.loads(text))


def test_depth_of_a_text_too_deep_to_parse():
    deep = b"[" * 100_000 + b"]" * 100_000
    assert json_depth(deep) == 100_000
    cfg = EngineConfig(max_inputs_depth=32)
    with pytest.raises(TooLarge, match=r"nests arrays or objects \d+ deep, more than \[limits\] max_inputs_depth \(32\)"):
        check_request(cfg, inputs=[deep.decode()])


def test_request_bounds():
    cfg = EngineConfig(max_partitions=2, max_inputs_bytes=100)
    check_request(cfg, witnesses=[b"x", b"y"])
    with pytest.raises(TooLarge, match=r"\[limits\] max_partitions \(2\)"):
        check_request(cfg, witnesses=[b"x"] * 3)
    with pytest.raises(TooLarge, match=r"\[limits\] max_partitions \(2\)"):
        check_request(cfg, inputs=[{}] * 3)
    with pytest.raises(TooLarge, match=r"partition 1: 101 bytes of JSON, more than \[limits\] max_inputs_bytes"):
        check_request(cfg, inputs=["{}", "{" + " " * 99 + "}"])


@pytest.mark.slow
def test_unfinished_jobs_are_bounded(chain_bn128):
    circ, wtns = chain_bn128
    keys = KeyStore(wasm_cache="off")
    eng = Engine(EngineConfig(synthesis_workers=1, threads=1, max_queued_jobs=2, debug_delay_s=0.5), keys)
    keys.load("chain", circ.zkey)
    eng.start()
    try:
        data = wtns.read_bytes()
        jobs = [eng.submit("chain", data) for _ in range(2)]
        with pytest.raises(Busy, match=r"2 jobs are unfinished, the most \[limits\] max_queued_jobs \(2\) allows"):
            eng.submit("chain", data)
        for j in jobs:
            assert eng.await_(j.id, 60).state == "COMPLETED"
        assert eng.await_(eng.submit("chain", data).id, 60).state == "COMPLETED"  # room again
    finally:
        eng.stop(5)
