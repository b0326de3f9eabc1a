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


def test_an_urgent_streamed_proof_runs_by_its_own_plan_beside_a_paused_stages_reservation():
    # a bulk stage paused at a yield point keeps its reservation: with an urgent share, the key's plan leaves that
    # room free and an urgent lone proof runs by a plan sized for it (CudaBackend.urgent_plan)
    from gpu_helpers import load_key

    from snarkd.prover import groth16
    from snarkd.prover.backend import get_backend
    from snarkd.prover.timing import PhaseTimer

    def prove(backend):
        timer = PhaseTimer()
        synth = groth16.synthesize(key, wtns, timer)
        sums = groth16.device_stage(key, synth, timer, 0, with_g2=backend != "cpu", backend=backend)
        return groth16.finalize(key, synth.witness, sums, timer, 0, 5, 6)

    key = load_key("bn128")
    wtns = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    be = get_backend("cuda").with_urgent_share(0.25)  # an engine's view with an urgent lane's share of 0.25
    mem = be.dev.memory
    try:
        be.release(key)
        be.stream_bases = "on"  # the view's only
        keep = int(0.25 * mem.budget)
        base, small = be.stream_plan(key), be.urgent_plan(key)
        assert base.peak <= mem.budget - be.dev.held_bytes(but=key.zkey) - keep  # the room is left free
        assert small is not None and small.csr == base.csr and small.peak - small.held <= keep
        be.make_resident(key)
        assert be.bases_streamed(key)
        paused = mem.budget - mem.reserved - (small.peak - small.held)
        with mem.reserve(paused, what="a paused bulk stage"):
            assert be.preempt_blocker(key) == ""
            with be.urgent():
                chosen = be._stage_plan_now(key, 1)
                assert mem.reserved + chosen.peak - chosen.held <= mem.budget
                proof = prove(be)
        assert proof.proof == prove("cpu").proof
        assert verify(json.loads((EXAMPLES["bn128"] / "vk.json").read_text()), proof.public, proof.proof)
    finally:
        be.release(key)
    assert get_backend("cuda").urgent_share == 0.0 and get_backend("cuda").stream_bases == "auto"  # left as it was
