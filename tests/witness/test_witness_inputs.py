"""Input handling without a circuit: qualification (buses), flattening, value parsing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from snarkd.curves.params import BN254
from snarkd.witness.errors import InputValueError
from snarkd.witness.inputs import flatten, qualify, split_hash, to_int, values_to_words

P = BN254.r


def test_qualify_matches_circom_generated_calculator():
    inputs = {"a": 1, "p": {"x": 2, "y": [3, 4]}, "ps": [{"x": 5}, {"x": 6}], "m": [[1, 2], [3, 4]], "e": []}
    assert qualify(inputs) == {
        "a": 1,
        "p.x": 2,
        "p.y": [3, 4],
        "ps[0].x": 5,
        "ps[1].x": 6,
        "m": [[1, 2], [3, 4]],
        "e": [],
    }


def test_qualify_rejects_mixed_arrays():
    with pytest.raises(InputValueError):
        qualify({"a": [{"x": 1}, 2]})


def test_flatten_row_major():
    assert flatten([[1, [2, 3]], [], [[4]], np.array([[5, 6], [7, 8]])]) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert flatten(9) == [9]


@pytest.mark.parametrize(
    "v, n",
    [("12", 12), (" 12 ", 12), ("+7", 7), ("-3", -3), ("0x1F", 31), ("0XfF", 255), ("0o17", 15), ("0b101", 5),
     (True, 1), (False, 0), (3.0, 3), (np.uint64(2**63), 2**63), (2**300, 2**300)],
)
def test_to_int(v, n):
    assert to_int(v) == n


@pytest.mark.parametrize("v", ["", "1.0", "1e3", "0x", "-0x1", "12a", None, 1.5, float("inf"), [1], object()])
def test_to_int_rejects(v):
    with pytest.raises(ValueError):
        to_int(v)


def test_split_hash():
    assert split_hash(0x0123456789ABCDEF) == (0x01234567, 0x89ABCDEF)


@given(st.lists(st.integers(min_value=-(P - 1), max_value=P - 1), max_size=40))
def test_values_to_words_roundtrip(vals):
    words = values_to_words("s", vals, vals, P, 8)
    assert words.shape == (len(vals), 8) and words.dtype == np.dtype("<u4")
    back = [int.from_bytes(w.tobytes(), "little") for w in words]
    assert back == [v % P for v in vals]


def test_values_to_words_error_path_names_nested_index():
    value = [[1, 2], [3, P]]
    with pytest.raises(InputValueError) as ei:
        values_to_words("sig", value, flatten(value), P, 8)
    assert "'sig[1][1]'" in str(ei.value)
    value = np.array([[1, 2], [3, 4]], dtype=object)
    value[0, 1] = "x"
    with pytest.raises(InputValueError) as ei:
        values_to_words("sig", value, flatten(value), P, 8)
    assert "'sig[0][1]'" in str(ei.value)


@pytest.mark.parametrize("value, reason", [
    (3.5, "a number that has a fraction"), (float("nan"), "not finite"), (None, "not an integer: null"),
    ("12a", "not decimal or 0x/0o/0b digits"), ("7" * 5000, "a decimal string of 5000 digits"),
    (b"\x01", "not an integer: a bytes")])
def test_value_errors_name_the_signal_and_the_reason_never_the_value(value, reason):
    """Inputs are a proof's secrets and the daemon logs its errors: the message says which input and why, and
    reads as a sentence (no "value None is a NoneType is not an integer", no "is Exceeds the limit")."""
    with pytest.raises(InputValueError) as ei:
        values_to_words("secret", [1, value], [1, value], P, 8)
    msg = str(ei.value)
    assert msg.startswith("input 'secret[1]': ") and reason in msg, msg
    assert "NoneType" not in msg and "Exceeds" not in msg and "value" not in msg
    if isinstance(value, (str, bytes)) or value == 3.5:
        assert str(value) not in msg and repr(value) not in msg


def test_a_value_out_of_the_field_is_not_echoed():
    big = P + 123456789
    with pytest.raises(InputValueError) as ei:
        values_to_words("secret", [big], [big], P, 8)
    assert str(big) not in str(ei.value) and "not less than the field prime" in str(ei.value)


# The string forms JS BigInt takes, as the regular expressions the string tests replaced (re is kept out of a
# cached `snarkd witness`'s imports): both must say the same of every string.
_DEC_RE = r"[+-]?[0-9]+\Z"
_PREFIXED_RE = r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)\Z"
_EDGE_STRINGS = ["", "+", "-", "0", "-0", "+12", "1-", "--1", "0x", "0X1f", "0xg", "0o8", "0O17", "0b2", "0B101",
                 "00x1", "x1f", "0x1F ", "\u0661", "\u00b2", "1\u00b2", "0x\u0661", "1\n", "0b1\n", "１２"]


@given(st.one_of(st.sampled_from(_EDGE_STRINGS), st.text(alphabet="0123456789+-xXoObBaAfFgG \n\u0661\u00b2"),
                 st.text()))
def test_string_forms_match_the_regular_expressions(s):
    import re

    from snarkd.witness.inputs import _is_decimal, _is_prefixed

    assert _is_decimal(s) == bool(re.match(_DEC_RE, s))
    assert _is_prefixed(s) == bool(re.match(_PREFIXED_RE, s))


_LEAF = st.one_of(st.integers(-2**300, 2**300), st.booleans(), st.integers(0, 10**80).map(str),
                  st.text("0123456789+-x _", max_size=6), st.floats(allow_nan=True, allow_infinity=True))


def _reference_flat(a) -> list:
    """JS flatArray, element by element (what flatten did before its whole-list fast path)."""
    if isinstance(a, (list, tuple)):
        return [x for v in a for x in _reference_flat(v)]
    if isinstance(a, np.ndarray):
        return a.ravel().tolist()
    return [a]


@given(st.one_of(st.lists(st.integers(0, 2**300), max_size=30), st.lists(st.integers(0, 10**90).map(str), max_size=30),
                 st.lists(_LEAF, max_size=12)))
def test_values_to_bytes_fast_paths_answer_as_to_int_value_by_value(values):
    """values_to_bytes reads plain ints and ASCII digit strings by C loops (_plain_ints); the bytes, or the error
    and its message, are those of to_int applied value by value."""
    from snarkd.witness import inputs as inp

    def encode(fast: bool):
        real = inp._plain_ints
        inp._plain_ints = real if fast else (lambda flat: None)
        try:
            return inp.values_to_bytes("in", values, list(values), P, 8)
        except (InputValueError, ValueError) as exc:
            return type(exc), str(exc)
        finally:
            inp._plain_ints = real

    assert encode(True) == encode(False)


@given(st.recursive(_LEAF, lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids), max_leaves=30))
def test_flatten_takes_arrays_of_leaves_whole_and_keeps_the_order(nested):
    assert flatten(nested) == _reference_flat(nested)
    assert flatten([np.arange(6).reshape(2, 3), [7, [8, np.int64(9)]]]) == [0, 1, 2, 3, 4, 5, 7, 8, np.int64(9)]
