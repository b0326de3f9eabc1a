"""Host arrays staged in page-locked memory by the synthesis worker (gpu/memory.HostStaging): the copy is the
array, it is pinned, its upload is the DMA alone and lands the same bytes, the limit holds, the bytes held go back
when the arrays die, and the engine's proofs through it verify."""
import gc
import json

import numpy as np

from gpu_helpers import EXAMPLES, example_zkey, require_gpu

require_gpu()

from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.gpu import memory  # noqa: E402
from snarkd.prover.backend import get_backend  # noqa: E402


def _array(nbytes: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**63, size=(nbytes // 32, 4), dtype=np.uint64)


def test_a_staged_array_is_a_pinned_copy_and_its_bytes_go_back():
    staging = memory.HostStaging(limit=64 << 20)
    arr = _array(4 << 20)
    staged = staging.stage(arr, 0)
    assert staged is not arr and staged.dtype == arr.dtype and staged.shape == arr.shape
    assert np.array_equal(staged, arr)
    assert memory.is_pinned(staged) and not memory.is_pinned(arr)
    assert staging.held == arr.nbytes
    view = staged[1:]  # a view keeps the pinned buffer, and its bytes counted
    del staged
    gc.collect()
    assert staging.held == arr.nbytes
    del view
    gc.collect()
    assert staging.held == 0


def test_small_arrays_and_arrays_past_the_limit_stay_where_they_are():
    staging = memory.HostStaging(limit=6 << 20)
    small = _array(memory.HOST_PIN_MIN // 2)
    assert staging.stage(small, 0) is small and staging.held == 0
    first = staging.stage(_array(4 << 20), 0)
    second = _array(4 << 20, seed=2)
    assert staging.stage(second, 0) is second  # 8 MiB would pass the 6 MiB limit
    assert staging.held == 4 << 20 and memory.is_pinned(first)


def test_an_upload_from_pinned_memory_lands_the_same_bytes():
    import cupy

    mem = get_backend("cuda").dev.memory
    arr = _array((48 << 20) + 96)  # more than two staging chunks, not a multiple of one
    staged = memory.HostStaging().stage(arr, 0)
    assert memory.is_pinned(staged)
    with mem.guard("test"):
        a, b = mem.upload(arr), mem.upload(staged)
        assert cupy.array_equal(a, b)
        assert np.array_equal(cupy.asnumpy(b).view(np.uint64).reshape(arr.shape), arr)


def test_the_engine_pins_each_witness_and_its_proofs_verify(tmp_path, monkeypatch):
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.verifier import verify

    monkeypatch.setattr(memory, "HOST_PIN_MIN", 0)  # the example's witness is small: pin it anyway
    staging = memory.host_staging()
    before = staging.held
    curve = "bn128"
    eng = Engine(EngineConfig(synthesis_workers=2, devices=(0,), memory_budget=4 << 30))
    eng.keys.load("chain", example_zkey(curve, tmp_path))
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    vk = json.loads((EXAMPLES[curve] / "vk.json").read_text())
    eng.start()
    try:
        jobs = [eng.submit("chain", witnesses=[wtns]) for _ in range(4)]
        for job in jobs:
            eng.await_(job.id, timeout=120)
            assert job.state == "COMPLETED", (job.state, job.error)
            assert verify(vk, job.result.public, job.result.proof)
            assert all("pin" in p.timings for p in job.partitions)
    finally:
        eng.stop(5)
        eng.join_workers(10)
    del jobs
    gc.collect()
    assert staging.held == before  # every staged witness went back with its job
