"""daemon/gcpause.py: each collection's pause observed by generation; the start-up heap frozen out of collections."""

from __future__ import annotations

import gc

from prometheus_client import CollectorRegistry, Histogram

from snarkd.daemon.gcpause import PAUSE_BUCKETS, GcPauses, freeze


def _histogram():
    registry = CollectorRegistry()
    h = Histogram("pause_seconds", "test", ["generation"], buckets=PAUSE_BUCKETS, registry=registry)
    return h, registry


def _count(registry, generation: str) -> float:
    return registry.get_sample_value("pause_seconds_count", {"generation": generation}) or 0.0


def test_each_collection_is_observed_under_its_generation_while_installed():
    h, registry = _histogram()
    pauses = GcPauses(h)
    pauses.install()
    pauses.install()  # twice: still one callback
    try:
        assert gc.callbacks.count(pauses._callback) == 1
        gc.collect(2)
        gc.collect(0)
        assert _count(registry, "2") >= 1 and _count(registry, "0") >= 1
        assert registry.get_sample_value("pause_seconds_sum", {"generation": "2"}) > 0
    finally:
        pauses.remove()
    after = _count(registry, "2")
    gc.collect(2)
    assert _count(registry, "2") == after and pauses._callback not in gc.callbacks


def test_freeze_keeps_what_lives_now_out_of_later_collections():
    kept = [object() for _ in range(3)]  # tracked: lists are; a list made after the freeze is collected as usual
    try:
        assert freeze() >= 1 and gc.get_freeze_count() >= 1
        assert not any(o is kept for o in gc.get_objects())
        later = [object()]
        assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0 and any(o is kept for o in gc.get_objects())
