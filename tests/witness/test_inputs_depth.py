"""input.json nested deeper than any circuit's signals: a clean InputError, not a RecursionError."""

from __future__ import annotations

import pytest

from snarkd.errors import InputError
from snarkd.witness.inputs import MAX_INPUT_DEPTH, check_depth, load_input_json, qualify


def nested(depth: int):
    v = "1"
    for _ in range(depth):
        v = [v]
    return v


@pytest.mark.parametrize("depth", [1000, 100000])
def test_deep_json_text_is_bad_input(tmp_path, depth):
    p = tmp_path / "input.json"
    p.write_text('{"a": ' + "[" * depth + "1" + "]" * depth + "}")
    with pytest.raises(InputError, match="input.json.*nest"):
        load_input_json(p)


def test_depth_bound_applies_to_objects_given_in_process():
    qualify({"a": nested(MAX_INPUT_DEPTH - 1)})  # a deep but legal array
    with pytest.raises(InputError, match="nest more than"):
        qualify({"a": nested(MAX_INPUT_DEPTH + 5)})
    with pytest.raises(InputError):
        check_depth({"a": {"b": nested(3000)}})
