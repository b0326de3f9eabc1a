"""snarkjs Groth16 .zkey files (version 1, protocol 1).

Sections (looked up by id): 1 protocol, 2 header, 3 IC, 4 coefs, 5 A, 6 B1,
7 B2, 8 C, 9 H, 10 contributions. Points are affine, x then y, each coordinate
n8q bytes LE in Montgomery form (R = 2^(8·n8q)); G2 coordinates are x.c0, x.c1,
y.c0, y.c1; infinity is all zero bytes. All point arrays are zero-copy numpy
views into the memory-mapped file, as little-endian u64 limbs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from snarkd.curves.encoding import g1_affine_ints, g1_to_json, g2_affine_ints, g2_to_json
from snarkd.curves.params import BLS12_381, BN254, Curve
from snarkd.errors import EXIT_INTERNAL, FormatError, SnarkdError

from .binfile import BinFile, first_not_below
from .zkey_layout import HEADER_POINTS, open_zkey, read_layout



_ARRAY_FIELDS = ("alpha1", "beta1", "beta2", "gamma2", "delta1", "delta2", "ic", "coefs", "a", "b1", "b2", "c", "h")


class PointCheckUnavailable(SnarkdError):
    """check_points=True asked for a full point check that needs the native core."""

    exit_code = EXIT_INTERNAL


def coef_dtype(n8r: int = 32) -> np.dtype:
    """One §4 entry: u32 matrix (0 = A, 1 = B), u32 constraint, u32 signal, value."""
    return np.dtype([("matrix", "<u4"), ("constraint", "<u4"), ("signal", "<u4"), ("value", "<u8", (n8r // 8,))])


@dataclass(eq=False)
class ZKey:
    path: str
    curve: Curve
    n8q: int
    q: int
    n8r: int
    r: int
    n_vars: int
    n_public: int
    domain_size: int
    alpha1: np.ndarray  # (2L,) Montgomery limbs
    beta1: np.ndarray
    beta2: np.ndarray  # (4L,)
    gamma2: np.ndarray
    delta1: np.ndarray
    delta2: np.ndarray
    ic: np.ndarray  # (n_public+1, 2L)
    coefs: memoryview  # whole §4, including its u32 count
    n_coefs: int
    a: np.ndarray  # (n_vars, 2L)
    b1: np.ndarray  # (n_vars, 2L)
    b2: np.ndarray  # (n_vars, 4L)
    c: np.ndarray  # (n_vars - n_public - 1, 2L)
    h: np.ndarray  # (domain_size, 2L)
    nbytes: int
    _bf: BinFile | None = field(default=None, repr=False)

    @property
    def limbs(self) -> int:
        """u64 limbs per base-field coordinate (L = n8q / 8)."""
        return self.n8q // 8

    @property
    def domain_power(self) -> int:
        return self.domain_size.bit_length() - 1

    @property
    def coef_entries(self) -> np.ndarray:
        """§4 entries as a structured array view (fields matrix, constraint, signal, value)."""
        return np.frombuffer(self.coefs, dtype=coef_dtype(self.n8r), count=self.n_coefs, offset=4)

    def close(self) -> None:
        """Drop this key's views and unmap the file. Arrays taken out of the key
        earlier stay valid: the mapping then lives on until the last one is gone."""
        if self._bf is not None:
            for name in _ARRAY_FIELDS:
                setattr(self, name, None)
            self._bf.close()
            self._bf = None

    @property
    def closed(self) -> bool:
        return self._bf is None

    def changed(self) -> str:
        """"" while the mapped file is as it was read; else what happened to it (BinFile.changed)."""
        bf = self._bf  # read once: the key may be closed (evicted) meanwhile
        return bf.changed() if bf is not None else ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- field / curve helpers (plain Python ints; only for the few header points) --


def _f2mul(a, b, q):
    return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)


def _g2_twist_b(curve: Curve) -> tuple[int, int]:
    q = curve.q
    if curve is BN254 or curve.name == BN254.name:
        # b' = 3 / (9 + u); (9 + u)^-1 = (9 - u) / 82
        inv82 = pow(82, -1, q)
        return (3 * 9 * inv82 % q, (-3 * inv82) % q)
    if curve is BLS12_381 or curve.name == BLS12_381.name:
        return (4, 4)  # b' = 4 (1 + u)
    raise ValueError(curve.name)


def _g1_b(curve: Curve) -> int:
    return 3 if curve.name == BN254.name else 4


def g1_on_curve(xy, curve: Curve) -> bool:
    if xy is None:
        return True
    x, y = xy
    q = curve.q
    return (y * y - x * x * x - _g1_b(curve)) % q == 0


def g2_on_curve(xy, curve: Curve) -> bool:
    if xy is None:
        return True
    x, y = xy
    q = curve.q
    b = _g2_twist_b(curve)
    y2 = _f2mul(y, y, q)
    x3 = _f2mul(_f2mul(x, x, q), x, q)
    return (y2[0] - x3[0] - b[0]) % q == 0 and (y2[1] - x3[1] - b[1]) % q == 0


# -- reading -------------------------------------------------------------------


def _check_canonical(bf: BinFile, z: ZKey) -> None:
    L = z.limbs
    q = z.q
    # Header points (§2).
    for name, g in HEADER_POINTS:
        pt = getattr(z, name)
        bad = first_not_below(pt.reshape(-1, L), q)
        if bad >= 0:
            coord = ("x", "y")[bad] if g == 1 else ("x.c0", "x.c1", "y.c0", "y.c1")[bad]
            raise FormatError(bf.path, f"point {name}: coordinate {coord} is not canonical (not below q)", section=bf.label(2))
    for sid, attr, g in ((3, "ic", 1), (5, "a", 1), (6, "b1", 1), (7, "b2", 2), (8, "c", 1), (9, "h", 1)):
        arr = getattr(z, attr)
        if arr.size == 0:
            continue
        bad = first_not_below(arr.reshape(-1, L), q)
        if bad >= 0:
            per = 2 * g
            coord = ("x", "y")[bad % per] if g == 1 else ("x.c0", "x.c1", "y.c0", "y.c1")[bad % per]
            raise FormatError(bf.path, f"point {bad // per}: coordinate {coord} is not canonical (not below q)", section=bf.label(sid))


def _check_points_python(bf: BinFile, z: ZKey) -> None:
    for name, g in HEADER_POINTS:
        pt = getattr(z, name)
        ok = g1_on_curve(g1_affine_ints(z.curve, pt), z.curve) if g == 1 else g2_on_curve(g2_affine_ints(z.curve, pt), z.curve)
        if not ok:
            raise FormatError(bf.path, f"point {name} is not on the {z.curve.name} {'G1' if g == 1 else 'G2'} curve", section=bf.label(2))
    for i in range(z.ic.shape[0]):
        if not g1_on_curve(g1_affine_ints(z.curve, z.ic[i]), z.curve):
            raise FormatError(bf.path, f"point {i} is not on the {z.curve.name} G1 curve", section=bf.label(3))


def _check_points_native(bf: BinFile, z: ZKey, mod) -> None:
    for sid, attr, g in ((3, "ic", 1), (5, "a", 1), (6, "b1", 1), (7, "b2", 2), (8, "c", 1), (9, "h", 1)):
        arr = getattr(z, attr)
        if arr.shape[0] == 0:
            continue
        fn = mod.g1_first_not_on_curve if g == 1 else mod.g2_first_not_on_curve
        bad = int(fn(arr))
        if bad >= 0:
            raise FormatError(bf.path, f"point {bad} is not on the {z.curve.name} {'G1' if g == 1 else 'G2'} curve", section=bf.label(sid))


def _check_points(bf: BinFile, z: ZKey) -> None:
    _check_points_python(bf, z)  # header + IC: cheap, and names the header field
    try:
        from snarkd.native import _core  # type: ignore
    except ImportError as e:
        raise PointCheckUnavailable(
            f"{bf.path}: full point check (check_points=True) needs the native core snarkd.native._core, which is not importable ({e}); "
            f"only the header and IC points were checked (they are on the curve)"
        ) from None
    _check_points_native(bf, z, getattr(_core, z.curve.native))


def read_zkey(path: str | os.PathLike, check_points: bool = False) -> ZKey:
    """Memory-map and validate a Groth16 zkey. Arrays are zero-copy views; call
    close() (or drop all references) to unmap."""
    bf = open_zkey(path)
    try:
        z = _read(bf)
        _check_canonical(bf, z)
        if check_points:
            _check_points(bf, z)
        return z
    except BaseException:
        bf.close()
        raise


def _read(bf: BinFile) -> ZKey:
    lay = read_layout(bf)  # header and section sizes (formats/zkey_layout.py)
    p = bf.path
    L = lay.limbs
    hp = {name: np.frombuffer(bf.mmap, dtype="<u8", count=nbytes // 8, offset=off) for name, (off, nbytes) in lay.header_points.items()}

    def points(name: str, width: int) -> np.ndarray:
        off, nbytes = lay.sections[name]
        return np.frombuffer(bf.mmap, dtype="<u8", count=nbytes // 8, offset=off).reshape(-1, width)

    ic = points("ic", 2 * L)
    a = points("a", 2 * L)
    b1 = points("b1", 2 * L)
    b2 = points("b2", 4 * L)
    c = points("c", 2 * L)
    h = points("h", 2 * L)

    # §4 coefs entries
    s4 = bf.section(4, "coefs")
    l4 = bf.label(4)
    n_coefs, domain_size, n_vars = lay.n_coefs, lay.domain_size, lay.n_vars
    ent = np.frombuffer(bf.mmap, dtype=coef_dtype(lay.n8r), count=n_coefs, offset=bf.offset(4) + 4)
    if n_coefs:
        bad = np.flatnonzero(ent["matrix"] > 1)
        if bad.size:
            i = int(bad[0])
            raise FormatError(p, f"entry {i}: matrix {int(ent['matrix'][i])} is not 0 (A) or 1 (B)", section=l4)
        bad = np.flatnonzero(ent["constraint"] >= domain_size)
        if bad.size:
            i = int(bad[0])
            raise FormatError(p, f"entry {i}: constraint {int(ent['constraint'][i])} is outside the domain (domainSize = {domain_size})", section=l4)
        bad = np.flatnonzero(ent["signal"] >= n_vars)
        if bad.size:
            i = int(bad[0])
            raise FormatError(p, f"entry {i}: signal {int(ent['signal'][i])} is out of range (nVars = {n_vars})", section=l4)
        i = first_not_below(ent["value"], lay.r)
        if i >= 0:
            raise FormatError(p, f"entry {i}: value is not canonical (not below r)", section=l4)

    return ZKey(
        path=p,
        curve=lay.curve,
        n8q=lay.n8q,
        q=lay.q,
        n8r=lay.n8r,
        r=lay.r,
        n_vars=n_vars,
        n_public=lay.n_public,
        domain_size=domain_size,
        ic=ic,
        coefs=s4,
        n_coefs=n_coefs,
        a=a,
        b1=b1,
        b2=b2,
        c=c,
        h=h,
        nbytes=bf.nbytes,
        _bf=bf,
        **hp,
    )


# -- verification_key.json -----------------------------------------------------


# ffjavascript's final exponentiation yields a fixed power of the reduced
# pairing that snarkd's native core computes: e^(2x(6x²+3x+1)) on BN254 (x the
# BN parameter), e itself on BLS12-381 (pinned against `snarkjs zkey export
# verificationkey` by the export-vk tests).
_BN254_X = 4965661367192848881
_ALPHABETA_POWER = {"bn254": 2 * _BN254_X * (6 * _BN254_X**2 + 3 * _BN254_X + 1)}


def _alphabeta(z: ZKey) -> list:
    """e(α1, β2) as snarkjs computes it, in ffjavascript's tower layout (the
    native core's too): Fq12 = Fq6[w]/(w² − v), Fq6 = Fq2[v]/(v³ − ξ),
    Fq2 = Fq[u]/(u² + 1); as [c0, c1] × [v⁰, v¹, v²] × [re, im] decimal strings."""
    from snarkd.native import _pairing

    q, n8 = z.q, z.n8q
    alpha1, beta2 = bytes(z.alpha1), bytes(z.beta2)
    if not any(alpha1) or not any(beta2):
        vals = [1] + [0] * 11
    else:
        m = getattr(_pairing, z.curve.native)
        f = m.pairing(alpha1, beta2)
        k = _ALPHABETA_POWER.get(z.curve.native)
        if k is not None:
            f = m.fp12_pow(f, (k % z.r).to_bytes(32, "little"))
        r_inv = pow(1 << (8 * n8), -1, q)
        vals = [int.from_bytes(f[i * n8 : (i + 1) * n8], "little") * r_inv % q for i in range(12)]
    return [[[str(vals[6 * j + 2 * k]), str(vals[6 * j + 2 * k + 1])] for k in range(3)] for j in range(2)]


def vk_json(z: ZKey, alphabeta: bool = True) -> dict:
    """snarkjs's verification_key.json for this key (`snarkjs zkey export verificationkey`).
    alphabeta=False leaves out vk_alphabeta_12 (a pairing; verification does not read it)."""
    c = z.curve
    vk = {
        "protocol": "groth16",
        "curve": c.name,
        "nPublic": z.n_public,
        "vk_alpha_1": g1_to_json(c, z.alpha1),
        "vk_beta_2": g2_to_json(c, z.beta2),
        "vk_gamma_2": g2_to_json(c, z.gamma2),
        "vk_delta_2": g2_to_json(c, z.delta2),
        "vk_alphabeta_12": _alphabeta(z) if alphabeta else None,
        "IC": [g1_to_json(c, z.ic[i]) for i in range(z.ic.shape[0])],
    }
    if not alphabeta:
        del vk["vk_alphabeta_12"]
    return vk
