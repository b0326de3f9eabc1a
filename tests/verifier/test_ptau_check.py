"""snarkd.verifier.ptau_check on real snarkjs .ptau files: what `snarkjs powersoftau verify`
accepts passes; corrupted points, powers not of one tau, files of one secret or of two curves
are InputError naming the file."""

from __future__ import annotations

import shutil

import pytest

import oracle
from snarkd.errors import InputError
from snarkd.formats.ptau import read_ptau
from snarkd.verifier.ptau_check import check_independent, check_powers

POWER = 6


@pytest.fixture(scope="module")
def files(curve):
    return {"a": oracle.ptau(curve, POWER), "b": oracle.contributed_ptau(curve, "second ceremony"), "new": oracle.contributed_ptau(curve, None)}


def _point_offset(path, sid: int, index: int, size: int) -> int:
    with read_ptau(path) as p:
        return p.file.offset(sid) + index * size


def _mutate(tmp_path, src, name, fn):
    data = bytearray(src.read_bytes())
    fn(data)
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out


def test_valid_files_pass(files):
    for key in ("a", "b", "new"):
        with read_ptau(files[key]) as p:
            check_powers(p, p.n_g1, p.n_g2)
            check_powers(p, 5, 3)
            check_powers(p, 1, 1)
    with read_ptau(files["a"]) as a, read_ptau(files["b"]) as b:
        check_independent(a, b)
        check_independent(b, a)


def test_bad_points_named(curve, files, tmp_path):
    src = files["a"]
    with read_ptau(src) as p:
        g1b, g2b = p.g1_bytes, p.g2_bytes
    # a flipped byte in the x coordinate of tauG1[3]: off the curve
    off = _point_offset(src, 2, 3, g1b)
    bad = _mutate(tmp_path, src, "g1_corrupt.ptau", lambda d: d.__setitem__(off + 1, d[off + 1] ^ 0x40))
    with read_ptau(bad) as p, pytest.raises(InputError, match=r"g1_corrupt\.ptau: tauG1\[3\] is off the curve"):
        check_powers(p, 10, 2)
    with read_ptau(bad) as p:
        check_powers(p, 3, 2)  # the first three powers are fine
    off = _point_offset(src, 3, 1, g2b)
    bad = _mutate(tmp_path, src, "g2_corrupt.ptau", lambda d: d.__setitem__(off + 2, d[off + 2] ^ 0x01))
    with read_ptau(bad) as p, pytest.raises(InputError, match=r"g2_corrupt\.ptau: tauG2\[1\]"):
        check_powers(p, 4, 4)


def _swap(data, a: int, b: int, size: int):
    pa, pb = bytes(data[a : a + size]), bytes(data[b : b + size])
    data[a : a + size], data[b : b + size] = pb, pa


def test_powers_not_of_one_tau(files, tmp_path):
    src = files["a"]
    with read_ptau(src) as p:
        g1b, g2b, off1, off2 = p.g1_bytes, p.g2_bytes, p.file.offset(2), p.file.offset(3)
    # two G1 powers swapped: every point valid, the chain broken
    bad = _mutate(tmp_path, src, "swap_g1.ptau", lambda d: _swap(d, off1 + 5 * g1b, off1 + 6 * g1b, g1b))
    with read_ptau(bad) as p:
        with pytest.raises(InputError, match=r"swap_g1\.ptau: tauG1\[0\.\.20\) are not successive powers"):
            check_powers(p, 20, 4)
        check_powers(p, 5, 4)  # the swap is beyond the first five
    bad = _mutate(tmp_path, src, "swap_g2.ptau", lambda d: _swap(d, off2 + 2 * g2b, off2 + 3 * g2b, g2b))
    with read_ptau(bad) as p, pytest.raises(InputError, match=r"swap_g2\.ptau: tauG2\[0\.\.8\) are not successive"):
        check_powers(p, 8, 8)
    # tauG1[1] of another ceremony: G1 and G2 chains of different taus
    with read_ptau(files["b"]) as other:
        foreign = other.tau_g1(2)[1].tobytes()
    bad = _mutate(tmp_path, src, "mixed.ptau", lambda d: d.__setitem__(slice(off1 + g1b, off1 + 2 * g1b), foreign))
    with read_ptau(bad) as p, pytest.raises(InputError, match=r"mixed\.ptau"):
        check_powers(p, 4, 4)
    # tauG1[0] not the generator
    bad = _mutate(tmp_path, src, "gen.ptau", lambda d: _swap(d, off1, off1 + g1b, g1b))
    with read_ptau(bad) as p, pytest.raises(InputError, match=r"gen\.ptau: tauG1\[0\] is not the generator"):
        check_powers(p, 4, 4)


def test_independence(curve, files, tmp_path):
    copy = tmp_path / "copy.ptau"
    shutil.copy(files["a"], copy)
    with read_ptau(files["a"]) as a, read_ptau(copy) as c:
        with pytest.raises(InputError, match=r"same secret"):
            check_independent(a, c)
    with read_ptau(files["a"]) as a, read_ptau(files["new"]) as n:
        with pytest.raises(InputError, match=r"p\.ptau: \[tau\]_1 is the generator"):
            check_independent(a, n)
    other = "bls12381" if curve == "bn128" else "bn128"
    with read_ptau(files["a"]) as a, read_ptau(oracle.ptau(other, POWER)) as o:
        with pytest.raises(InputError, match=r"both must be of one curve"):
            check_independent(a, o)


@pytest.mark.slow
def test_snarkjs_agrees(files, tmp_path):
    """snarkjs powersoftau verify accepts the files check_powers accepts, and refuses a broken chain."""
    src = files["b"]
    assert oracle.snarkjs("powersoftau", "verify", src, check=False).returncode == 0
    with read_ptau(src) as p:
        g1b, off1 = p.g1_bytes, p.file.offset(2)
    bad = _mutate(tmp_path, src, "swap.ptau", lambda d: _swap(d, off1 + 5 * g1b, off1 + 6 * g1b, g1b))
    assert oracle.snarkjs("powersoftau", "verify", bad, check=False).returncode != 0
    with read_ptau(bad) as p, pytest.raises(InputError):
        check_powers(p, p.n_g1, p.n_g2)
