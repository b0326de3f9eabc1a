"""formats.json_text's parse, dumps_sorted and dumps_indented against the json module they stand in for: the same value, the same
text, the same exception (type and message) for every input, valid or not."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snarkd.formats.json_text import dumps_indented, dumps_sorted, parse

TEXTS = [
    "0", " 1 ", "\t\n\r[1, 2]\r\n", '{"a": [1, {"b": null}], "c": "\\u00e9\\ud83d\\ude00"}', str(2**200),
    "-0", "1e400", "-1.5e-3", "[]", "{}", '"x"', "true", "false", "null",
    # errors
    "", " ", "[1,]", "[1] x", "[1] [2]", "\ufeff[1]", "NaN", "[Infinity, -Infinity]", "01", '"\\x"', '"a\nb"',
    "{1: 2}", '{"a" 1}', "[1, 2", "1" * 5000, "\u00a0[1]", "[1]\u00a0", "[1]\x00", "tru", "[-]",
]


def _outcome(fn, *args, **kwargs):
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception itself is what is compared
        return "raised", type(exc), str(exc)
    return "value", repr(value)  # repr: NaN != NaN, and 1 == 1.0 == True must not pass for each other


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


@pytest.mark.parametrize("text", TEXTS)
def test_parse_is_json_loads(text):
    assert _outcome(parse, text) == _outcome(json.loads, text)
    assert _outcome(parse, text, parse_constant=_no_constant) == _outcome(json.loads, text,
                                                                          parse_constant=_no_constant)
    raw = text.encode("utf-8", "surrogatepass")
    assert _outcome(parse, raw) == _outcome(json.loads, raw)


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf[1]", "[1]".encode("utf-16"), "[1]".encode("utf-32-le"), b"\xff[1]",
                                 b'"\xc3"'])
def test_parse_of_bytes_is_json_loads(raw):
    """Bytes json.loads reads by its own encoding detection (a BOM, UTF-16/32) or refuses."""
    assert _outcome(parse, raw) == _outcome(json.loads, raw)


def test_parse_keeps_integers_above_2_53_exact():
    big = 2**253 + 1
    assert parse(f'{{"x": [{big}, -{big}]}}') == {"x": [big, -big]}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_parse_and_dumps_sorted_are_json_on_any_value(value):
    text = json.dumps(value)
    assert _outcome(parse, text) == _outcome(json.loads, text)
    assert dumps_sorted(value) == json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("value", [{"b": 1, "a": [1.5, math.inf, "é"]}, "plain", {"x": {1, 2}}, {1: "a", "1": "b"},
                                   {"a": object()}, [b"bytes"], {("t",): 1}])
def test_dumps_sorted_is_json_dumps(value):
    assert _outcome(dumps_sorted, value) == _outcome(json.dumps, value, sort_keys=True)


def test_a_circular_value_is_json_dumps_error():
    loop: list = []
    loop.append(loop)
    assert _outcome(dumps_sorted, loop) == _outcome(json.dumps, loop, sort_keys=True)


@given(JSON_VALUES, st.sampled_from([0, 1, 2, 4]))
def test_dumps_indented_is_json_dumps_on_any_value(value, indent):
    assert dumps_indented(value, indent) == json.dumps(value, indent=indent)


@pytest.mark.parametrize("value", [{"pi_a": ["1", "2", "1"], "pi_b": [["3", "4"], ["5", "6"], ["1", "0"]],
                                    "protocol": "groth16", "curve": "bn128"}, ["7", "\u00e9\"\\"], [], {}, [[], {}],
                                   {1: "a"}, [1.5, math.inf, 2**70], [None, True, False], ("t", ["u"])])
def test_dumps_indented_is_snarkjs_text(value):
    """proof.json and public.json as snarkjs writes them (json.dump, one-space indentation), and whatever else."""
    assert _outcome(dumps_indented, value) == _outcome(json.dumps, value, indent=1)
