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
