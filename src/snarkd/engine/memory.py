"""The memory budget: a partition is admitted only when its estimated bytes fit.

Estimate per partition (n = domain size, m = nVars, 32-byte field elements):

    witness   m·32           held from synthesis until the proof is assembled
    buffers   4·n·32 + slack a = A·w, b = B·w (synthesis), then c = a∘b and the
                             H scalars in the device stage; freed when the device
                             stage ends
    inputs    witness calculation's own memory, when a job carries inputs
              (a wasm instance per concurrent calculation; counted as m·32)

The resident keys (memory-mapped zkeys) are outside the budget: the budget bounds
what concurrency adds on top of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil

from snarkd.units import parse_size

SLACK = 1 << 20  # Python objects, MSM scratch, per partition


@dataclass(frozen=True)
class Estimate:
    witness: int
    buffers: int

    @property
    def total(self) -> int:
        return self.witness + self.buffers


def estimate(key, from_inputs: bool = False) -> Estimate:
    m, n = int(key.n_vars), int(key.domain_size)
    w = 32 * m
    return Estimate(witness=w, buffers=4 * 32 * n + SLACK + (w if from_inputs else 0))


def auto_budget() -> int:
    """"auto": 75% of the memory available when the engine starts."""
    return int(psutil.virtual_memory().available * 0.75)


class MemoryBudget:
    """Byte counters; not thread-safe on its own (the engine guards it with its lock)."""

    def __init__(self, budget: int | str | None):
        budget = "auto" if budget is None else parse_size(budget)
        if budget == "auto":
            budget = auto_budget()
        self.budget = int(budget)
        self.used = 0
        self.peak = 0
        self.waits = 0  # times a partition waited for memory

    def fits(self, nbytes: int) -> bool:
        return self.used + nbytes <= self.budget

    def reserve(self, nbytes: int) -> None:
        self.used += nbytes
        self.peak = max(self.peak, self.used)

    def release(self, nbytes: int) -> None:
        self.used -= nbytes
        assert self.used >= 0, "memory budget released more than reserved"

    def snapshot(self) -> dict:
        return {"budget": self.budget, "used": self.used, "peak": self.peak, "waits": self.waits}


def rss() -> int:
    return psutil.Process(os.getpid()).memory_info().rss
