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
from itertools import repeat

TYPE_CHECKING = False  # typing, logging, dataclasses and pathlib stay out of `snarkd witness`'s imports (~25 ms)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

from snarkd.formats import json_text
from snarkd.formats.json_text import MAX_INPUT_DEPTH
from snarkd.witness.errors import InputValueError, MissingInputError, SignalSizeError, UnknownSignalError

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

# The digits of a "0x"/"0o"/"0b" string by its prefix letter. Strings are told by str methods and these sets, not by
# regular expressions: re and the enum it imports were ~3 ms of a one-shot `snarkd witness`.
_HEX, _OCT, _BIN = frozenset("0123456789abcdefABCDEF"), frozenset("01234567"), frozenset("01")
_RADIX_DIGITS = {"x": _HEX, "X": _HEX, "o": _OCT, "O": _OCT, "b": _BIN, "B": _BIN}


def _is_decimal(s: str) -> bool:
    """s matches [+-]?[0-9]+ (ASCII digits only, as the JS grammar)."""
    body = s[1:] if s[:1] in ("+", "-") else s
    return body != "" and body.isascii() and body.isdigit()


def _is_prefixed(s: str) -> bool:
    """s matches 0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)."""
    digits = _RADIX_DIGITS.get(s[1:2]) if s[:1] == "0" else None
    return digits is not None and len(s) > 2 and digits.issuperset(s[2:])


def fnv_hash(name: str) -> int:
    """FNV-1a 64 over the name's UTF-16 code units (JS `charCodeAt`)."""
    h = _FNV_OFFSET
    for ch in name:  # not name.encode("utf-16-le"): its codec's import was ~0.4 ms of a one-shot witness
        c = ord(ch)
        if c > 0xFFFF:  # a surrogate pair, as a JS string holds it
            c -= 0x10000
            h = ((h ^ (0xD800 | c >> 10)) * _FNV_PRIME) & _MASK64
            c = 0xDC00 | (c & 0x3FF)
        h = ((h ^ c) * _FNV_PRIME) & _MASK64
    return h


def split_hash(h: int) -> tuple[int, int]:
    """(msb, lsb) 32-bit halves of a 64-bit hash."""
    return h >> 32, h & 0xFFFFFFFF


# Nesting deeper than MAX_INPUT_DEPTH is refused before any recursive walk: a circuit's
# signal arrays have a handful of dimensions, and Python's recursion limit (~1000)
# must never be what stops a hostile input.


def _leaves(values, also: type | None = None) -> bool:
    """Whether none of `values` is a list, tuple or dict (nor an `also`), by their types alone: a set made by C
    loops, not an isinstance per value in Python (a signal's array of numbers is taken whole; the daemon's
    workers held the GIL for these walks, value by value, for every request from inputs)."""
    return not any(issubclass(k, (list, tuple, dict)) or (also is not None and issubclass(k, also))
                   for k in set(map(type, values)))


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
        if not _leaves(children):
            stack.extend((c, depth + 1) for c in children)


def load_input_json(path: str | os.PathLike, warn: Callable[[str], None] | None = None) -> dict:
    """Read input.json; errors name the file. warn(message) hears of integers snarkjs would read as another
    number (rounded_by_json_parse); by default the "snarkd.witness" logger does."""
    from snarkd.errors import InputError

    p = os.fspath(path)
    obj = json_text.load(p, "inputs", max_depth=MAX_INPUT_DEPTH)
    check_depth(obj, name=str(p))
    if not isinstance(obj, dict):
        raise InputError(f"{p}: the inputs must be a JSON object mapping signal names to values, not {type(obj).__name__}")
    rounded = rounded_by_json_parse(obj)
    if rounded:
        more = f" (and {len(rounded) - 3} more)" if len(rounded) > 3 else ""
        text = (f"{p}: {', '.join(rounded[:3])}{more}: an integer above 2^53 written as a JSON number; snarkd "
                "uses it exactly, snarkjs and circom's witness_calculator.js (JSON.parse) round it to the nearest "
                "double and compute another witness. Write it as a string to get the same witness from both.")
        if warn is None:
            import logging

            warn = logging.getLogger("snarkd.witness").warning
        warn(text)
    return obj


JS_SAFE = 2**53  # beyond, not every integer is a double: JSON.parse rounds


def rounded_by_json_parse(obj: Any) -> list[str]:
    """Where the inputs hold an integer (a JSON number, not a string) that JSON.parse reads as another number:
    its path (`a`, `b[2][0]`, `bus.x`), never its value (inputs may be secret)."""
    out: list[str] = []
    stack: list[tuple[str, Any]] = [(k, v) for k, v in reversed(list(obj.items()))]
    while stack:  # iterative: the depth is bounded (check_depth), the width is not
        path, v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            if abs(v) > JS_SAFE and (v.bit_length() > 1024 or int(float(v)) != v):  # > 1024 bits: Infinity
                out.append(path)
        elif isinstance(v, dict):
            stack.extend((f"{path}.{k}", c) for k, c in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", c) for i, c in reversed(list(enumerate(v))))
    return out


def _ndarray_type():
    """numpy's ndarray where numpy is already loaded (inputs given as arrays come from a process that
    imported it), else None: the native witness path runs without numpy."""
    import sys

    np = sys.modules.get("numpy")
    return np.ndarray if np is not None else None


def _flat(a: Any, out: list, nd=None) -> None:
    if isinstance(a, (list, tuple)):
        if _leaves(a, nd):
            out.extend(a)
            return
        for x in a:
            _flat(x, out, nd)
    elif nd is not None and isinstance(a, nd):
        out.extend(a.ravel().tolist())
    else:
        out.append(a)


def flatten(a: Any) -> list:
    """Row-major flattening of nested lists (JS flatArray)."""
    out: list = []
    _flat(a, out, _ndarray_type())
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
            kinds = set(map(type, flat))
            n_obj = sum(issubclass(k, dict) for k in kinds)  # kinds of objects, not how many
            if n_obj and n_obj != len(kinds):
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
        nd = _ndarray_type()
        if nd is not None and isinstance(v, nd):
            import numpy as np

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
    if type(v).__module__ == "numpy" and hasattr(v, "__index__"):  # numpy integers, without importing numpy
        return int(v.__index__())
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("not an integer: a number that is not finite")
        if not v.is_integer():
            raise ValueError("not an integer: a number that has a fraction")
        return int(v)
    if isinstance(v, str):
        s = v.strip()
        if _is_decimal(s):
            if len(s.lstrip("+-").lstrip("0")) > MAX_DIGITS:
                raise ValueError(f"a decimal string of {len(s)} digits: larger than any field element")
            return int(s, 10)
        if _is_prefixed(s):
            return int(s, 0)
        raise ValueError("not an integer: a string that is not decimal or 0x/0o/0b digits")
    raise ValueError(f"not an integer: {_KIND.get(type(v), 'a ' + type(v).__name__)}")


def _plain_ints(flat: list) -> list | None:
    """to_int of every value, by C loops, where all are ints (bools aside) or all ASCII decimal digit strings without
    sign or blanks (what JSON inputs hold); None otherwise, for to_int one by one (its rules, its errors)."""
    kinds = set(map(type, flat))
    if kinds == {int}:
        return flat
    if kinds == {str} and all(map(str.isascii, flat)) and all(map(str.isdigit, flat)) and \
            max(map(len, flat)) <= MAX_DIGITS:
        return list(map(int, flat))
    return None


def values_to_words(name: str, value: Any, flat: list, prime: int, n32: int):
    """Field elements as little-endian 32-bit words, a numpy array of shape (len(flat), n32)."""
    import numpy as np

    return np.frombuffer(values_to_bytes(name, value, flat, prime, n32), dtype="<u4").reshape(len(flat), n32)


def values_to_bytes(name: str, value: Any, flat: list, prime: int, n32: int) -> bytes:
    """Field elements as little-endian integers of 4 * n32 bytes each (the values of one input signal)."""
    n8 = 4 * n32
    neg_limit = -prime
    try:
        ints = _plain_ints(flat)
        if ints is None:
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
        data = b"".join(map(int.to_bytes, ints, repeat(n8), repeat("little")))
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
    return data


class PreparedInput:
    """One input signal, ready to set: its name, hash halves, and its values as little-endian bytes
    (count values of 4 * n32 bytes each). (Not a namedtuple: collections' import was ~1.2 ms of a one-shot
    `snarkd witness`, which needs nothing else of it.)"""

    __slots__ = ("name", "hash_msb", "hash_lsb", "data", "count")

    def __init__(self, name: str, hash_msb: int, hash_lsb: int, data: bytes, count: int):
        self.name, self.hash_msb, self.hash_lsb, self.data, self.count = name, hash_msb, hash_lsb, data, count

    def _fields(self) -> tuple:
        return self.name, self.hash_msb, self.hash_lsb, self.data, self.count

    def __eq__(self, other) -> bool:
        return isinstance(other, PreparedInput) and self._fields() == other._fields()

    __hash__ = None  # mutable slots: not a dict key

    def __repr__(self) -> str:
        return "PreparedInput(name={!r}, hash_msb={!r}, hash_lsb={!r}, data={!r}, count={!r})".format(*self._fields())

    @property
    def hash(self) -> int:
        return (self.hash_msb << 32) | self.hash_lsb

    @property
    def words(self):
        """The values as a numpy array of 32-bit words, (count, n32)."""
        import numpy as np

        return np.frombuffer(self.data, dtype="<u4").reshape(self.count, -1)


def iter_signals(inputs: dict) -> Iterable[tuple[str, Any, list]]:
    """(qualified name, original value, flat values) for each input signal."""
    for name, value in qualify(inputs).items():
        yield name, value, flatten(value)


def prepare_inputs(inputs: dict, signal_size: Callable[[tuple[int, int]], int | None], prime: int, n32: int,
                   input_size: int,
                   missing_names: Callable[[set], list], circuit: str) -> list[PreparedInput]:
    """Validate and encode inputs (names, sizes, values) against a circuit's input signals, as
    circom's witness_calculator.js would, with our errors. signal_size((msb, lsb)): the size of the
    input signal with that name hash, None or -1 for none (a dict's get: the native engine's table); missing_names(given): the input signals not
    given, when a .sym file names them (else [])."""
    prepared = []
    total = 0
    for name, value, flat in iter_signals(inputs):
        msb, lsb = split_hash(fnv_hash(name))
        size = signal_size((msb, lsb))
        if size is None or size < 0:
            raise UnknownSignalError(
                f"input '{name}' is not an input signal of the circuit {circuit} (circom: Signal {name} not found)",
                name,
            )
        if len(flat) != size:
            which = "not enough" if len(flat) < size else "too many"
            raise SignalSizeError(f"input '{name}': {which} values: {len(flat)} given, the signal has {size}",
                                  name, len(flat), size)
        prepared.append(PreparedInput(name, msb, lsb, values_to_bytes(name, value, flat, prime, n32), len(flat)))
        total += size
    if total < input_size:
        missing = missing_names({p.name for p in prepared})
        if missing:
            what = ", ".join(f"'{m}'" for m in missing)
            msg = f"missing input signal{'s' if len(missing) > 1 else ''} {what}"
        else:
            msg = "missing input signal(s) (give the circuit's .sym file to name them)"
        raise MissingInputError(
            f"{msg}: {total} of the circuit's {input_size} input values given"
            f" (circom: Not all inputs have been set. Only {total} out of {input_size})",
            missing or None,
            total,
            input_size,
        )
    return prepared


_INDEX_SUFFIX = r"(\[\d+\])+\Z"


def sized_input_names(sym: str | os.PathLike, signal_size: Callable[[tuple[int, int]], int | None]
                      ) -> list[tuple[str, int]]:
    """(name, size) of the main component's input signals: the names from the circuit's .sym file
    (rows: signal, witness index, component, name), the sizes from signal_size, as prepare_inputs takes it."""
    import re  # here: a run with a cached program never reads the .sym

    from snarkd.formats.file_trust import open_regular

    seen: dict[str, None] = {}
    main_component = None
    index_suffix = re.compile(_INDEX_SUFFIX)

    # a FIFO or device planted as the .sym beside the wasm is refused at once, never waited on (issue 33)
    with open(open_regular(sym, "circuit .sym"), encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(",", 3)
            if len(parts) != 4 or not parts[3].startswith("main."):
                continue
            if main_component is None:
                main_component = parts[2]  # the first row is one of main's own signals
            if parts[2] != main_component:
                continue  # a subcomponent's signal
            seen.setdefault(index_suffix.sub("", parts[3][5:]), None)
    names = []
    for name in seen:
        size = signal_size(split_hash(fnv_hash(name)))
        if size is not None and size >= 0:
            names.append((name, size))
    return names


def cache_folder(cache) -> str | None:
    """The folder a calculator's `cache` argument names, None for none ("off", False, None). True: [keys] wasm_cache's
    declared default ($XDG_CACHE_HOME/snarkd/wasm, never $SNARKD_WASM_CACHE: entry points resolve that and pass
    it); a callable: called now, for its folder (an entry point's resolution, deferred until a cache is needed:
    `snarkd witness` loads a program beside the .wasm without the config layer)."""
    if callable(cache):
        cache = cache()
    if cache is True:
        from snarkd.config.sections import ENGINE_DEFAULTS

        cache = ENGINE_DEFAULTS["wasm_cache"]
    if cache in (False, None, "off", ""):
        return None
    return os.fspath(cache)


def read_wasm(wasm, name: str | None, sym) -> tuple[bytes, str | None, str, str | None]:
    """(bytes, path, display name, .sym path) of a circuit .wasm given as a path or bytes; the
    .sym is found beside it (circom's layout: NAME_js/NAME.wasm and NAME.sym) unless given."""
    from snarkd.errors import InputError

    if isinstance(wasm, (bytes, bytearray, memoryview)):
        return bytes(wasm), None, name or "circuit.wasm", os.fspath(sym) if sym is not None else None
    path = os.fspath(wasm)
    if not os.path.lexists(path):
        raise InputError(f"{path}: circuit .wasm not found")
    from snarkd.formats.file_trust import open_regular

    fd = open_regular(path, "circuit .wasm")  # a FIFO or a device is refused at once, never waited on or read
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read circuit .wasm: {exc}") from None
    if sym is None:
        folder = os.path.dirname(path)
        sym_name = os.path.splitext(os.path.basename(path))[0] + ".sym"
        for cand in (os.path.join(os.path.dirname(folder), sym_name), os.path.join(folder, sym_name)):
            if os.path.exists(cand):
                sym = cand
                break
    return data, path, name or path, os.fspath(sym) if sym is not None else None
