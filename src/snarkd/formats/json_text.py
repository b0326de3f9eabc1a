"""JSON text read as JavaScript's JSON.parse reads it, with its nesting bounded first.

Python's json parser recurses in C once per nesting level and relies on the
interpreter's recursion limit to stop; a library that raises the limit (py_ecc
sets it to 100,000 on import) turns a file of 100,000 `[` into a segmentation
fault. So the depth is measured before parsing, without recursion: the running
count of brackets ([ and { up, ] and } down) over the bytes, vectorised with
numpy, after string literals are blanked (a "]" inside a string would otherwise
lower the count, and text nested past the bound could then reach the parser).

Also as JSON.parse: the text must be UTF-8 without a BOM, and NaN/Infinity are
not JSON.

A text that parses is read by CPython's own C scanner (`_json`, what json.loads
runs) without importing the json package: json.decoder imports re, and re enum,
~3-4 ms of a ~100 ms one-shot `snarkd witness`. Anything else (bad JSON, a BOM,
NaN, a number too long, no `_json`) is parsed again by json.loads, so the value
and every error are json.loads's own.
"""

from __future__ import annotations

import os
import stat

from snarkd.errors import InputError

# Proofs, keys and public lists nest at most 4 deep; inputs a few levels more.
MAX_JSON_DEPTH = 200
MAX_INPUT_DEPTH = 64  # circuit inputs: multi-dimensional signal arrays and bus fields
# A verification key for a million public inputs is ~300 MB of JSON; beyond
# this a file is refused before it is read into memory.
MAX_JSON_BYTES = 1 << 30
_CHUNK = 1 << 24


_STRING = rb'"(?:[^"\\]|\\.)*"'  # a JSON string literal (escapes included); compiled only for deep texts
_WHITESPACE = " \t\n\r"  # JSON's whitespace, as json.decoder's WHITESPACE pattern
_DEFAULT_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _bracket_steps():
    import numpy as np  # only for texts with many brackets: most inputs never load it

    step = np.zeros(256, dtype=np.int8)
    step[[0x5B, 0x7B]] = 1  # [ {
    step[[0x5D, 0x7D]] = -1  # ] }
    return np, step


def bracket_depth(data: bytes, limit: int | None = None) -> int:
    """The deepest running count of open brackets in `data`, outside string literals.
    With `limit`, a text with no more than `limit` opening brackets returns at once
    (its depth cannot exceed them)."""
    opens = data.count(b"[") + data.count(b"{")
    if limit is not None and opens <= limit:
        return opens
    if b'"' in data:
        import re

        data = re.sub(_STRING, b'""', data, flags=re.DOTALL)
    np, step = _bracket_steps()
    buf = np.frombuffer(data, dtype=np.uint8)
    depth, deepest = 0, 0
    for start in range(0, len(buf), _CHUNK):
        run = np.cumsum(step[buf[start : start + _CHUNK]], dtype=np.int32)
        if run.size:
            deepest = max(deepest, depth + int(run.max()))
            depth += int(run[-1])
    return deepest


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class _ScanContext:
    """The settings json.JSONDecoder hands the C scanner, as json.loads(text, parse_constant=...) makes them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self, parse_constant):
        self.parse_constant = parse_constant


def parse(text, parse_constant=None):
    """json.loads(text, parse_constant=parse_constant): the same value, or the same exception."""
    if isinstance(text, (bytes, bytearray)):
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError:
            decoded = None  # json.loads's own encoding detection and error below
    else:
        decoded = text
    if decoded is not None:
        try:
            from _json import make_scanner

            scan = make_scanner(_ScanContext(parse_constant or _DEFAULT_CONSTANTS))
            start = len(decoded) - len(decoded.lstrip(_WHITESPACE))
            value, end = scan(decoded, start)
            if not decoded[end:].strip(_WHITESPACE):
                return value
        except Exception:  # noqa: BLE001 - whatever it was, json.loads below raises its own error for it
            pass
    import json

    return json.loads(text, parse_constant=parse_constant)


def _no_default(obj):
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps_sorted(obj) -> str:
    """json.dumps(obj, sort_keys=True), by the C encoder json.dumps runs for it, without importing json; any
    failure (or no `_json`) goes to json.dumps itself, for its own result or error."""
    try:
        from _json import encode_basestring_ascii, make_encoder

        if isinstance(obj, str):
            return encode_basestring_ascii(obj)
        # json.JSONEncoder's defaults: circular check, ensure_ascii, no indent, (", ", ": "), allow_nan
        encode = make_encoder({}, _no_default, encode_basestring_ascii, None, ": ", ", ", True, False, True)
        return "".join(encode(obj, 0))
    except Exception:  # noqa: BLE001 - json.dumps below gives its own error for it
        import json

        return json.dumps(obj, sort_keys=True)


def dumps_indented(obj, indent: int = 1) -> str:
    """json.dumps(obj, indent=indent) (snarkjs's proof.json and public.json: strings, lists and objects), written
    without importing json; a value of another kind (numbers, non-string keys) goes to json.dumps itself."""
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:  # a Python without the C accelerator
        quote = None
    parts: list[str] = []

    def put(value, level: int) -> bool:
        if isinstance(value, str):
            parts.append(quote(value))
        elif value is None or value is True or value is False:
            parts.append("null" if value is None else "true" if value else "false")
        elif isinstance(value, (list, tuple, dict)):
            if not value:
                parts.append("{}" if isinstance(value, dict) else "[]")
                return True
            inner = "\n" + " " * (indent * (level + 1))
            parts.append("{" if isinstance(value, dict) else "[")
            for k, item in enumerate(value.items() if isinstance(value, dict) else value):
                parts.append(inner if k == 0 else "," + inner)
                if isinstance(value, dict):
                    if not isinstance(item[0], str):
                        return False
                    parts.append(quote(item[0]) + ": ")
                    item = item[1]
                if not put(item, level + 1):
                    return False
            parts.append("\n" + " " * (indent * level) + ("}" if isinstance(value, dict) else "]"))
        else:
            return False
        return True

    if quote is not None and put(obj, 0):
        return "".join(parts)
    import json

    return json.dumps(obj, indent=indent)


def loads(data: bytes | str, name: str, what: str, max_depth: int = MAX_JSON_DEPTH):
    """Parse JSON text; InputError naming `name` (the file or field) if it is not
    UTF-8, not JSON, or nests deeper than max_depth."""
    if isinstance(data, str):
        text = data
        raw = data.encode("utf-8", errors="surrogatepass")
    else:
        raw = data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: {what} is not UTF-8 text: {exc}") from None
    depth = bracket_depth(raw, max_depth)
    if depth > max_depth:
        raise InputError(f"{name}: {what} nests arrays or objects {depth} deep (at most {max_depth} levels are read)")
    try:
        return parse(text, parse_constant=_no_constant)
    except ValueError as exc:
        import json  # imported already: only parse's fallback to json.loads raises

        if isinstance(exc, json.JSONDecodeError):
            raise InputError(f"{name}: {what} is not valid JSON: {exc}") from None
        # NaN, Infinity, or a number of more digits than Python converts
        why = "it holds a number of more than 4300 digits" if "digits" in str(exc) else str(exc)
        raise InputError(f"{name}: {what} is not valid JSON: {why}") from None
    except RecursionError:  # only with a recursion limit far below the default
        raise InputError(f"{name}: {what} nests arrays or objects too deeply") from None


def read_file(path, what: str, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a regular file, or InputError naming it (missing, a directory,
    a FIFO or device, larger than max_bytes). Opened non-blocking so that a FIFO
    cannot hang the open; the descriptor is closed on every path."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (the {what})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: {what} is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: {what} is not a regular file")
        if st.st_size > max_bytes:
            raise InputError(f"{path}: {what} is {st.st_size} bytes, more than the {max_bytes} a JSON input may have")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def load(path, what: str, max_depth: int = MAX_JSON_DEPTH, max_bytes: int = MAX_JSON_BYTES):
    """read_file then loads: a JSON file, every failure an InputError naming it."""
    return loads(read_file(path, what, max_bytes), str(path), what, max_depth)
