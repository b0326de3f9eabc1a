"""Replies from actors, handled on a thread of the front's own.

A Ray future's done-callback runs on Ray's core-worker thread, where calling back into Ray (creating a
task, killing an actor) can block that very thread: a dead actor's reply could then stall the front.
So callbacks only enqueue, and one thread handles every reply, in the order they came.
"""

from __future__ import annotations

import logging
import queue
import threading

log = logging.getLogger("snarkd")


class Replies:
    def __init__(self):
        self._q: queue.SimpleQueue = queue.SimpleQueue()

    def when_done(self, ref, handle) -> None:
        """handle(future) on the replies thread once `ref` is ready (a value or an error)."""
        ref.future().add_done_callback(lambda fut: self._q.put((handle, fut)))

    def call(self, handle, *args) -> None:
        """handle(*args) on the replies thread (for a reply that never reached Ray)."""
        self._q.put((handle, args))

    def run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                handle, arg = self._q.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                if isinstance(arg, tuple):
                    handle(*arg)
                else:
                    handle(arg)
            except Exception:  # noqa: BLE001 - one bad reply must not stop the others
                log.exception("cluster front: handling a reply failed")
