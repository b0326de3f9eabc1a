"""Whole proofs with the cuda backend == the CPU backend (same r, s), and the
device-memory budget: a proof that does not fit fails with GpuMemoryError and
the backend keeps working afterwards."""
import gc
import json
import random

import pytest

from gpu_helpers import EXAMPLES, example_zkey, load_key, require_gpu

require_gpu()

from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.gpu.memory import GpuMemoryError  # noqa: E402
from snarkd.gpu.resident import csr_bytes  # noqa: E402
from snarkd.prover import groth16  # noqa: E402
from snarkd.prover.backend import get_backend  # noqa: E402
from snarkd.prover.timing import PhaseTimer  # noqa: E402


def prove_with(key, wtns, backend, r, s, device_spmv=False):
    timer = PhaseTimer()
    synth = groth16.synthesize(key, wtns, timer)
    if device_spmv:
        synth.a = synth.b = None
    sums = groth16.device_stage(key, synth, timer, 0, with_g2=backend != "cpu", backend=backend)
    return groth16.finalize(key, synth.witness, sums, timer, 0, r, s)


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
@pytest.mark.parametrize("device_spmv", [False, True])
def test_cuda_proof_equals_cpu(curve, device_spmv):
    key = load_key(curve)
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    rng = random.Random(5)
    for _ in range(2):
        r, s = rng.randrange(key.curve.r), rng.randrange(key.curve.r)
        cpu = prove_with(key, wtns, "cpu", r, s)
        gpu = prove_with(key, wtns, "cuda", r, s, device_spmv)
        assert gpu.proof == cpu.proof
        assert gpu.public == cpu.public


def test_backend_names():
    assert get_backend().name == "cpu" and get_backend("cpu").name == "cpu"
    assert get_backend("auto").name == "cuda:0" and get_backend("cuda") is get_backend("cuda", 0)


def test_tiny_budget_fails_cleanly_then_recovers():
    key = load_key("bn128")
    wtns = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    be = get_backend("cuda")
    mem = be.dev.memory
    old = mem.budget
    try:
        be.release(key)
        mem.set_budget(4096)
        with pytest.raises(GpuMemoryError):
            prove_with(key, wtns, be, 1, 2)
    finally:
        mem.set_budget(old)
    cpu = prove_with(key, wtns, "cpu", 3, 4)
    gpu = prove_with(key, wtns, be, 3, 4)
    assert gpu.proof == cpu.proof


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
@pytest.mark.parametrize("csr,h_mode,keep_w,merged", [("device", "in-place", True, False), ("host", "parked", False, False),
                                                      ("streamed", "parked", False, False), ("streamed", "in-place", True, False),
                                                      ("device", "in-place", True, True), ("streamed", "parked", True, True)])
def test_streamed_bases_give_the_cpu_proof(curve, csr, h_mode, keep_w, merged):
    # bases kept on the host, 100 points per chunk: several chunks per MSM, C's offset inside the first; the CSR on
    # the device or not, H in place or parked on the host, the witness kept or sent again for the W pass, the H and
    # W passes as one (merged) or two
    from snarkd.gpu.stream import StreamPlan

    key = load_key(curve)
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    be = get_backend("cuda", stream_bases="on")
    be.release(key)
    be.use_stream_plan(key, StreamPlan(100, 4, csr, h_mode, keep_w, 1 << 28, 0, merged))
    try:
        cpu = prove_with(key, wtns, "cpu", 9, 10)
        assert be.host_spmv(key) is (csr == "host")
        assert prove_with(key, wtns, be, 9, 10, device_spmv=csr != "host").proof == cpu.proof
        assert be.residency(key).streamed and not be.dev.resident(key.zkey).tables
        assert be.dev.streamed["bytes"] > 0
    finally:
        be.release(key)


def test_a_key_whose_bases_do_not_fit_is_streamed():
    from snarkd.gpu import resident as gresident

    key = load_key("bn128")
    wtns = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    be = get_backend("cuda")
    zk = key.zkey
    bases = gresident.base_bytes(zk)
    mem = be.dev.memory
    old = mem.budget
    gc.collect()
    be.release(key)  # and the pool's cached blocks back to the driver
    try:
        assert not be.bases_streamed(key)
        # room for the CSR and one proof's work beside what the device holds, and half the bases: fits() weighs the
        # budget against held_bytes only. Arrays of earlier tests still alive count in the pool's used bytes, so the
        # pool's own limit goes above them: a budget taken from the used bytes made the key fit whenever they passed
        # half the (small) example bases (a flake in full tests/gpu runs on the H200)
        mem.set_budget(be.dev.held_bytes() + be.dev.proof_bytes(zk) + csr_bytes(zk) + bases // 2)
        mem.pool.set_limit(size=mem.used + mem.budget)
        assert be.bases_streamed(key)
        cpu = prove_with(key, wtns, "cpu", 3, 4)
        assert prove_with(key, wtns, be, 3, 4, device_spmv=not be.host_spmv(key)).proof == cpu.proof
        assert be.residency(key).streamed
    finally:
        mem.set_budget(old)
        be.release(key)
    assert prove_with(key, wtns, be, 5, 6).proof == prove_with(key, wtns, "cpu", 5, 6).proof
    assert not be.residency(key).streamed


def test_stream_mode_is_checked():
    with pytest.raises(ValueError, match="not one of"):
        get_backend("cuda", stream_bases="sometimes")


def test_pool_oom_becomes_gpu_memory_error():
    import cupy

    mem = get_backend("cuda").dev.memory
    old = mem.budget
    # larger than everything the pool holds, so no cached (split) block can serve it
    size = mem.pool.total_bytes() + (64 << 20)
    try:
        mem.set_budget(1 << 20)
        with pytest.raises(GpuMemoryError):
            with mem.guard("a test allocation"):
                cupy.empty(size, dtype=cupy.uint8)
    finally:
        mem.set_budget(old)
    with mem.guard("after"):
        assert int(cupy.ones(10).sum()) == 10


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
@pytest.mark.parametrize("tables", ["on", "off"])
def test_window_tables_on_and_off(curve, tables):
    # MSMs over the precomputed window tables give the CPU's proof, as do plain bases
    key = load_key(curve)
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    be = get_backend("cuda", msm_tables=tables)
    cpu = prove_with(key, wtns, "cpu", 7, 8)
    gpu = prove_with(key, wtns, be, 7, 8, device_spmv=True)
    assert gpu.proof == cpu.proof
    assert sorted(be.dev.resident(key.zkey).tables) == (["a", "b1", "b2", "c", "h"] if tables == "on" else [])


def test_window_tables_mode_is_checked():
    with pytest.raises(ValueError, match="not one of"):
        get_backend("cuda", msm_tables="sometimes")


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_one_shot_prove_on_the_gpu(curve, tmp_path):
    # prove(backend=cuda): sparse products, H and all MSMs (G2 too) on the device, same proof as the CPU
    from snarkd.prover import prove

    key = load_key(curve)
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    cpu = prove(key, wtns, r=5, s=6)
    gpu = prove(key, wtns, r=5, s=6, backend="cuda")  # by name: the GPU, never a silent CPU
    assert gpu.proof == cpu.proof and gpu.public == cpu.public
    assert "upload" in gpu.timings and "upload" not in cpu.timings


def test_cli_backend_cuda(tmp_path):
    import os
    import subprocess
    import sys

    src = str(EXAMPLES["bn128"].parents[1] / "src")  # the package, also where it is not pip-installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    d = EXAMPLES["bn128"]
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = subprocess.run([sys.executable, "-m", "snarkd", "prove", "--backend", "cuda", "--timings", d / "chain.zkey",
                          d / "chain.wtns", proof, public], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert "msm_b2" in res.stderr and "upload" in res.stderr  # the device stage ran, G2 included
    res = subprocess.run([sys.executable, "-m", "snarkd", "verify", d / "vk.json", public, proof], capture_output=True, text=True,
                         env=env)
    assert res.returncode == 0, res.stdout + res.stderr


def test_engine_defaults_put_the_whole_device_stage_on_the_gpu(tmp_path):
    # default config on a GPU: synthesis only checks the witness; A·w, B·w and the G2 MSM run on the device
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.verifier import verify

    curve = "bn128"
    eng = Engine(EngineConfig(synthesis_workers=2, devices=(0,), memory_budget=4 << 30))
    assert eng.g2_on_device is True and eng.sparse_on_host is False
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
        assert eng.status().jobs.self_verify_failed == 0
    finally:
        eng.stop(5)
        eng.join_workers(10)
