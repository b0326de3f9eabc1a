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
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ("kernels.cu", "curve.cuh", "field.cuh", "params.cuh")
MACROS = {"bn254": "SNARKD_BN254", "bls12_381": "SNARKD_BLS12_381"}

def source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode())
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def cubin_name(curve: str, cc: str) -> str:
    return f"kernels-{curve}-sm{cc}-{source_hash()}.cubin"


def _macro(curve: str) -> str:
    try:
        return MACROS[curve]
    except KeyError:
        raise ValueError(f"no CUDA kernels for curve {curve!r} (have {sorted(MACROS)})") from None


def load(curve: str, cc: str, cubin_dir: str = ""):
    """The RawModule for `curve` ("bn254" or "bls12_381") for compute capability `cc`,
    from cubin_dir when it holds a matching cubin, else compiled with NVRTC."""
    import cupy

    macro = _macro(curve)
    if cubin_dir:
        path = Path(cubin_dir) / cubin_name(curve, cc)
        if path.is_file():
            return cupy.RawModule(path=str(path))
    code = (HERE / "kernels.cu").read_text()
    mod = cupy.RawModule(code=code, options=("-std=c++17", f"-I{HERE}", f"-D{macro}"), backend="nvrtc")
    mod.compile()
    return mod


def build_cubins(out_dir: str, cc: str = "90", nvcc: str = "nvcc") -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for curve, macro in MACROS.items():
        path = out / cubin_name(curve, cc)
        subprocess.run([nvcc, "-cubin", f"-arch=sm_{cc}", "-std=c++17", f"-D{macro}", "-o", str(path), str(HERE / "kernels.cu")], check=True)
        made.append(path)
    return made


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "build":
        for p in build_cubins(sys.argv[2]):
            print(p)
    elif len(sys.argv) >= 2 and sys.argv[1] == "hash":
        print(source_hash())
    else:
        print(__doc__)
