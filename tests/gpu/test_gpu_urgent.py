"""Urgent lanes on the GPU: their device stages run on the device's highest-priority stream (GpuDevice.urgent_stream,
Backend.urgent), and proofs made there and beside them are right."""
import json

import numpy as np
import pytest
from gpu_helpers import EXAMPLES, example_zkey, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.config.lanes import Lane  # noqa: E402
from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.verifier import verify  # noqa: E402


def _snarkjs_accepts(result, tmp_path) -> bool:
    """snarkjs's verdict on a result of the bn128 example key (its proof and public values written to tmp_path)."""
    from gpu_helpers import snarkjs_verify

    (tmp_path / "proof.json").write_text(json.dumps(result.proof))
    (tmp_path / "public.json").write_text(json.dumps(result.public))
    return snarkjs_verify(EXAMPLES["bn128"] / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")


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


def test_a_witness_in_page_locked_memory_goes_up_in_one_transfer(monkeypatch, tmp_path):
    """GpuDevice.host_buffer (where the daemon reads an urgent lane's witness) is page-locked; DeviceMemory.upload
    sends such an array (or a view into it) with one transfer, no staging copy, and the same bytes arrive as from
    pageable memory; an urgent job whose witness lies there proves, and the proof verifies (native and snarkjs)."""
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.formats.wtns import parse_wtns
    from snarkd.gpu import memory

    dev = gdevice.get(0)
    dev.use()
    n = 3 * memory.UPLOAD_CHUNK + 4100
    locked = dev.host_buffer(n)
    locked[:] = np.random.default_rng(7).integers(0, 256, n, dtype=np.uint8)
    pageable = locked.copy()
    assert memory.page_locked(cupy, locked) and memory.page_locked(cupy, locked[4096:])
    assert not memory.page_locked(cupy, pageable)
    staged = []  # (address, bytes) of every staging copy's source
    real = memory.parallel_copy
    monkeypatch.setattr(memory, "parallel_copy", lambda d, s: staged.append((s.ctypes.data, s.nbytes)) or real(d, s))
    up_locked = dev.memory.upload(locked[4096:])
    assert staged == []
    up_pageable = dev.memory.upload(pageable[4096:])
    assert staged and sum(n for _, n in staged) == n - 4096
    assert bool(cupy.array_equal(up_locked, up_pageable))

    lanes = {"urgent": Lane("urgent", priority=10, share=0.25), "bulk": Lane("bulk", priority=0)}
    eng = Engine(EngineConfig(synthesis_workers=2, devices=(0,), workers_per_device=2, memory_budget=4 << 30,
                              lanes=lanes))
    eng.keys.load("chain", example_zkey("bn128", tmp_path))
    file = (EXAMPLES["bn128"] / "chain.wtns").read_bytes()
    buffer = eng.witness_buffer("urgent")
    assert buffer is not None and eng.witness_buffer("bulk") is None
    data = buffer(len(file))
    data[:] = np.frombuffer(file, dtype=np.uint8)
    wtns = parse_wtns(data, "chain.wtns", copy=False)
    vk = json.loads((EXAMPLES["bn128"] / "vk.json").read_text())
    direct = []  # addresses DeviceMemory.upload found page-locked (sent as they are)
    locked_here = memory.page_locked
    monkeypatch.setattr(memory, "page_locked", lambda c, h: (r := locked_here(c, h)) and direct.append(h.ctypes.data) or r)
    eng.start()
    try:
        job = eng.submit("chain", witnesses=[wtns], lane="urgent")
        eng.await_(job.id, timeout=120)
        assert job.state == "COMPLETED", (job.state, job.error)
        lo, hi = data.ctypes.data, data.ctypes.data + data.nbytes
        assert not [a for a, _ in staged if lo <= a < hi]  # its witness went up with no staging copy,
        assert [a for a in direct if lo <= a < hi]  # as it lies, in one transfer
        assert staged  # while the key's first upload (pageable) was staged
        assert verify(vk, job.result.public, job.result.proof)
        assert _snarkjs_accepts(job.result, tmp_path)
    finally:
        eng.stop(30)
        eng.join_workers(30)


def test_page_locked_memory_refused_gives_pageable_memory_and_the_upload_still_arrives(monkeypatch, caplog):
    """Where the host gives no more page-locked memory (cudaHostAlloc refuses: RAM, a container's limit),
    GpuDevice.host_buffer returns pageable memory instead, said in the log; the witness goes up through the
    staging buffers and the same bytes arrive. An urgent job never fails for it."""
    from snarkd.gpu import memory

    def refused(nbytes):
        raise cupy.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation

    dev = gdevice.get(0)
    dev.use()
    n = memory.UPLOAD_CHUNK + 12344  # whole 8-byte words (upload's default dtype)
    with monkeypatch.context() as m, caplog.at_level("WARNING", logger="snarkd"):
        m.setattr(cupy.cuda, "alloc_pinned_memory", refused)
        buf = dev.host_buffer(n)
    assert buf.nbytes == n and buf.dtype == np.uint8 and not memory.page_locked(cupy, buf)
    assert "page-locked host memory refused" in caplog.text
    buf[:] = np.random.default_rng(3).integers(0, 256, n, dtype=np.uint8)
    assert bool(cupy.array_equal(dev.memory.upload(buf, dtype=np.uint8), cupy.asarray(buf)))


def test_a_key_load_makes_the_first_urgent_witness_buffer(tmp_path):
    """Loading a key where an urgent lane proves on a GPU makes one witness's page-locked memory and gives it back
    to CuPy's pinned pool: the first urgent witness then takes that block instead of waiting for a new one."""
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.formats.wtns import wtns_size

    pool = cupy.get_default_pinned_memory_pool()
    pool.free_all_blocks()
    lanes = {"urgent": Lane("urgent", priority=10, share=0.25), "bulk": Lane("bulk", priority=0)}
    eng = Engine(EngineConfig(synthesis_workers=1, devices=(0,), workers_per_device=1, memory_budget=4 << 30,
                              lanes=lanes))
    eng.keys.load("chain", example_zkey("bn128", tmp_path))
    kept = pool.n_free_blocks()
    assert kept >= 1
    data = eng.witness_buffer("urgent")(wtns_size(eng.keys.get("chain").meta["n_vars"]))
    assert pool.n_free_blocks() == kept - 1  # the block made at load, taken again
    del data
    assert pool.n_free_blocks() == kept


def test_a_native_witness_from_inputs_is_replayed_into_page_locked_memory_and_goes_up_in_one_transfer(monkeypatch,
                                                                                                     tmp_path):
    """Where a GPU proves, the engine gives a native replay page-locked memory for its frame (engine._witness_frame,
    up to PINNED_FRAME_MAX): a job from inputs then uploads its witness as it lies, with no staging copy, in every
    lane, and the proof verifies (native and snarkjs). Past the bound the replay keeps its own memory."""
    from snarkd.engine import engine as engine_module
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.gpu import memory

    eng = Engine(EngineConfig(synthesis_workers=1, devices=(0,), workers_per_device=1, memory_budget=4 << 30,
                              witness_engine="native"))
    eng.keys.load("chain", example_zkey("bn128", tmp_path))
    frame = eng._witness_frame(4096)
    assert frame is not None and frame.nbytes == 4096 and memory.page_locked(cupy, frame)
    assert eng._witness_frame(engine_module.PINNED_FRAME_MAX + 1) is None
    frames = []  # the page-locked frames given to replays
    given = eng._witness_frame
    monkeypatch.setattr(eng, "_witness_frame", lambda n: frames.append(f := given(n)) or f)
    direct = []  # addresses DeviceMemory.upload found page-locked (sent as they are)
    locked_here = memory.page_locked
    monkeypatch.setattr(memory, "page_locked", lambda c, h: (r := locked_here(c, h)) and direct.append(h.ctypes.data) or r)
    inputs = json.loads((EXAMPLES["bn128"] / "input.json").read_text())
    vk = json.loads((EXAMPLES["bn128"] / "vk.json").read_text())
    eng.start()
    try:
        for _ in range(2):  # the first may be recorded (its witness in the recording's memory); the second replays
            job = eng.submit("chain", inputs=[inputs])
            eng.await_(job.id, timeout=120)
            assert job.state == "COMPLETED", (job.state, job.error)
            assert verify(vk, job.result.public, job.result.proof)
        assert job.partitions[0].witness_source == "native" and frames
        lo, hi = frames[-1].ctypes.data, frames[-1].ctypes.data + frames[-1].nbytes
        assert [a for a in direct if lo <= a < hi]  # the replay's witness went up as it lay, in one transfer
        assert _snarkjs_accepts(job.result, tmp_path)
    finally:
        eng.stop(30)
        eng.join_workers(30)
