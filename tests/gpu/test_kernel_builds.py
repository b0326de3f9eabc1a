"""The kernels shipped in the package (tools/build_kernels.py), checked without a GPU: builds of the current
sources for every curve and compute capability, each the machine code it names, the right one chosen for a
device, every kernel the host code launches present, and the files declared as package data."""

from __future__ import annotations

import glob
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from snarkd.gpu import module as gm

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
EM_CUDA = 190


def test_the_packaged_builds_are_of_the_current_sources():
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_kernels.py"), "--check"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, f"run tools/build_kernels.py (needs nvcc) and commit src/snarkd/gpu/kernels/:\n{r.stdout}"


@pytest.mark.parametrize("curve", sorted(gm.MACROS))
@pytest.mark.parametrize("arch", gm.ARCHS)
def test_each_cubin_is_machine_code_for_its_arch(curve, arch):
    head = (gm.PACKAGED / gm.cubin_name(curve, arch)).read_bytes()[:64]
    assert head[:4] == b"\x7fELF" and struct.unpack_from("<H", head, 18)[0] == EM_CUDA
    assert (struct.unpack_from("<I", head, 48)[0] >> 8) & 0xFF == int(arch)  # e_flags: the SM version


@pytest.mark.parametrize("curve", sorted(gm.MACROS))
def test_the_ptx_targets_the_newest_arch(curve):
    text = (gm.PACKAGED / gm.ptx_name(curve, gm.ARCHS[-1])).read_text()[:2000]
    assert f".target sm_{gm.ARCHS[-1]}" in text


@pytest.mark.parametrize("cc, want", [
    ("80", ("cubin", "80")), ("86", ("cubin", "86")), ("87", ("cubin", "86")), ("89", ("cubin", "89")),
    ("90", ("cubin", "90")), ("100", ("ptx", "90")), ("120", ("ptx", "90")), ("75", None), ("70", None)])
def test_the_build_chosen_for_a_device(cc, want):
    """Machine code runs on later minors of its major only; a newer major takes the PTX; older: NVRTC."""
    assert gm.packaged_arch(cc) == want


def test_prebuilt_prefers_cubin_dir_then_the_package(tmp_path):
    assert gm.prebuilt("bn254", "90") == gm.PACKAGED / gm.cubin_name("bn254", "90")
    assert gm.prebuilt("bls12_381", "120") == gm.PACKAGED / gm.ptx_name("bls12_381", "90")
    assert gm.prebuilt("bn254", "75") is None  # NVRTC
    own = tmp_path / gm.cubin_name("bn254", "90")
    own.write_bytes(b"")
    assert gm.prebuilt("bn254", "90", str(tmp_path)) == own
    assert gm.prebuilt("bn254", "90", "", ("SNARKD_X=1",)) is None  # a variant is never the packaged build


def _entries() -> set[str]:
    text = (gm.PACKAGED / gm.ptx_name("bn254", gm.ARCHS[-1])).read_text()
    return set(re.findall(r"^\.visible \.entry (\w+)\(", text, re.M))


def test_every_kernel_the_host_code_launches_is_built():
    names = set()
    for path in (REPO / "src" / "snarkd" / "gpu").glob("*.py"):
        src = path.read_text()
        names |= set(re.findall(r'(?:launch\([^,]+,|_launch\(|get_function\(|function\(mod, )\s*"(\w+)"', src))
        for tail in re.findall(r'f"\{grp\}_(\w+)"', src):
            names |= {f"g1_{tail}", f"g2_{tail}"}
        names |= {f"g1_{t}" for t in re.findall(r'\("g2" if g2 else "g1"\) \+ "_(\w+)"', src)}
    names |= {"ntt_pass_r1", "ntt_pass_r2"}  # f"ntt_pass_r{self.radix_log}"
    assert len(names) > 15, names
    assert names - _entries() == set()


def test_the_builds_are_package_data():
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["snarkd"]
    assert "gpu/kernels/*.cubin" in data and "gpu/kernels/*.ptx" in data


def _included(path: Path, seen: set[Path]) -> set[Path]:
    """path and every file it includes by a quoted #include, found as nvcc and NVRTC find them: beside the
    including file, else in gpu/ (module.load's -I)."""
    path = path.resolve()
    if path in seen:
        return seen
    seen.add(path)
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M):
        here = path.parent / name
        _included(here if here.is_file() else gm.HERE / name, seen)
    return seen


def test_the_source_hash_covers_every_file_the_kernels_include():
    """SOURCES (what source_hash() reads, so what names the builds and keys NVRTC's cache) is exactly the
    files kernels.cu reads, the CPU core's shared headers (native/ec/xyzz.hpp, ...) among them."""
    files = _included(gm.HERE / "kernels.cu", set())
    assert files == {(gm.HERE / s).resolve() for s in gm.SOURCES}
    assert (gm.HERE.parent / "native" / "ec" / "xyzz.hpp").resolve() in files


def test_every_kernel_source_is_package_data():
    """An installed package can compile the kernels with NVRTC: every file they include is package data."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["snarkd"]
    root = REPO / "src" / "snarkd"
    shipped = {Path(p).resolve() for pat in data for p in glob.glob(str(root / pat), recursive=True)}
    missing = {(gm.HERE / s).resolve() for s in gm.SOURCES} - shipped
    assert not missing, missing


def test_nvrtc_options_carry_the_source_hash():
    """CuPy's kernel cache keys on the code and the options, not on included files: the hash of the sources
    is in the options, so an edited header is a cache miss."""
    opts = gm.nvrtc_options("bls12_381", ("SNARKD_X=1",))
    assert opts == ("-std=c++17", f"-I{gm.HERE}", "-DSNARKD_BLS12_381", "-DSNARKD_X=1",
                    f"-DSNARKD_SOURCES={gm.source_hash()}")
