"""The CUDA module for one curve, and how its kernels are launched. Each GpuDevice (device.py) loads it
once per curve and keeps it.

kernels.cu includes curve.cuh -> field.cuh -> params.cuh and pairing.cuh, and from the CPU core the
arithmetic written once for both, ../native/{host_device.hpp, ec/xyzz.hpp, pairing/lines.hpp} (by paths
relative to the including file, which nvcc and NVRTC both resolve from that file's folder, in the source tree
and in an installed package alike: package data has native/**/*.hpp); SOURCES lists every file a build reads.
-DSNARKD_BN254 or -DSNARKD_BLS12_381 picks the constants. Where the module comes from, first match wins:

    cubin_dir   [gpus] cubin_dir (or $SNARKD_GPU_CUBIN_DIR): kernels-<curve>-sm<cc>-<hash>.cubin for exactly
                this device (a build of one's own: `python -m snarkd.gpu.module build DIR [MACRO ...]`)
    packaged    the kernels shipped in the package (kernels/, built by tools/build_kernels.py with nvcc):
                a cubin for each of ARCHS, the one for this device being the highest sm_XY of its major
                with Y <= its minor (machine code runs on later minors of its major), else, on a GPU newer
                than every build, the PTX of the newest (the driver compiles it once and caches it)
    NVRTC       compiled here through CuPy's RawModule (seconds; CuPy keeps the result in its on-disk kernel
                cache, ~/.cupy/kernel_cache, so the next process reads it from there; that cache's key covers the
                code and the options but no included file, so the options carry source_hash())

<hash> is `source_hash()`: a build of other sources is never loaded (tests/gpu/test_kernel_builds.py fails
until tools/build_kernels.py has rebuilt the packaged ones). Variants (extra macros, for benchmarks) are
passed explicitly to `load(..., defines)`; they never come from the package.
"""

from __future__ import annotations

import hashlib
import logging
import re
import subprocess
import sys
from pathlib import Path

from snarkd.curves.params import BLS12_381, BN254

log = logging.getLogger("snarkd.gpu")
HERE = Path(__file__).resolve().parent
# Every file kernels.cu includes, relative to this folder (tests/gpu/test_kernel_builds.py checks the list).
SOURCES = ("kernels.cu", "curve.cuh", "field.cuh", "params.cuh", "pairing.cuh", "../native/host_device.hpp",
           "../native/ec/xyzz.hpp", "../native/pairing/lines.hpp")
PACKAGED = HERE / "kernels"
ARCHS = ("80", "86", "89", "90")  # machine code shipped for these; PTX of the last for newer GPUs
CURVES = {"bn254": BN254, "bls12_381": BLS12_381}
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


def ptx_name(curve: str, cc: str) -> str:
    return f"kernels-{curve}-compute{cc}-{source_hash()}.ptx"


def _macro(curve: str) -> str:
    try:
        return MACROS[curve]
    except KeyError:
        raise ValueError(f"no CUDA kernels for curve {curve!r} (have {sorted(MACROS)})") from None


def packaged_arch(cc: str, archs: tuple[str, ...] = ARCHS) -> tuple[str, str] | None:
    """("cubin", arch) of the packaged machine code that runs on compute capability cc, ("ptx", arch) for a
    device newer than every build, None for one older than all (NVRTC then)."""
    def split(a: str) -> tuple[int, int]:
        return int(a[:-1]), int(a[-1])

    major, minor = split(cc)
    same = [a for a in archs if split(a)[0] == major and split(a)[1] <= minor]
    if same:
        return "cubin", max(same, key=split)
    newest = max(archs, key=split)
    if (major, minor) > split(newest):
        return "ptx", newest
    return None


def prebuilt(curve: str, cc: str, cubin_dir: str = "", defines: tuple[str, ...] = ()) -> Path | None:
    """The prebuilt module file for `curve` on a device of compute capability cc, or None (NVRTC)."""
    if cubin_dir:
        path = Path(cubin_dir) / cubin_name(curve, cc, defines)
        if path.is_file():
            return path
    pick = None if defines else packaged_arch(cc)
    if pick is None:
        return None
    kind, arch = pick
    path = PACKAGED / (cubin_name(curve, arch) if kind == "cubin" else ptx_name(curve, arch))
    return path if path.is_file() else None


def load(curve: str, cc: str, cubin_dir: str = "", defines: tuple[str, ...] = ()):
    """The RawModule for `curve` ("bn254" or "bls12_381") on compute capability `cc`: prebuilt when there is
    a build for it (the module docstring's order), else compiled with NVRTC. defines: extra macros (a
    benchmark's variant; none in production)."""
    import cupy

    _macro(curve)  # an unknown curve fails here, before any file is looked for
    path = prebuilt(curve, cc, cubin_dir, defines)
    if path is not None:
        log.debug("kernels for %s on sm_%s: %s", curve, cc, path)
        return cupy.RawModule(path=str(path))
    log.info("kernels for %s on sm_%s: no prebuilt module; compiling with NVRTC", curve, cc)
    code = (HERE / "kernels.cu").read_text()
    mod = cupy.RawModule(code=code, options=nvrtc_options(curve, defines), backend="nvrtc")
    mod.compile()
    return mod


def nvrtc_options(curve: str, defines: tuple[str, ...] = ()) -> tuple[str, ...]:
    """NVRTC's options for kernels.cu: the headers' folder, the curve, the variant's macros, and
    SNARKD_SOURCES=<source_hash()>, unused by the code: CuPy's kernel cache keys on the code and the
    options only, so a change to an included header must reach the options to miss it."""
    return ("-std=c++17", f"-I{HERE}", f"-D{_macro(curve)}", *(f"-D{d}" for d in defines),
            f"-DSNARKD_SOURCES={source_hash()}")


# (module, kernel name) -> (the module, its function): CuPy's get_function makes a new Function (and asks the driver
# for it) at every call, and a proof launches hundreds of kernels from threads that hold the GIL meanwhile. The
# module is kept in the entry, so an id is never reused while its entry lives.
_FUNCTIONS: dict[tuple[int, str], tuple[object, object]] = {}


def function(mod, name: str):
    """Kernel `name` of `mod`, looked up once."""
    entry = _FUNCTIONS.get((id(mod), name))
    if entry is None or entry[0] is not mod:
        entry = _FUNCTIONS[(id(mod), name)] = (mod, mod.get_function(name))
    return entry[1]


def launch(mod, name: str, count: int, args, block: int = 256, shared_mem: int = 0) -> None:
    """Kernel `name` of `mod` over `count` threads (none when count is 0), `block` per block."""
    if count > 0:
        function(mod, name)(((count + block - 1) // block,), (block,), args, shared_mem=shared_mem)


def nvcc_command(curve: str, arch: str, out: Path, kind: str = "cubin", nvcc: str = "nvcc",
                 defines: tuple[str, ...] = ()) -> list[str]:
    """nvcc's command for one build: machine code ("cubin", -arch=sm_ARCH) or PTX ("ptx", compute_ARCH)."""
    target = f"-arch=sm_{arch}" if kind == "cubin" else f"-arch=compute_{arch}"
    return [nvcc, f"-{kind}", target, "-std=c++17", "-Xptxas", "-v", f"-D{_macro(curve)}",
            *(f"-D{d}" for d in defines), "-o", str(out), str(HERE / "kernels.cu")]


def build_cubins(out_dir: str, cc: str = "90", nvcc: str = "nvcc", defines: tuple[str, ...] = ()) -> list[Path]:
    """One cubin per curve for one compute capability, compiled in parallel; ptxas's register/stack report
    in <cubin>.txt (a variant's build for [gpus] cubin_dir; the packaged ones: tools/build_kernels.py)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    for curve in MACROS:
        path = out / cubin_name(curve, cc, defines)
        report = open(str(path) + ".txt", "w")  # noqa: SIM115 - closed below
        procs.append((path, subprocess.Popen(nvcc_command(curve, cc, path, nvcc=nvcc, defines=defines),
                                             stderr=report), report))
    for path, proc, report in procs:
        proc.wait()
        report.close()
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
