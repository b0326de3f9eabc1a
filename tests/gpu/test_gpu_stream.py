"""Streamed bases (gpu/stream.py, gpu/hostbases.py) == the CPU core: one pass over page-locked host bases for
several proofs, ragged chunks, C's offset, both curves; the parked H == the in-place H; a partitioned job of a
streamed key goes through the engine as one batch whose chunks cross once, and its proofs verify."""
import mmap
import random
from types import SimpleNamespace

import numpy as np
import pytest

from gpu_helpers import EXAMPLES, example_zkey, ints_to_fr, load_key, native, rand_points, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.gpu import hostbases  # noqa: E402
from snarkd.gpu import stream as gstream  # noqa: E402

DEV = gdevice.get(0)
R = {"bn254": 21888242871839275222246405745257275088548364400416034343698204186575808495617,
     "bls12_381": 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001}
CURVE_OF = {"bn254": "bn128", "bls12_381": "bls12381"}


def own_pages(x):
    """x in a mapping of its own, as a key's sections are: a registration (page-rounded, read-only) then covers
    no heap memory that a later host array could be allocated in."""
    mm = mmap.mmap(-1, max(x.nbytes, 1))
    out = np.frombuffer(mm, dtype=x.dtype, count=x.size).reshape(x.shape)
    out[...] = x
    return out


def fake_key(rng, curve, m, n, n_public):
    """A zkey-shaped object: random bases in anonymous mappings (registered like a mapped key's)."""
    pts = lambda g2, k: own_pages(rand_points(rng, CURVE_OF[curve], g2, k, distinct=min(k, 64)))  # noqa: E731
    return SimpleNamespace(path="fake", a=pts(False, m), b1=pts(False, m), b2=pts(True, m),
                           c=pts(False, m - n_public - 1), h=pts(False, n))


def rand_scalars(rng, n, r):
    vals = [rng.choice([0, 1, r - 1, rng.randrange(r), rng.randrange(r)]) for _ in range(n)]
    return ints_to_fr(vals)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("mode", ["registered", "pinned-copy", "pageable"])
def test_pass_equals_the_cpu_msms(curve, mode):
    rng = random.Random(hash((curve, mode)) & 0xFFFFFF)
    nat = native(curve)
    m, n, npub, chunk = 1000, 1024, 3, 300  # ragged last chunk; C's first chunk skips n_public + 1 scalars
    zk = fake_key(rng, curve, m, n, npub)
    host = hostbases.HostBases(zk, cupy, allow=(mode,))
    try:
        assert host.mode == mode
        ws = [rand_scalars(rng, m, R[curve]) for _ in range(3)]
        hs = [rand_scalars(rng, n, R[curve]) for _ in range(3)]
        dev_w = [cupy.asarray(w.view(np.uint32).reshape(-1)) for w in ws]
        dev_h = [cupy.asarray(h.view(np.uint32).reshape(-1)) for h in hs]
        c = gstream.window_bits(chunk)
        rng_w = [(lo, min(m, lo + chunk)) for lo in range(0, m, chunk)]
        rng_h = [(lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]
        w_seg = (rng_w, lambda lo, hi: gstream.w_tasks(lo, hi, npub, True), dev_w)
        out_w, st = DEV.msm_pass(curve, host, [w_seg], c, nat)
        out_h, _ = DEV.msm_pass(curve, host, [(rng_h, gstream.h_tasks, dev_h)], c, nat)
        assert st["bytes"] == sum(zk_arr.nbytes for zk_arr in (zk.a, zk.b1, zk.b2, zk.c))  # each chunk sent once
        # the two as one pass (a merged plan): the same points, every chunk of both sent once
        out_both, st2 = DEV.msm_pass(curve, host, [(rng_h, gstream.h_tasks, dev_h), w_seg], c, nat)
        assert st2["bytes"] == st["bytes"] + zk.h.nbytes and len(st2["segment_kernel_s"]) == 2
        for p in range(3):
            for name in ("a", "b1", "c", "b2"):
                assert np.array_equal(np.asarray(out_both[p][name]), np.asarray(out_w[p][name])), (p, name)
            assert np.array_equal(np.asarray(out_both[p]["h"]), np.asarray(out_h[p]["h"])), p
        for p in range(3):
            want = {"a": nat.msm_g1(zk.a, ws[p], 0), "b1": nat.msm_g1(zk.b1, ws[p], 0),
                    "c": nat.msm_g1(zk.c, np.ascontiguousarray(ws[p][npub + 1:]), 0), "b2": nat.msm_g2(zk.b2, ws[p], 0)}
            for name, ref in want.items():
                assert np.array_equal(np.asarray(out_w[p][name]).reshape(-1), np.asarray(ref).reshape(-1)), (p, name)
            ref_h = nat.msm_g1(zk.h, hs[p], 0)
            assert np.array_equal(np.asarray(out_h[p]["h"]).reshape(-1), np.asarray(ref_h).reshape(-1)), p
    finally:
        host.close()


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
def test_parked_h_equals_in_place(curve):
    rng = random.Random(7)
    log_n = 12
    n = 1 << log_n
    a, b = rand_scalars(rng, n, R[curve]), rand_scalars(rng, n, R[curve])
    up = lambda x: cupy.asarray(x.view(np.uint32).reshape(-1))  # noqa: E731
    ref = DEV.h_values(curve, log_n, [up(a), up(b)], "in-place").get()
    from snarkd.gpu import ntt as gntt

    old = gntt.PARK_CHUNK
    gntt.PARK_CHUNK = 1000  # ragged chunks
    try:
        got = DEV.h_values(curve, log_n, [up(a), up(b)], "parked").get()
    finally:
        gntt.PARK_CHUNK = old
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("merged", [False, True])
def test_a_partitioned_job_of_a_streamed_key_is_one_batch(tmp_path, merged):
    from snarkd.config import EngineConfig
    from snarkd.engine.engine import Engine
    from snarkd.formats.wtns import read_wtns
    from snarkd.verifier import verify

    cfg = EngineConfig(synthesis_workers=2, devices=(0,), workers_per_device=1, g2_on_device=True, self_verify=True,
                       stream_bases="on")
    eng = Engine(cfg)
    be = eng.devices[0]
    lk = eng.keys.load("k", example_zkey("bn128", tmp_path))
    key = lk.key
    be.release(key)
    # a batch's witnesses go up on the copy stream beside the previous proof's kernels (kept on the device)
    be.use_stream_plan(key, gstream.StreamPlan(100, 8, "device", "in-place", True, 1 << 28, 0, merged))
    wt = read_wtns(EXAMPLES["bn128"] / "chain.wtns")
    eng.start()
    try:
        before = dict(DEV.streamed)
        job = eng.submit("k", witnesses=[wt] * 6)
        assert job.done.wait(120) and job.state == "COMPLETED", job.error
        for p in job.partitions:
            assert verify(lk.vk, p.result.public, p.result.proof)
        proofs, passes = DEV.streamed["proofs"] - before["proofs"], DEV.streamed["passes"] - before["passes"]
        # 6 proofs in at most 2 batches (the first may start before the rest are synthesized): 2 passes a batch,
        # or one when merged
        per = 1 if merged else 2
        assert proofs == 6 and passes <= 2 * per, (proofs, passes)
        per_batch = gstream.KeyShape.of(key.zkey, 0).base_bytes
        assert DEV.streamed["bytes"] - before["bytes"] <= (passes // per) * per_batch
    finally:
        eng.stop(30)
        eng.join_workers(30)
        be.release(key)


def test_a_host_csr_is_copied_into_page_locked_memory_of_its_own():
    """The CSR is built on the heap: registered in place, its page-rounded extent covered neighbours' pages, and
    a later device-to-host copy into a new array starting there and running past it failed (cudaErrorInvalidValue,
    test_gpu_prove's streamed-CSR case after other tests). It is copied into a pinned allocation instead."""
    rng = np.random.default_rng(7)
    mats = [(np.sort(rng.integers(0, 900, 301)).astype(np.uint32), rng.integers(0, 99, 900).astype(np.uint32),
             rng.integers(0, 2**63, 3600, dtype=np.uint64)) for _ in range(2)]
    rt = cupy.cuda.runtime
    hc = hostbases.HostCsr(mats, cupy)
    try:
        assert hc.pinned
        for heap, pinned in zip((x for m in mats for x in m), (x for m in hc.mats for x in m)):
            assert np.array_equal(heap, pinned) and heap.ctypes.data != pinned.ctypes.data
            assert rt.pointerGetAttributes(pinned.ctypes.data).type == hostbases.MEMORY_TYPE_HOST
            assert rt.pointerGetAttributes(heap.ctypes.data).type != hostbases.MEMORY_TYPE_HOST  # left as it was
        d = cupy.arange(1 << 14, dtype=cupy.uint32)
        for n in range(1, 1 << 14, 97):  # fresh heap arrays of many sizes, wherever malloc puts them
            assert int(d[:n].get()[-1]) == n - 1
    finally:
        hc.close()


def test_a_read_only_key_mapping_is_registered_in_place(tmp_path):
    """A key file mapped read-only (as zkeys are) is page-locked where it is, not copied: a 2^26 key fell back to a
    24 GiB pinned copy (11 s at load, the size of the bases in host memory) when writable registration came first."""
    rng = random.Random(5)
    secs = {"a": 300, "b1": 300, "b2": 300, "c": 296, "h": 512}
    arrays = {k: rand_points(rng, "bn128", k == "b2", v, distinct=16) for k, v in secs.items()}
    path = tmp_path / "bases.bin"
    with open(path, "wb") as f:
        for k in hostbases.SECTIONS:
            f.write(arrays[k].tobytes())
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    views, off = {}, 0
    for k in hostbases.SECTIONS:
        a = arrays[k]
        views[k] = mapped[off : off + a.nbytes].view(a.dtype).reshape(a.shape)
        off += a.nbytes
    assert not any(v.flags.writeable for v in views.values())
    host = hostbases.HostBases(SimpleNamespace(path=str(path), **views), cupy)
    try:
        assert (host.mode, host.why) == ("registered", "")
        ptr, nbytes = host.rows("b2", 10, 20)
        dev = cupy.empty(nbytes // 4, dtype=cupy.uint32)
        dev.data.copy_from_host(ptr, nbytes)
        assert dev.get().tobytes() == arrays["b2"][10:20].tobytes()
    finally:
        host.close()
