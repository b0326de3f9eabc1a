"""How long a GPU's kernels ran: the union of the GPU-time intervals that CUDA events bracket.

Lock-held time says a device is busy while a worker merely holds it (uploads, Python between launches,
waiting on a host sync); this says when the GPU itself worked. Each bracketed interval's events are
placed on the host clock through a reference event recorded on an idle stream and waited for (so its
GPU timestamp is "now"), refreshed every few seconds to keep float32 milliseconds precise. Intervals
from several streams (several workers on one device) are merged before they are counted.
"""

from __future__ import annotations

import bisect
import threading
import time
from contextlib import contextmanager

REFRESH_S = 2.0  # a reference older than this is replaced
WINDOW_S = 60.0  # intervals that ended longer ago than this are folded into the total


class IntervalUnion:
    """Seconds covered by a growing set of [start, end] intervals, overlaps counted once.
    Intervals that ended before `horizon` are folded into a running total (not kept)."""

    def __init__(self) -> None:
        self._open: list[list[float]] = []  # disjoint, sorted
        self._folded = 0.0

    def add(self, s: float, e: float) -> None:
        i = bisect.bisect_left(self._open, [s, s])
        if i > 0 and self._open[i - 1][1] >= s:
            i -= 1
            s = self._open[i][0]
        j = i
        while j < len(self._open) and self._open[j][0] <= e:
            e = max(e, self._open[j][1])
            j += 1
        self._open[i:j] = [[s, e]]

    def fold(self, horizon: float) -> None:
        while self._open and self._open[0][1] < horizon:
            s, e = self._open.pop(0)
            self._folded += e - s

    def seconds(self) -> float:
        return self._folded + sum(e - s for s, e in self._open)


class KernelClock:
    def __init__(self, cupy, index: int):
        self.cupy, self.index = cupy, index
        self._lock = threading.Lock()
        with cupy.cuda.Device(index):
            self._stream = cupy.cuda.Stream(non_blocking=True)
        self._ref: tuple | None = None
        self._union = IntervalUnion()

    def reference(self) -> tuple:
        """(event, host seconds of its GPU timestamp) for placing events recorded after it."""
        with self._lock:
            if self._ref is None or time.perf_counter() - self._ref[1] > REFRESH_S:
                with self.cupy.cuda.Device(self.index):
                    ev = self.cupy.cuda.Event()
                    ev.record(self._stream)
                    ev.synchronize()
                self._ref = (ev, time.perf_counter())
            return self._ref

    def add(self, ref: tuple, brackets: list) -> float:
        """Count the intervals [(start event, end event), ...] (all complete); returns their GPU seconds."""
        ev0, t0 = ref
        elapsed = self.cupy.cuda.get_elapsed_time
        spans = [(t0 + elapsed(ev0, a) / 1e3, t0 + elapsed(ev0, b) / 1e3) for a, b in brackets]
        with self._lock:
            for s, e in spans:
                self._union.add(s, e)
            self._union.fold(time.perf_counter() - WINDOW_S)
        return sum(e - s for s, e in spans)

    def seconds(self) -> float:
        """Kernel-busy seconds so far (overlaps between streams counted once)."""
        with self._lock:
            return self._union.seconds()

    def brackets(self) -> "Brackets":
        """CUDA events around groups of kernels (one device stage's), counted here when `count` is called."""
        return Brackets(self)


class Brackets:
    """`with brackets():` records an event before and after the kernels queued inside (on the current
    stream); `count()` waits for them, adds the intervals to the clock and returns their GPU seconds."""

    def __init__(self, clock: KernelClock):
        self.clock, self.cupy = clock, clock.cupy
        self.ref = clock.reference()
        self.pairs: list = []

    @contextmanager
    def __call__(self):
        start = self.cupy.cuda.Event()
        start.record()
        yield
        end = self.cupy.cuda.Event()
        end.record()
        self.pairs.append((start, end))

    def count(self) -> float:
        return self.clock.add(self.ref, self.pairs)
