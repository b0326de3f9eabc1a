"""Bounds on one request, checked before anything is parsed ([limits] in the config).

Each refusal is TooLarge (gRPC RESOURCE_EXHAUSTED) and names the setting it hit, so a
client knows what to change and an operator what to raise.
"""

from __future__ import annotations

from snarkd.engine.errors import TooLarge
from snarkd.formats.json_text import bracket_depth



def json_depth(text: bytes, limit: int | None = None) -> int:
    """Nesting depth of a JSON text's arrays and objects, without parsing it (formats.json_text's
    bracket count, string literals left out)."""
    return bracket_depth(text, limit)


def object_depth(obj) -> int:
    """The same for an already parsed value (the embedded engine's dict inputs), iteratively."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, (list, tuple)):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v)
    return deepest


def check_request(config, witness=None, witnesses=None, inputs=None) -> None:
    """[limits] max_partitions, max_inputs_bytes and max_inputs_depth on one job's request."""
    n = len(witnesses or ()) or len(inputs or ()) or 1
    if n > config.max_partitions:
        raise TooLarge(f"the job has {n} partitions, more than [limits] max_partitions ({config.max_partitions})")
    for i, x in enumerate(inputs or ()):
        if isinstance(x, (str, bytes)):
            raw = x.encode("utf-8", "surrogatepass") if isinstance(x, str) else x
            if len(raw) > config.max_inputs_bytes:
                raise TooLarge(f"inputs of partition {i}: {len(raw)} bytes of JSON, more than [limits] "
                               f"max_inputs_bytes ({config.max_inputs_bytes})")
            depth = json_depth(raw, config.max_inputs_depth)
        else:
            depth = object_depth(x)
        if depth > config.max_inputs_depth:
            raise TooLarge(f"inputs of partition {i}: JSON nests arrays or objects {depth} deep, more than [limits] "
                           f"max_inputs_depth ({config.max_inputs_depth})")
