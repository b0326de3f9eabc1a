"""Build of the native core.

Extensions: snarkd.native._core (fields, curves, MSM, NTT, prover kernels)
from bindings.cpp, plus one snarkd.native._<name> per <name>_module.cpp
(setup, pairing, ...), all sharing the header-only core.

Portable flags by default, so a build runs on any CPU of its architecture;
SNARKD_NATIVE_MARCH=native opts into -march=native (BMI2/ADX mulx/adcx).
"""
import os
import sys
from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup


NATIVE = Path("src/snarkd/native")
extra = ["-O3", "-fno-strict-aliasing"]
march = os.environ.get("SNARKD_NATIVE_MARCH", "").strip()
if march:
    extra.append(f"-march={march}")
if os.environ.get("SNARKD_NATIVE_DEBUG"):
    extra = ["-O0", "-g"]
link = ["-pthread"] if sys.platform != "win32" else []


# Every header: a changed header rebuilds the extensions (setuptools only compares
# sources and `depends` with the built module).
HEADERS = sorted(p.as_posix() for p in NATIVE.rglob("*.hpp"))


def extension(name: str, source: Path) -> Pybind11Extension:
    return Pybind11Extension(
        f"snarkd.native.{name}",
        sources=[source.as_posix()],
        depends=HEADERS,
        include_dirs=[NATIVE.as_posix()],
        define_macros=[("SNARKD_BUILD_MARCH", f'"{march}"')],  # reported by `snarkd doctor`
        cxx_std=17,
        extra_compile_args=extra,
        extra_link_args=link,
    )


ext_modules = [extension("_core", NATIVE / "bindings.cpp")]
for src in sorted(NATIVE.glob("*_module.cpp")):
    ext_modules.append(extension("_" + src.name[: -len("_module.cpp")], src))


class parallel_build_ext(build_ext):
    """Build the extensions side by side: each is one large translation unit."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = int(os.environ.get("SNARKD_BUILD_JOBS") or os.cpu_count() or 1)


setup(ext_modules=ext_modules, cmdclass={"build_ext": parallel_build_ext})
