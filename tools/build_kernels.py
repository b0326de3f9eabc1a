#!/usr/bin/env python3
"""Build the kernels shipped in the package (src/snarkd/gpu/kernels/) with nvcc: for each curve a cubin for
every compute capability in gpu.module.ARCHS (sm_80, sm_86, sm_89, sm_90) and the PTX of the newest, for GPUs
newer than every build (the driver compiles it on first use and caches it). Names carry source_hash(), so a
build of older sources is never loaded; this removes them.

    python tools/build_kernels.py [--nvcc PATH] [--jobs N] [--check]

Run it after any change to the kernels' sources (gpu.module.SOURCES: src/snarkd/gpu/{kernels.cu,curve.cuh,
field.cuh,params.cuh,pairing.cuh} and the headers shared with the CPU core, src/snarkd/native/{host_device.hpp,
ec/xyzz.hpp,pairing/lines.hpp}) and commit the result
(tests/gpu/test_kernel_builds.py fails until then). A fresh install never needs nvcc: the package carries
these; without a build for its GPU, snarkd compiles with NVRTC at run time (gpu/module.py).
--check: exit 1 unless the packaged builds are those of the current sources (nothing is built).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.gpu import module as gm  # noqa: E402


def wanted() -> list[tuple[str, str, str, Path]]:
    """(curve, kind, arch, path) of every packaged build of the current sources."""
    out = [(c, "cubin", a, gm.PACKAGED / gm.cubin_name(c, a)) for c in gm.MACROS for a in gm.ARCHS]
    return out + [(c, "ptx", gm.ARCHS[-1], gm.PACKAGED / gm.ptx_name(c, gm.ARCHS[-1])) for c in gm.MACROS]


def stale() -> list[Path]:
    keep = {p for *_, p in wanted()}
    return sorted(p for p in gm.PACKAGED.glob("kernels-*") if p not in keep)


def build(nvcc: str, jobs: int) -> int:
    gm.PACKAGED.mkdir(exist_ok=True)
    todo = [(c, k, a, p) for c, k, a, p in wanted() if not p.is_file()]

    def one(item) -> tuple[Path, str]:
        curve, kind, arch, path = item
        tmp = path.with_name(path.name + ".tmp")
        r = subprocess.run(gm.nvcc_command(curve, arch, tmp, kind, nvcc), capture_output=True, text=True)
        if r.returncode:
            tmp.unlink(missing_ok=True)
            return path, r.stderr[-3000:] or f"nvcc exited {r.returncode}"
        os.replace(tmp, path)
        return path, ""

    failed = 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, err in pool.map(one, todo):
            print(("FAILED " if err else "built ") + str(path.relative_to(REPO)), flush=True)
            if err:
                print(err, file=sys.stderr)
                failed += 1
    for p in stale():
        p.unlink()
        print(f"removed {p.relative_to(REPO)} (other sources)")
    total = sum(p.stat().st_size for *_, p in wanted() if p.is_file())
    print(f"{len(wanted())} builds for sources {gm.source_hash()}: {total / 2**20:.1f} MiB in {gm.PACKAGED.relative_to(REPO)}")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        missing = [p for *_, p in wanted() if not p.is_file()]
        for p in missing + stale():
            print(("missing " if p in missing else "stale ") + str(p.relative_to(REPO)))
        return 1 if missing or stale() else 0
    return build(a.nvcc, a.jobs)


if __name__ == "__main__":
    sys.exit(main())
