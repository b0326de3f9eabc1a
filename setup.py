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

    def run(self):
        super().run()
        self.build_witness_runtime()

    def build_witness_runtime(self):
        """The compiled witness library's runtime object, one per field, built once here beside the extensions
        (snarkd.witness.compiled.make_installed_runtime_objects, ~2 s on 2 cores): a machine's first `snarkd witness
        --compile` then compiles the circuit's code only. Optional: where it cannot be built, or the compiler at run
        time is another, the library builds compile the runtime themselves as before."""
        dest = (self.get_finalized_command("build_py").get_package_dir("snarkd.native") if self.inplace
                else os.path.join(self.build_lib, "snarkd", "native"))
        sys.path.insert(0, "src")
        try:
            from snarkd.witness.compiled import make_installed_runtime_objects

            written = make_installed_runtime_objects(os.path.abspath(dest))
        except Exception as exc:  # never fails the install: the run-time path needs no such object
            print(f"warning: the witness runtime object was not built ({exc}); compiled witness libraries will "
                  "compile it themselves", file=sys.stderr)
            return
        finally:
            sys.path.remove("src")
        if not written:
            print("warning: the witness runtime object was not built (no C++ compiler, or it failed)",
                  file=sys.stderr)


setup(ext_modules=ext_modules, cmdclass={"build_ext": parallel_build_ext})
