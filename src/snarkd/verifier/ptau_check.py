"""Checks of snarkjs powers-of-tau files before they become an aggregation SRS.

check_powers: the first n_g1 [tau^i]_1 and n_g2 [tau^i]_2 are points of the curve in the
order-r subgroup, not infinity (native, in parallel), start at the generators, and are
successive powers of one tau. The last is two randomized pairing checks with secret 128-bit
coefficients rho (from the OS CSPRNG):
    e(sum_i rho_i P_i, [tau]_2) = e(sum_i rho_i P_{i+1}, G2)       (G1: P_{i+1} = tau' P_i for all i)
    e([tau]_1, sum_j rho_j Q_j) = e(G1, sum_j rho_j Q_{j+1})       (G2: Q_{j+1} = tau'' Q_j)
each an MSM per side; a file that is not of one tau passes either only if the coefficients hit
one nonzero linear equation mod r (probability 2^-128). The two chains share tau because
[tau]_2 = Q_1 = tau'' G2 and [tau]_1 = P_1 = tau' G1 appear in the other's check.

check_chain: the same on arrays of points (check_powers reads them from a .ptau; aggregate/srs.py checks an
aggregation SRS's a- and b-powers with it when it reads the file).

check_independent: the two files are of one curve and of different secrets ([tau]_1 differ),
and neither is a fresh `powersoftau new` (tau = 1: every power is the generator).
Both raise InputError naming the file(s).
"""

from __future__ import annotations

import secrets

import numpy as np

from snarkd.errors import InputError
from snarkd.formats.ptau import Ptau
from snarkd.native import _check, _core, _pairing

_REASONS = {1: "off the curve (or a coordinate >= q)", 2: "outside the order-r subgroup", 3: "the point at infinity"}
COEFF_BYTES = 16  # 128-bit: a 2^-128 chance that a bad file passes


def _first_bad(scan, points: np.ndarray, threads: int) -> tuple[int, int]:
    """(index, reason) of the first point (rows of `points`) that is no usable power: off its curve or outside
    the subgroup (`snarkd check`'s native scan, reasons 1 and 2) or the point at infinity (3); (-1, 0) if none."""
    i, status = scan(points, threads)
    zeros = np.flatnonzero(~points.reshape(len(points), -1).any(axis=1))
    if len(zeros) and (i < 0 or zeros[0] < i):
        return int(zeros[0]), 3
    return int(i), int(status)


def _generators(curve) -> tuple[bytes, bytes]:
    """G1 and G2 generators in the zkey layout (snarkjs's ptau starts with them)."""
    def mont(v: int) -> bytes:
        return (v * curve.rq % curve.q).to_bytes(curve.n8q, "little")

    (x, y), ((x0, x1), (y0, y1)) = curve.g1, curve.g2
    return mont(x) + mont(y), b"".join(mont(v) for v in (x0, x1, y0, y1))


def _neg_g1(curve, point: bytes) -> bytes:
    """-P in the zkey layout (y -> q - y in Montgomery form; infinity stays)."""
    n = curve.n8q
    y = int.from_bytes(point[n:], "little")
    return point[:n] + ((curve.q - y) % curve.q).to_bytes(n, "little")


def _random_scalars(count: int) -> np.ndarray:
    """count 32-byte plain scalars, 128 random bits each (nonzero)."""
    s = np.zeros((count, 32), dtype=np.uint8)
    s[:, :COEFF_BYTES] = np.frombuffer(secrets.token_bytes(COEFF_BYTES * count), dtype=np.uint8).reshape(count, COEFF_BYTES)
    s[:, 0] |= (~s[:, :COEFF_BYTES].any(axis=1)).astype(np.uint8)  # an all-zero one becomes 1
    return s


def check_powers(ptau: Ptau, n_g1: int, n_g2: int, threads: int = 0) -> None:
    """InputError naming the file unless its first n_g1 G1 and n_g2 G2 powers are valid powers of one tau."""
    # [tau]_1 and [tau]_2 themselves: needed by the checks even when fewer powers are asked for
    check_chain(ptau.curve, str(ptau.path), np.ascontiguousarray(ptau.tau_g1(n_g1)),
                np.ascontiguousarray(ptau.tau_g2(n_g2)), lambda: (ptau.tau_g1(2)[1:2], ptau.tau_g2(2)[1:2]),
                ("tauG1", "tauG2"), threads)


def check_chain(curve, name: str, g1: np.ndarray, g2: np.ndarray, taus=None, labels=("tauG1", "tauG2"),
                threads: int = 0) -> None:
    """InputError naming `name` unless the rows of g1 and g2 (zkey layout) are [tau^i]_1 and [tau^i]_2 of one
    tau: the checks of the module docstring. taus: a callable giving the ([tau]_1, [tau]_2) rows when g1 or g2
    holds fewer than two (default: g1[1:2], g2[1:2]). labels: how messages name the two arrays. Also the
    aggregation SRS's a- and b-powers (aggregate/srs.py)."""
    pair = getattr(_pairing, curve.native)
    core = getattr(_core, curve.native)
    n_g1, n_g2 = len(g1), len(g2)
    scans = getattr(_check, curve.native)
    for what, pts, scan in ((labels[0], g1, scans.g1_first_invalid), (labels[1], g2, scans.g2_first_invalid)):
        index, reason = _first_bad(scan, pts, threads)
        if index >= 0:
            raise InputError(f"{name}: {what}[{index}] is {_REASONS[reason]}")
    gen1, gen2 = _generators(curve)
    if n_g1 and g1[0].tobytes() != gen1:
        raise InputError(f"{name}: {labels[0]}[0] is not the generator of G1")
    if n_g2 and g2[0].tobytes() != gen2:
        raise InputError(f"{name}: {labels[1]}[0] is not the generator of G2")
    if n_g1 < 2 and n_g2 < 2:
        return
    tau1_row, tau2_row = taus() if taus is not None else (g1[1:2], g2[1:2])
    tau1, tau2 = tau1_row.tobytes(), tau2_row.tobytes()
    if _first_bad(scans.g1_first_invalid, tau1_row, threads)[0] >= 0 or \
            _first_bad(scans.g2_first_invalid, tau2_row, threads)[0] >= 0:
        raise InputError(f"{name}: [tau]_1 or [tau]_2 is not a point of the subgroup")
    if n_g1 >= 2:
        rho = _random_scalars(n_g1 - 1)
        left = core.msm_g1(g1[:-1], rho, threads).tobytes()
        right = core.msm_g1(g1[1:], rho, threads).tobytes()
        if pair.multi_pairing([left, _neg_g1(curve, right)], [tau2, gen2]) != pair.fp12_one():
            raise InputError(f"{name}: {labels[0]}[0..{n_g1}) are not successive powers of the tau of {labels[1]}[1]")
    if n_g2 >= 2:
        rho = _random_scalars(n_g2 - 1)
        left = core.msm_g2(g2[:-1], rho, threads).tobytes()
        right = core.msm_g2(g2[1:], rho, threads).tobytes()
        if pair.multi_pairing([tau1, _neg_g1(curve, gen1)], [left, right]) != pair.fp12_one():
            raise InputError(f"{name}: {labels[1]}[0..{n_g2}) are not successive powers of the tau of {labels[0]}[1]")


def check_independent(a: Ptau, b: Ptau) -> None:
    """InputError unless a and b are of one curve and of different secrets, neither tau = 1."""
    if a.curve is not b.curve:
        raise InputError(f"{a.path} is a {a.curve.name} file but {b.path} is {b.curve.name}: both must be of one curve")
    gen1, _ = _generators(a.curve)
    tau_a, tau_b = a.tau_g1(2)[1].tobytes(), b.tau_g1(2)[1].tobytes()
    for p, t in ((a, tau_a), (b, tau_b)):
        if t == gen1:
            raise InputError(f"{p.path}: [tau]_1 is the generator (tau = 1: a `powersoftau new` file without "
                             "contributions)")
    if tau_a == tau_b:
        raise InputError(f"{a.path} and {b.path} have the same secret ([tau]_1 is equal): the SRS needs two "
                         "independent ceremonies")
