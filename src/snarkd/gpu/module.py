"""The CUDA module for one curve: compiled at run time with NVRTC (through CuPy's
RawModule). Each GpuDevice (device.py) loads it once per curve and keeps it.

kernels.cu includes curve.cuh -> field.cuh -> params.cuh; -DSNARKD_BN254 or
-DSNARKD_BLS12_381 picks the constants. CuPy also keeps the compiled cubin in
its on-disk kernel cache (~/.cupy/kernel_cache), so a daemon restart does not
recompile.

A prebuilt cubin can stand in for NVRTC (useful on machines that are started
fresh for every run): set [gpus] cubin_dir (or $SNARKD_GPU_CUBIN_DIR) to a folder holding
`kernels-<curve>-sm<cc>-<hash>.cubin`, built with

    nvcc -cubin -arch=sm_90 -std=c++17 -D<MACRO> -o <that name> kernels.cu

where <hash> is `source_hash()` (so a stale cubin is never loaded).
`python -m snarkd.gpu.module build DIR` writes them with the local nvcc.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ("kernels.cu", "curve.cuh", "field.cuh", "params.cuh")
# Extra macros for every module GpuDevice loads: empty in production; benchmarks set
# it before the first GpuDevice to time a variant (e.g. ("SNARKD_PLAIN_FIELD",)).
DEFINES: tuple[str, ...] = ()
MACROS = {"bn254": "SNARKD_BN254", "bls12_381": "SNARKD_BLS12_381"}

def source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode())
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def variant_tag(defines: tuple[str, ...] = ()) -> str:
    """'' for the default build; otherwise a tag naming the extra macros (timing variants)."""
    return "".join("-" + re.sub(r"[^a-z0-9]+", "_", d.lower()) for d in sorted(defines))


def cubin_name(curve: str, cc: str, defines: tuple[str, ...] = ()) -> str:
    return f"kernels-{curve}-sm{cc}-{source_hash()}{variant_tag(defines)}.cubin"


def _macro(curve: str) -> str:
    try:
        return MACROS[curve]
    except KeyError:
        raise ValueError(f"no CUDA kernels for curve {curve!r} (have {sorted(MACROS)})") from None


def load(curve: str, cc: str, cubin_dir: str = "", defines: tuple[str, ...] = ()):
    """The RawModule for `curve` ("bn254" or "bls12_381") for compute capability `cc`,
    from cubin_dir when it holds a matching cubin, else compiled with NVRTC.
    defines: extra macros (timing variants such as SNARKD_PLAIN_FIELD; none in production)."""
    import cupy

    macro = _macro(curve)
    if cubin_dir:
        path = Path(cubin_dir) / cubin_name(curve, cc, defines)
        if path.is_file():
            return cupy.RawModule(path=str(path))
    code = (HERE / "kernels.cu").read_text()
    opts = ("-std=c++17", f"-I{HERE}", f"-D{macro}", *(f"-D{d}" for d in defines))
    mod = cupy.RawModule(code=code, options=opts, backend="nvrtc")
    mod.compile()
    return mod


def build_cubins(out_dir: str, cc: str = "90", nvcc: str = "nvcc", defines: tuple[str, ...] = ()) -> list[Path]:
    """One cubin per curve, compiled in parallel; ptxas's register/stack report in <cubin>.txt."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    for curve, macro in MACROS.items():
        path = out / cubin_name(curve, cc, defines)
        cmd = [nvcc, "-cubin", f"-arch=sm_{cc}", "-std=c++17", "-Xptxas", "-v", f"-D{macro}", *(f"-D{d}" for d in defines),
               "-o", str(path), str(HERE / "kernels.cu")]
        log = open(str(path) + ".txt", "w")
        procs.append((path, subprocess.Popen(cmd, stderr=log), log))
    for path, proc, log in procs:
        proc.wait()
        log.close()
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, f"nvcc for {path.name}")
    return [p for p, _, _ in procs]


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "build":  # build DIR [MACRO ...]
        for p in build_cubins(sys.argv[2], defines=tuple(sys.argv[3:])):
            print(p)
    elif len(sys.argv) >= 2 and sys.argv[1] == "hash":
        print(source_hash())
    else:
        print(__doc__)
