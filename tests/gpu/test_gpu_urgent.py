"""Urgent lanes on the GPU: their device stages run on the device's highest-priority stream (GpuDevice.urgent_stream,
Backend.urgent), and proofs made there and beside them are right."""
import json

import pytest
from gpu_helpers import EXAMPLES, example_zkey, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.config.lanes import Lane  # noqa: E402
from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.verifier import verify  # noqa: E402


def test_the_urgent_stream_has_the_devices_highest_priority():
    cudart = pytest.importorskip("cuda.bindings.runtime", reason="reading a stream's priority needs cuda-python")
    dev = gdevice.get(0)
    dev.use()
    err, _, greatest = cudart.cudaDeviceGetStreamPriorityRange()
    assert err == cudart.cudaError_t.cudaSuccess
    s = dev.urgent_stream()
    assert s is dev.urgent_stream()  # one per thread, kept
    err, prio = cudart.cudaStreamGetPriority(s.ptr)
    assert err == cudart.cudaError_t.cudaSuccess and prio == greatest < 0, (prio, greatest)
    with s:
        assert cupy.cuda.get_current_stream().ptr == s.ptr
    assert cupy.cuda.get_current_stream().ptr != s.ptr  # the worker's own stream again after the stage


def test_urgent_and_bulk_lanes_prove_side_by_side_on_the_gpu(tmp_path):
    from snarkd.engine.engine import Engine, EngineConfig

    lanes = {"urgent": Lane("urgent", priority=10, share=0.25), "bulk": Lane("bulk", priority=0)}
    eng = Engine(EngineConfig(synthesis_workers=4, devices=(0,), workers_per_device=2, memory_budget=4 << 30,
                              lanes=lanes))
    eng.keys.load("chain", example_zkey("bn128", tmp_path))
    wtns = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    vk = json.loads((EXAMPLES["bn128"] / "vk.json").read_text())
    eng.start()
    try:
        jobs = [eng.submit("chain", witnesses=[wtns], lane="bulk") for _ in range(8)]
        jobs += [eng.submit("chain", witnesses=[wtns], lane="urgent") for _ in range(3)]
        for job in jobs:
            eng.await_(job.id, timeout=120)
            assert job.state == "COMPLETED", (job.state, job.error)
            assert verify(vk, job.result.public, job.result.proof)
        assert [j.lane for j in jobs[-3:]] == ["urgent"] * 3
        assert eng.status().jobs.self_verify_failed == 0
    finally:
        eng.stop(5)
        eng.join_workers(10)
