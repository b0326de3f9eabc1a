"""A submitted job's partitions, parsed: .wtns bytes or Witness objects, or inputs JSON.

Only what is cheap is checked here (the witness's field, length and w[0]), so a
bad request is refused at submit; the O(n) canonical-value check runs once, in
the synthesis stage's `check` phase.
"""

from __future__ import annotations

from snarkd.errors import InputError
from snarkd.formats import json_text
from snarkd.formats.json_text import MAX_INPUT_DEPTH
from snarkd.formats.wtns import Witness, check_witness_header, parse_wtns


def parse_partitions(lk, witness=None, witnesses=None, inputs=None) -> list[tuple]:
    """[(Witness, None) | (None, inputs dict)] for key `lk` (a LoadedKey); InputError names the bad one."""
    given = [x for x in (witness is not None and witness != b"", bool(witnesses), bool(inputs)) if x]
    if len(given) > 1:
        raise InputError("give one witness, a list of witnesses, or inputs, not several")
    if inputs:
        return _inputs(lk, inputs)
    items = list(witnesses) if witnesses else [witness]
    out = []
    for i, data in enumerate(items):
        part = f" (partition {i})" if len(items) > 1 else ""
        if isinstance(data, Witness):
            w, name = data, f"witness{part} for key {lk.id!r}"
        else:
            data = bytes(data or b"")
            name = f"witness{part} ({len(data)} bytes) for key {lk.id!r}"
            if not data:
                raise InputError(f"{name}: empty witness")
            try:
                w = parse_wtns(data, name, copy=False)  # a view of the request's bytes
            except InputError:
                raise
            except Exception as exc:  # a parser that trips on garbage is still the request's fault
                raise InputError(f"{name}: not a valid .wtns file ({exc})") from None
        check_witness_header(w, lk.key.zkey, name)
        out.append((w, None))
    return out


def _inputs(lk, inputs) -> list[tuple]:
    out = []
    for i, obj in enumerate(inputs):
        if isinstance(obj, (str, bytes)):  # nesting bounded before parsing: deep JSON must not crash the daemon
            obj = json_text.loads(obj, f"inputs of partition {i} for key {lk.id!r}", "input JSON", MAX_INPUT_DEPTH)
        if not isinstance(obj, dict):
            raise InputError(f"inputs of partition {i} for key {lk.id!r}: expected a JSON object")
        out.append((None, obj))
    lk.require_wasm()
    return out
