"""The interpreter's garbage collector as the daemon sees it: each collection's pause measured, the start-up heap frozen.

A collection holds the GIL from start to end, so every Python thread of the daemon stops for it: gRPC handlers,
admission, the device workers launching kernels. A full collection (generation 2) walks every tracked object,
the modules of grpc, numpy and CuPy among them: 20-30 ms on the 2-core CI machine for the daemon's ~43,000
objects before a key is loaded, and the request traffic of a busy daemon triggers one every few seconds. Urgent
jobs that met one waited for it in admission (the two slowest of 103 on an H200: 52 and 14 ms of admission
against ~3 idle). The objects made at start-up live as long as the daemon: `freeze` moves them out of every later
collection (gc.freeze), so a full collection walks only what requests made since.
"""

from __future__ import annotations

import gc
import time

GENERATIONS = ("0", "1", "2")
PAUSE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)


def freeze() -> int:
    """Collect what start-up left as garbage, then keep every object alive now out of later collections.
    Returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class GcPauses:
    """Observes each collection's pause, by generation, into `histogram` (a prometheus-client Histogram with a
    "generation" label) while installed. Collections never nest (the collector is not re-entrant) and run under
    the GIL, so one start time serves every thread."""

    def __init__(self, histogram):
        self.histogram = histogram
        self._started = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.histogram.labels(GENERATIONS[info["generation"]]).observe(time.perf_counter() - self._started)

    def install(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def remove(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
