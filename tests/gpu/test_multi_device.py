"""Several GPUs (needs >= 2 CUDA devices; skipped otherwise, with the reason).

The backend registry (get_backend("cuda", d), one GpuDevice per device, CudaBackend.pin),
proofs from every device == the CPU proof for fixed r, s (also when the calling
thread is pinned to ANOTHER device), and no cross-device mix-ups under
concurrency: distinct witnesses proved at once on both devices, each result
compared with its own CPU reference, and the engine with [gpus] devices = [0, 1].
"""
import random
import threading

import pytest

from gpu_helpers import EXAMPLES, example_zkey, load_key, require_gpu

require_gpu()

from snarkd.gpu.device import device_count  # noqa: E402
from snarkd.gpu.memory import GpuUnavailable  # noqa: E402
from snarkd.prover.backend import get_backend  # noqa: E402

if device_count() < 2:
    pytest.skip(f"multi-GPU tests need >= 2 CUDA devices; this machine has {device_count()}",
                allow_module_level=True)

import cupy  # noqa: E402

from snarkd.curves.params import curve_by_name  # noqa: E402
from snarkd.formats.wtns import parse_wtns, read_wtns  # noqa: E402
from snarkd.prover import groth16  # noqa: E402
from snarkd.prover.timing import PhaseTimer  # noqa: E402
from snarkd.setup.chain_circuit import chain_witness, wtns_bytes  # noqa: E402


def prove_with(key, wtns, backend, r, s):
    timer = PhaseTimer()
    synth = groth16.synthesize(key, wtns, timer)
    sums = groth16.device_stage(key, synth, timer, 0, with_g2=backend != "cpu", backend=backend)
    return groth16.finalize(key, synth.witness, sums, timer, 0, r, s)


def chain_witnesses(key, curve: str, count: int):
    """`count` distinct valid witnesses of the example chain circuit (k = 3, 4, ...)."""
    c = curve_by_name(curve)
    n = key.zkey.n_vars - 3  # wires: ONE, out, k, x, s[1..N-1]
    return [parse_wtns(wtns_bytes(chain_witness(n, c, 3 + i, 2 + i), c), f"chain k={3 + i}") for i in range(count)]


def on_thread(fn, *args):
    out = {}

    def run():
        try:
            out["v"] = fn(*args)
        except BaseException as e:  # noqa: BLE001
            out["e"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "e" in out:
        raise out["e"]
    return out["v"]


def cuda(d):
    return get_backend("cuda", d)


def test_registry_and_pin():
    assert device_count() >= 2
    b0, b1 = cuda(0), cuda(1)
    assert cuda(0) is b0 and cuda(1) is b1 and b0 is not b1
    assert (b0.dev.index, b1.dev.index) == (0, 1) and (b0.name, b1.name) == ("cuda:0", "cuda:1")
    assert get_backend("cuda", 1, msm_tables="off").dev is b1.dev  # one GpuDevice (one resident key) per device

    def pinned(b):
        b.pin()
        return cupy.cuda.Device().id

    assert on_thread(pinned, b1) == 1
    assert on_thread(pinned, b0) == 0
    with pytest.raises(GpuUnavailable, match="does not exist"):
        cuda(device_count())


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_every_device_equals_cpu(curve):
    key = load_key(curve)
    wtns = read_wtns(EXAMPLES[curve] / "chain.wtns")
    rng = random.Random(11)
    r, s = rng.randrange(key.curve.r), rng.randrange(key.curve.r)
    cpu = prove_with(key, wtns, "cpu", r, s)
    n = device_count()
    for d in range(n):
        def job(d=d):
            cuda((d + 1) % n).pin()  # this thread's current device is another one
            return prove_with(key, wtns, cuda(d), r, s)

        got = on_thread(job)
        assert got.proof == cpu.proof, f"device {d}"
        assert got.public == cpu.public
        rk = cuda(d).dev.resident(key.zkey)
        assert rk.device_id == d and rk.a.device.id == d and rk.h.device.id == d


def test_concurrent_devices_no_mixup():
    curve = "bn128"
    key = load_key(curve)
    ws = chain_witnesses(key, curve, 4)
    rng = random.Random(7)
    rs = [(rng.randrange(key.curve.r), rng.randrange(key.curve.r)) for _ in ws]
    ref = [prove_with(key, w, "cpu", r, s) for w, (r, s) in zip(ws, rs)]
    assert len({str(p.public) for p in ref}) == len(ws)
    n = device_count()
    errors, results = [], []
    lock = threading.Lock()

    def worker(d, wid):
        try:
            cuda(d).pin()
            for rep in range(3):
                i = (wid + rep) % len(ws)
                p = prove_with(key, ws[i], cuda(d), *rs[i])
                with lock:
                    results.append((d, i, p))
        except BaseException as e:  # noqa: BLE001
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=worker, args=(d, k)) for d in range(n) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == n * 2 * 3
    for d, i, p in results:
        assert p.proof == ref[i].proof, f"device {d}, witness {i}: proof differs from the CPU one"
        assert p.public == ref[i].public
    assert {d for d, _, _ in results} == set(range(n))


def test_engine_two_devices(tmp_path):
    from snarkd.engine.engine import Engine, EngineConfig

    curve = "bn128"
    ws = chain_witnesses(load_key(curve), curve, 6)
    eng = Engine(EngineConfig(synthesis_workers=4, devices=(0, 1), workers_per_device=2, finalize_workers=2,
                              threads=4, g2_on_device=True, self_verify=True, memory_budget=8 << 30))
    assert [d.name for d in eng.devices] == ["cuda:0", "cuda:1"]
    eng.keys.load("chain", example_zkey(curve, tmp_path))
    eng.start()
    try:
        jobs = [(i % len(ws), eng.submit("chain", witnesses=[ws[i % len(ws)]])) for i in range(24)]
        expect = {}
        used = set()
        for i, job in jobs:
            eng.await_(job.id, timeout=120)
            assert job.state == "COMPLETED", (job.state, job.error)
            pub = job.result.public
            # chain: public = [out, k]; k identifies the witness this job was given
            assert int(pub[1]) == 3 + i, f"job with witness {i} got public {pub}"
            assert expect.setdefault(i, pub) == pub
            dev = [s["worker"] for p in job.partitions for s in p.spans if s["stage"] == "device"]
            used.update(w.split("/")[0] for w in dev)
        assert used == {"cuda:0", "cuda:1"}
        assert eng.status().jobs.self_verify_failed == 0
    finally:
        eng.stop(5)
        eng.join_workers(10)
