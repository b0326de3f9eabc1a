"""Named, timed phases. The phase names are the timing names users see."""

from __future__ import annotations

import time
from contextlib import contextmanager


class PhaseTimer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - start) * 1e3

    def total(self) -> float:
        return sum(self.ms.values())
