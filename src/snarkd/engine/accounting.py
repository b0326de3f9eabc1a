"""What the engine counts: jobs by outcome, phase time, device-held time, preemptions, the memory budget.

Not thread-safe on its own: the engine calls it under its lock.
"""

from __future__ import annotations

import time

from snarkd.engine.memory import MemoryBudget

COUNTERS = ("submitted", "rejected", "completed", "failed", "cancelled", "expired", "deadline_refused",
            "partitions_completed", "self_verify_failed",
            # witnesses computed from inputs, by how (snarkd.witness.native): replayed natively, recorded
            # natively after a guard missed, run natively through the wasm's control flow (a value-dependent
            # circuit), on the wasm engine; and native witnesses whose proof failed
            # self-verification (recomputed on the wasm engine)
            "witness_native", "witness_recorded", "witness_control", "witness_wasm", "witness_failed")


class Accounting:
    def __init__(self, budget: MemoryBudget, devices: list):
        self.budget = budget
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.phase_ms: dict[str, float] = {}  # summed over completed partitions
        self.in_flight = 0  # partitions admitted and not yet out of the pipeline
        self._names = [d.name for d in devices]
        self._busy = [0.0] * len(devices)  # seconds each device had at least one device stage running
        self._since: list[float | None] = [None] * len(devices)
        self._holders = [0] * len(devices)
        # per device: partitions whose device stage ran at a lower lane's yield point (engine/preempt.py), and
        # partitions that could not, by reason (counted once each)
        self.preemptions = [0] * len(devices)
        self.preempt_skipped: list[dict[str, int]] = [{} for _ in devices]

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] += n

    def count_preemption(self, d: int, n: int = 1) -> None:
        self.preemptions[d] += n

    def count_preempt_skipped(self, d: int, reason: str) -> None:
        self.preempt_skipped[d][reason] = self.preempt_skipped[d].get(reason, 0) + 1

    def add_phases(self, timings: dict) -> None:
        for k, v in timings.items():
            self.phase_ms[k] = self.phase_ms.get(k, 0.0) + float(v)

    def device_held(self, d: int) -> None:
        self._holders[d] += 1
        if self._holders[d] == 1:
            self._since[d] = time.monotonic()

    def device_freed(self, d: int) -> None:
        self._holders[d] -= 1
        if self._holders[d] == 0:
            self._busy[d] += time.monotonic() - self._since[d]
            self._since[d] = None

    def busy_seconds(self) -> dict[str, float]:
        now = time.monotonic()
        return {n: b + (now - s if s is not None else 0.0) for n, b, s in zip(self._names, self._busy, self._since)}
