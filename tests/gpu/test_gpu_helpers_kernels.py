"""The device stage's helpers == numpy, across tile and chunk boundaries: prefix sums and the accumulation
plan (our kernels), chunked uploads; and no CuPy-compiled kernel on a proof's path (they cost a fresh process
0.3-0.9 s on first use)."""
import numpy as np
import pytest

from gpu_helpers import require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.gpu import memory as gmemory  # noqa: E402
from snarkd.gpu import module as gmodule  # noqa: E402
from snarkd.gpu import msm as gmsm  # noqa: E402

DEV = gdevice.get(0)


@pytest.mark.parametrize("n", [0, 1, 2, 31, 1023, 1024, 1025, 4097, (1 << 19) + 7, (1 << 21) + 3])
def test_exclusive_scan(n):
    rng = np.random.default_rng(n)
    counts = rng.integers(0, 1 << 10, size=n, dtype=np.uint32)
    want = np.concatenate([[0], np.cumsum(counts, dtype=np.uint64)]).astype(np.uint32)
    out = cupy.full(n + 1, 0xDEADBEEF, dtype=cupy.uint32)  # poisoned: every entry must be written
    with DEV.memory.guard("test"):
        gmsm.exclusive_scan(DEV.module("bn254"), cupy.asarray(counts), out)
        assert np.array_equal(out.get(), want)


@pytest.mark.parametrize("nseg,L", [(1, 8), (1000, 8), (1 << 15, 16), ((1 << 19) + 5, 9)])
def test_items_per_bucket_and_max(nseg, L):
    rng = np.random.default_rng(nseg)
    counts = rng.integers(0, 200, size=nseg, dtype=np.uint32)
    counts[nseg // 2] = 5000  # one skewed bucket
    info = cupy.zeros(2, dtype=cupy.uint32)
    items = cupy.empty(nseg, dtype=cupy.uint32)
    with DEV.memory.guard("test"):
        gmodule.launch(DEV.module("bn254"), "items_per_bucket", nseg,
                       (cupy.asarray(counts), np.uint32(nseg), np.uint32(L), items, info))
        want = (counts.astype(np.uint64) + L - 1) // L
        assert np.array_equal(items.get(), want.astype(np.uint32)) and int(info.get()[1]) == int(want.max())


def test_device_copy_is_a_plain_copy():
    src = cupy.arange(100, dtype=cupy.uint32)
    dst = cupy.zeros(100, dtype=cupy.uint32)
    gmsm.device_copy(dst[10:], src[5:], 50)
    host = dst.get()
    assert np.array_equal(host[10:60], np.arange(5, 55)) and not host[:10].any() and not host[60:].any()


def test_a_one_shot_proof_compiles_no_cupy_kernels(tmp_path):
    """With the packaged kernels (or [gpus] cubin_dir's), a fresh process proves without compiling anything:
    CuPy's kernel cache stays empty."""
    import os
    import subprocess
    import sys

    from gpu_helpers import EXAMPLES, REPO

    if gmodule.prebuilt("bn254", DEV.compute_capability, DEV.cubin_dir) is None:
        pytest.fail(f"no prebuilt kernels for sm_{DEV.compute_capability}: run tools/build_kernels.py")
    cache = tmp_path / "cupy-cache"
    code = ("from snarkd.formats.wtns import read_wtns; from snarkd.prover import ProvingKey, prove; "
            f"k = ProvingKey.load({str(EXAMPLES['bn128'] / 'chain.zkey')!r}); "
            f"print(prove(k, read_wtns({str(EXAMPLES['bn128'] / 'chain.wtns')!r}), backend='cuda').public)")
    env = {**os.environ, "CUPY_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    compiled = [p.name for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert compiled == [], f"CuPy compiled kernels on a proof's path: {compiled}"


CHUNK = gmemory.UPLOAD_CHUNK


@pytest.mark.parametrize("nbytes", [0, 4, 8 << 20, (8 << 20) + 4, CHUNK, CHUNK + 4, 3 * CHUNK + 12, (5 * CHUNK) // 2 + 8])
def test_chunked_upload_round_trips(nbytes):
    rng = np.random.default_rng(nbytes)
    host = rng.integers(0, 1 << 32, size=nbytes // 4, dtype=np.uint32)
    with DEV.memory.guard("test"):
        dev = DEV.memory.upload(host)
        assert dev.dtype == np.uint32 and np.array_equal(dev.get(), host)
        wide = DEV.memory.upload(host[: (nbytes // 8) * 2].view(np.uint64), dtype=np.uint64)
        assert np.array_equal(wide.get(), host[: (nbytes // 8) * 2].view(np.uint64))
