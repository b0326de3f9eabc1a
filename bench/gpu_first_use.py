#!/usr/bin/env python3
"""Where a one-shot GPU proof's first-use cost goes: CuPy import, device set-up, module load, key upload,
and each phase of the first proof against the second, in one fresh process.

    python bench/gpu_first_use.py --zkey K.zkey --wtns W.wtns [--json OUT.json]

Runs itself twice in fresh processes sharing one empty CuPy kernel cache (CUPY_CACHE_DIR): "cold" is a
machine that never ran CuPy's own kernels, "warm" a machine that did (CuPy caches compiled kernels on
disk). A cubin folder ([gpus] cubin_dir) takes NVRTC out of snarkd's own module load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_process(zkey: str, wtns: str) -> dict:
    sys.path.insert(0, str(REPO / "src"))
    out: dict = {}
    t = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        out[name] = round((now - t) * 1000, 1)
        t = now

    import cupy

    lap("import_cupy_ms")
    from snarkd.formats.wtns import read_wtns
    from snarkd.prover import ProvingKey, get_backend, prove
    from snarkd.prover.timing import PhaseTimer

    lap("import_snarkd_ms")
    be = get_backend("cuda", msm_tables="off", cubin_dir=os.environ.get("SNARKD_GPU_CUBIN_DIR", ""))
    lap("device_init_ms")
    key = ProvingKey.load(zkey)
    w = read_wtns(wtns)
    lap("load_ms")
    mod = be.dev.module(key.curve.native)
    lap("module_object_ms")
    with be.dev.memory.guard("probe"):
        mod.get_function("msm_digits")
        lap("module_load_ms")  # the cubin (or NVRTC output) loaded into the context
        x = cupy.zeros(1 << 16, dtype=cupy.uint32)
        lap("first_alloc_ms")
        y = cupy.empty(1 << 16, dtype=cupy.uint32)
        cupy.cumsum(x, dtype=cupy.uint32, out=y)
        cupy.cuda.Device(0).synchronize()
        lap("cupy_cumsum_ms")  # CuPy's own kernels: compiled with NVRTC on first use (or read from its cache)
        z = (x + 3) // 4
        cupy.cuda.Device(0).synchronize()
        lap("cupy_elementwise_ms")
        int(z.max())
        lap("cupy_max_ms")
        cupy.stack([x[:1], y[:1]]).get()
        lap("cupy_stack_get_ms")
        cupy.cuda.alloc_pinned_memory(32 << 20)
        lap("pinned_32MiB_ms")
        big = cupy.empty(1 << 30, dtype=cupy.uint8)
        del big
        lap("pool_1GiB_ms")
    with be.dev.memory.guard("upload"):
        be.dev.resident(key.zkey, "off")
    be.dev.synchronize()
    lap("key_upload_ms")
    for run in ("first", "second", "third"):
        timer = PhaseTimer()
        t0 = time.perf_counter()
        prove(key, w, backend=be, timer=timer)
        cupy.cuda.Device(0).synchronize()
        out[f"{run}_prove_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out[f"{run}_phases_ms"] = {k: round(v, 1) for k, v in timer.ms.items()}
    t = time.perf_counter()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--zkey", required=True)
    ap.add_argument("--wtns", required=True)
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one_process(a.zkey, a.wtns)))
        return 0
    res = {"zkey": a.zkey, "runs": {}}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CUPY_CACHE_DIR": cache}
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, __file__, "--child", "--zkey", a.zkey, "--wtns", a.wtns], env=env,
                               capture_output=True, text=True)
            if p.returncode:
                print(p.stderr[-3000:], file=sys.stderr)
                return p.returncode
            run = json.loads(p.stdout.strip().splitlines()[-1])
            run["process_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            res["runs"][label] = run
            print(label, json.dumps(run), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
