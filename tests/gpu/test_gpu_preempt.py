"""Preemption on the GPU (engine/preempt.py): a bulk batch of a streamed key (a hand-made plan of 50-point chunks, as
test_gpu_stream.py's) is held at a boundary inside its H pass (gpu/stream.msm_pass's `between`: after the first
proof's MSMs of the first chunk) until an urgent job of another key has begun on the device's lane worker, beside
the batch's buffers and device memory; the batch then waits at its next boundary until the urgent stage ends, and
goes on where it stopped. The urgent job finishes before the bulk job (one finalize
worker: the urgent proof is first in its queue), every proof verifies (the native verifier, and snarkjs for one
of each). With the bulk batch holding the whole device budget the preemption is skipped for device memory and
counted, and the urgent device stage waits for a slot: the batch's end. Ordering is read from the partitions' spans.

    python -m pytest -q tests/gpu/test_gpu_preempt.py        (on the GPU machine)
"""

from __future__ import annotations

import json

import pytest

from gpu_helpers import EXAMPLES, example_zkey, require_gpu, snarkjs_verify

require_gpu()

from preemption import alongside, gate_waiter, hold_first_yield, span  # noqa: E402

from snarkd.config import EngineConfig  # noqa: E402
from snarkd.config.lanes import Lane  # noqa: E402
from snarkd.engine.engine import Engine  # noqa: E402
from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.gpu import stream as gstream  # noqa: E402
from snarkd.verifier import verify  # noqa: E402

# urgent keeps a share: without one, the bulk job holds every pipeline slot (6 here) and the urgent job is not even
# admitted until the held batch ends (the first device run waited there 60 s in each case)
LANES = {"urgent": Lane("urgent", priority=10, share=0.25), "bulk": Lane("bulk", priority=0)}
CHUNK = 50  # the example key (103 variables, domain 128): 3 ranges in each pass, so boundaries inside the H pass
BULK = 8  # proofs in the bulk job: one batch (the plan's batch)


def hand_plan(chunk: int, peak: int) -> gstream.StreamPlan:
    """A plan made by hand (stage_plan runs it as given): CSR on the device, H in place, witnesses kept, two passes."""
    return gstream.StreamPlan(chunk, BULK, "device", "in-place", True, peak, 0, False)


@pytest.mark.parametrize("case", ["urgent-resident", "urgent-streamed", "no-room"])
def test_an_urgent_job_runs_at_a_chunk_boundary_of_a_bulk_batch(tmp_path, case):
    cfg = EngineConfig(synthesis_workers=2, finalize_workers=1, devices=(0,), workers_per_device=1, g2_on_device=True,
                       self_verify=True, stream_bases="on" if case == "urgent-streamed" else "auto", lanes=LANES)
    eng = Engine(cfg)
    be = eng.devices[0]
    bulk_lk = eng.keys.load("bulk", example_zkey("bn128", tmp_path / "bulk"))
    urgent_lk = eng.keys.load("urgent", example_zkey("bn128", tmp_path / "urgent"))
    keys = (bulk_lk.key, urgent_lk.key)
    for key in keys:
        be.release(key)
    # no-room: the bulk batch reserves the whole device budget, so nothing fits beside it while it is paused
    peak = be.dev.memory.budget if case == "no-room" else 1 << 28
    be.use_stream_plan(bulk_lk.key, hand_plan(CHUNK, peak))
    with be.dev.memory.guard("the bulk key"):  # streamed whatever [gpus] stream_bases says (as make_resident does)
        be.dev.resident(bulk_lk.key.zkey, "off", be.msm_c, True, "device")
        be.dev.synchronize()
    if case == "urgent-streamed":
        be.use_stream_plan(urgent_lk.key, hand_plan(1 << 16, 1 << 28))  # one chunk a pass
    wt = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    eng.start()
    try:
        for key_id in ("urgent", "bulk"):  # warm: modules loaded, the urgent key resident (preempt_blocker asks)
            job = eng.submit(key_id, witnesses=[wt], lane=key_id)
            assert job.done.wait(120) and job.state == "COMPLETED", job.error
        assert be.residency(urgent_lk.key) is not None and be.bases_streamed(bulk_lk.key)
        # hold the bulk batch at its second yield point, in its H pass (the first is before the passes), until the
        # urgent stage has begun beside it on the lane worker (no-room: until it waits for a slot instead)
        began, _ = alongside(eng)
        reached = hold_first_yield(eng, gate_waiter(eng) if case == "no-room" else began.is_set, skip=1)
        bulk = eng.submit("bulk", witnesses=[wt] * BULK, lane="bulk")
        assert reached.wait(120), "the bulk batch never reached a chunk boundary"
        urgent = eng.submit("urgent", witnesses=[wt], lane="urgent")
        for job in (urgent, bulk):
            assert job.done.wait(300) and job.state == "COMPLETED", job.error
        lks = {"bulk": bulk_lk, "urgent": urgent_lk}
        for job in (urgent, bulk):
            for p in job.partitions:
                assert verify(lks[job.key.id].vk, p.result.public, p.result.proof)
            p = job.partitions[-1]
            (tmp_path / f"{job.key.id}-proof.json").write_text(json.dumps(p.result.proof))
            (tmp_path / f"{job.key.id}-public.json").write_text(json.dumps(p.result.public))
            assert snarkjs_verify(EXAMPLES["bn128"] / "vk.json", tmp_path / f"{job.key.id}-public.json",
                                  tmp_path / f"{job.key.id}-proof.json")
        u = urgent.partitions[0]
        batch = [p for p in bulk.partitions if p.timings.get("msm_h", 0) > 0]
        assert batch and all(p.timings["msm_w"] > 0 for p in batch)  # the streamed passes ran
        first = min(batch, key=lambda p: span(p, "device")["start"])  # the batch that was held
        b_dev, u_dev = span(first, "device"), span(u, "device")
        dev = eng.status().devices[0]
        if case == "no-room":
            assert u.preempt_skipped == ("device_memory",)
            assert dev.preemptions == 0 and dev.preempt_skipped == {"device_memory": 1}
            assert u_dev["start"] >= b_dev["end"] and "preempted" not in first.timings
        else:
            paused = span(first, "preempted")  # held at its next boundary while the urgent stage ran beside it
            assert u_dev["worker"].endswith("/lanes") and u.timings["device_wait"] == 0.0
            assert u_dev["start"] <= paused["start"] < u_dev["end"] and paused["end"] <= b_dev["end"]
            assert u_dev["end"] < b_dev["end"] and urgent.finished < bulk.finished
            assert dev.preemptions == 1 and dev.preempt_skipped == {}
            assert first.timings["preempted"] > 0
    finally:
        eng.stop(30)
        eng.join_workers(30)
        for key in keys:
            be.release(key)
