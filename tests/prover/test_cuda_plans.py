"""CudaBackend's stream plans per urgent share, on a stand-in device (no GPU here): views of one backend
(with_urgent_share, one per engine) plan a streamed key with their own share and share the caches, and a key's
release drops every view's plans. The plans on a real device: tests/gpu/test_gpu_urgent.py."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from snarkd.prover.cuda import CudaBackend

BUDGET = 1000


class Device:
    """GpuDevice's surface that stream_plan, urgent_plan and release use; its plans record the room they got."""

    def __init__(self):
        self.memory = SimpleNamespace(budget=BUDGET, reserved=0)
        self.made, self.released = [], []

    def held_bytes(self, but=None) -> int:
        return 100

    def stream_plan(self, zkey, g2, batch_max, chunk, csr_modes, room=None, expect=0):
        plan = SimpleNamespace(room=room, batch=batch_max, csr=csr_modes[0], parts=("h",), chunk=0, held=50,
                               peak=room or BUDGET)
        self.made.append(plan)
        return plan

    def release(self, zkey) -> None:
        self.released.append(zkey)


def backend() -> CudaBackend:
    be = CudaBackend.__new__(CudaBackend)
    be.dev, be.stream_batch_max, be.stream_csr_modes = Device(), 4, ("device",)
    be._plans, be._urgent_plans, be._stage_plans, be._urgent_local = {}, {}, {}, threading.local()
    return be


def test_views_plan_with_their_own_share_and_share_the_caches():
    shared = backend()
    key = SimpleNamespace(zkey=object())
    quarter, half = shared.with_urgent_share(0.25), shared.with_urgent_share(0.5)
    assert shared.with_urgent_share(0.0) is shared and shared.urgent_share == 0.0
    # the room each plan was made for: the budget less what is held and the view's share
    assert shared.stream_plan(key).room is None
    assert quarter.stream_plan(key).room == BUDGET - 100 - 250 and half.stream_plan(key).room == BUDGET - 100 - 500
    assert shared.urgent_plan(key) is None and quarter.urgent_plan(key).room == 50 + 250
    assert half.urgent_plan(key).room == 50 + 500
    made = len(shared.dev.made)
    again = shared.with_urgent_share(0.25)  # another engine with the same share: the plans made already
    assert again.stream_plan(key) is quarter.stream_plan(key) and again.urgent_plan(key) is quarter.urgent_plan(key)
    assert again.stage_plan(key, 2) is quarter.stage_plan(key, 2) and len(shared.dev.made) == made + 1
    old = quarter.stream_plan(key)
    half.release(key)  # a key dropped by one engine's view: every view's plans of it go
    assert shared._plans == shared._urgent_plans == shared._stage_plans == {} and shared.dev.released == [key.zkey]
    assert quarter.stream_plan(key) is not old and quarter.stream_plan(key).room == old.room


class Interleaved(dict):
    """A plan cache whose listing lets another engine's view run its release of the same key right after the
    keys were listed and before they are dropped (the interleaving of two threads, made deterministic)."""

    def __init__(self, *a, between=None):
        super().__init__(*a)
        self.between = between

    def __iter__(self):
        keys = list(super().__iter__())
        yield from keys
        between, self.between = self.between, None
        if between:
            between()


def test_two_views_releasing_one_key_at_once():
    """Two engines' views (with_urgent_share) sharing the caches release one key at the same moment (the second
    runs between the first's listing of a cache and its dropping of the plans): no KeyError, every plan of the
    key gone from every cache, the other key's plans kept; a plan asked for afterwards is made again."""
    shared = backend()
    key, other = SimpleNamespace(zkey=object()), SimpleNamespace(zkey=object())
    quarter, half = shared.with_urgent_share(0.25), shared.with_urgent_share(0.5)
    for view in (quarter, half):
        for k in (key, other):
            view.stream_plan(k), view.stage_plan(k, 2), view.urgent_plan(k)
    assert len(shared._plans) == len(shared._stage_plans) == len(shared._urgent_plans) == 4
    wrapped = Interleaved(shared._plans, between=lambda: half.release(key))
    for view in (shared, quarter, half):  # the views share the caches: replaced in each
        view._plans = wrapped
    quarter.release(key)
    assert shared.dev.released == [key.zkey, key.zkey]  # half's release, then quarter's own
    for cache in (shared._plans, shared._stage_plans, shared._urgent_plans):
        assert sorted(k[1] for k in cache) == [0.25, 0.5] and all(k[0] == id(other.zkey) for k in cache)
    plan = quarter.urgent_plan(key)
    assert plan.room == 50 + 250 and shared._urgent_plans[(id(key.zkey), 0.25)] is plan
