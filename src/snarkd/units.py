"""Sizes and durations as people write them ("64GiB", "500ms"), parsed and printed in one place.

A leaf module: the config layer validates settings with these, and the engine
accepts the same spellings when it is embedded without a config file.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_duration(value) -> float:
    """"60s", "500ms", "2m", "1h" or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError('expected a duration like "60s", "500ms", "2m"')
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("must not be negative")
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return float(m.group(1)) * _DURATION_UNITS[m.group(2)]
    raise ValueError('expected a duration like "60s", "500ms", "2m"')


def parse_size(value) -> int | str:
    """"auto", "64GiB", "500MB" or a positive number of bytes -> bytes (or "auto")."""
    if isinstance(value, bool):
        raise ValueError('expected "auto" or a size like "64GiB"')
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be positive")
        return value
    if isinstance(value, str):
        if value.strip().lower() == "auto":
            return "auto"
        m = _SIZE.match(value)
        if m:
            n = int(float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "b").lower()])
            if n > 0:
                return n
    raise ValueError('expected "auto" or a size like "64GiB", "500MB"')


def format_duration(seconds: float) -> str:
    """The shortest spelling parse_duration reads back exactly ("60s", "250ms", "0.5ms")."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    ms = seconds * 1000
    for text in (f"{round(ms)}ms", f"{ms:g}ms"):
        if parse_duration(text) == seconds:
            return text
    return f"{seconds:.20f}".rstrip("0") + "s"  # positional: the parser takes no exponent


def format_size(nbytes: int | str) -> str:
    """Bytes in the largest binary unit that divides them ("64GiB"), or "auto"."""
    if isinstance(nbytes, str):
        return nbytes
    for unit, mult in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes % mult == 0:
            return f"{nbytes // mult}{unit}"
    return str(nbytes)
