"""Circuit inputs (input.json) as circom's witness_calculator.js reads them.

* Top-level keys name input signals of the main component. Nested objects are
  bus inputs and are qualified the way circom >= 2.2's generated calculator does
  (`{"a": {"b": 1}}` -> `a.b`; `{"a": [{"b": 1}, {"b": 2}]}` -> `a[0].b`, `a[1].b`).
* Arrays, however deeply nested, are flattened in row-major order.
* A value may be an integer (JSON number, Python int or numpy integer), a decimal
  string with optional sign, or a `0x`/`0o`/`0b` string (what JS `BigInt(v)`
  accepts); negative values `-p < v < 0` are taken mod p (circom's `normalize`).
  Unlike circom/snarkjs, which reduce silently, a value `>= p` (or `<= -p`) is
  an error naming the signal, as is anything that is not an integer. Errors name
  the signal and the reason, never the value: inputs of a zero-knowledge proof are
  secrets, and the daemon logs its errors.
* Signal names are addressed by FNV-1a 64 of the name (`fnv_hash`), split into
  two 32-bit halves, as circom does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from snarkd.formats import json_text
from snarkd.formats.json_text import MAX_INPUT_DEPTH
from snarkd.witness.errors import InputValueError

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

_DEC = re.compile(r"[+-]?[0-9]+\Z")
_PREFIXED = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)\Z")


def fnv_hash(name: str) -> int:
    """FNV-1a 64 over the name's UTF-16 code units (JS `charCodeAt`)."""
    h = _FNV_OFFSET
    data = name.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * _FNV_PRIME) & _MASK64
    return h


def split_hash(h: int) -> tuple[int, int]:
    """(msb, lsb) 32-bit halves of a 64-bit hash."""
    return h >> 32, h & 0xFFFFFFFF


# Nesting deeper than MAX_INPUT_DEPTH is refused before any recursive walk: a circuit's
# signal arrays have a handful of dimensions, and Python's recursion limit (~1000)
# must never be what stops a hostile input.


def check_depth(obj: Any, limit: int = MAX_INPUT_DEPTH, name: str = "the inputs") -> None:
    """InputError if arrays/objects nest deeper than `limit` (iterative: no recursion)."""
    from snarkd.errors import InputError

    stack = [(obj, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth > limit:
            raise InputError(f"{name}: arrays or objects nest more than {limit} deep")
        stack.extend((c, depth + 1) for c in children)


def load_input_json(path: str | os.PathLike) -> dict:
    """Read input.json; errors name the file."""
    from snarkd.errors import InputError

    p = Path(path)
    obj = json_text.load(p, "inputs", max_depth=MAX_INPUT_DEPTH)
    check_depth(obj, name=str(p))
    if not isinstance(obj, dict):
        raise InputError(f"{p}: the inputs must be a JSON object mapping signal names to values, not {type(obj).__name__}")
    return obj


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


def _flat(a: Any, out: list) -> None:
    if isinstance(a, (list, tuple)):
        for x in a:
            _flat(x, out)
    elif isinstance(a, np.ndarray):
        out.extend(a.ravel().tolist())
    else:
        out.append(a)


def flatten(a: Any) -> list:
    """Row-major flattening of nested lists (JS flatArray)."""
    out: list = []
    _flat(a, out)
    return out


def qualify(inputs: dict) -> dict[str, Any]:
    """Bus-qualified signal names -> (possibly nested) values, in input order."""
    from snarkd.errors import InputError

    if not isinstance(inputs, dict):
        raise InputError(f"the inputs must be an object mapping signal names to values, not {type(inputs).__name__}")
    check_depth(inputs)
    out: dict[str, Any] = {}

    def q(prefix: str, value: Any) -> None:
        if isinstance(value, (list, tuple)):
            flat = flatten(value)
            n_obj = sum(1 for v in flat if _is_object(v))
            if n_obj and n_obj != len(flat):
                raise InputValueError(f"input '{prefix}': an array mixes objects (bus values) with plain values", prefix)
            if n_obj:
                ql(prefix, value)
            else:
                out[prefix] = value
        elif isinstance(value, dict):
            for k, v in value.items():
                q(str(k) if prefix == "" else f"{prefix}.{k}", v)
        else:
            out[prefix] = value

    def ql(prefix: str, value: Any) -> None:
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                ql(f"{prefix}[{i}]", v)
        else:
            q(prefix, value)

    q("", inputs)
    return out


def _path(value: Any, flat_index: int) -> str:
    """The `[i][j]` suffix of the flat_index-th leaf of a nested array (error path only)."""
    counter = [0]

    def walk(v: Any, idx: str) -> str | None:
        if isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                r = walk(x, f"{idx}[{i}]")
                if r is not None:
                    return r
            return None
        if isinstance(v, np.ndarray):
            n = v.size
            if counter[0] + n > flat_index:
                return idx + "".join(f"[{i}]" for i in np.unravel_index(flat_index - counter[0], v.shape))
            counter[0] += n
            return None
        if counter[0] == flat_index:
            return idx
        counter[0] += 1
        return None

    return walk(value, "") or ""


MAX_DIGITS = 4000  # decimal digits (after leading zeros): far above any field element (78 for BN254's r)
_KIND = {type(None): "null", str: "a string", list: "an array", tuple: "an array", dict: "an object"}


def to_int(v: Any) -> int:
    """JS BigInt(v) for the value kinds an input may hold; ValueError saying why not otherwise (the reason
    only: a message never quotes the value, which may be a secret)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("not an integer: a number that is not finite")
        if not v.is_integer():
            raise ValueError("not an integer: a number that has a fraction")
        return int(v)
    if isinstance(v, str):
        s = v.strip()
        if _DEC.match(s):
            if len(s.lstrip("+-").lstrip("0")) > MAX_DIGITS:
                raise ValueError(f"a decimal string of {len(s)} digits: larger than any field element")
            return int(s, 10)
        if _PREFIXED.match(s):
            return int(s, 0)
        raise ValueError("not an integer: a string that is not decimal or 0x/0o/0b digits")
    raise ValueError(f"not an integer: {_KIND.get(type(v), 'a ' + type(v).__name__)}")


def values_to_words(name: str, value: Any, flat: list, prime: int, n32: int) -> np.ndarray:
    """Field elements as little-endian 32-bit words, shape (len(flat), n32)."""
    n8 = 4 * n32
    neg_limit = -prime
    try:
        ints = [to_int(x) for x in flat]
    except ValueError:
        for i, x in enumerate(flat):
            try:
                to_int(x)
            except ValueError as exc:
                where = name + _path(value, i)
                raise InputValueError(f"input '{where}': {exc}", name) from None
        raise
    try:
        # Fast path: every value in [0, p).
        if ints and (max(ints) >= prime or min(ints) < 0):
            raise OverflowError
        data = b"".join([x.to_bytes(n8, "little") for x in ints])
    except OverflowError:
        fixed = []
        for i, x in enumerate(ints):
            if x >= prime or x <= neg_limit:
                where = name + _path(value, i)
                raise InputValueError(
                    f"input '{where}': not less than the field prime {prime} in absolute value"
                    " (circom/snarkjs would reduce it mod p; reduce it yourself if that is meant)",
                    name,
                ) from None
            fixed.append(x % prime)
        data = b"".join([x.to_bytes(n8, "little") for x in fixed])
    return np.frombuffer(data, dtype="<u4").reshape(len(ints), n32)


@dataclass(frozen=True)
class PreparedInput:
    """One input signal, ready to set: its name, hash halves and words (k, n32)."""

    name: str
    hash_msb: int
    hash_lsb: int
    words: np.ndarray

    @property
    def count(self) -> int:
        return int(self.words.shape[0])


def iter_signals(inputs: dict) -> Iterable[tuple[str, Any, list]]:
    """(qualified name, original value, flat values) for each input signal."""
    for name, value in qualify(inputs).items():
        yield name, value, flatten(value)
