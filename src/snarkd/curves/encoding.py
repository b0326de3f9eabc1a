"""Conversions between the native limb layout and snarkjs's JSON.

Only a handful of points per proof pass through here, so plain Python ints
are fine; bulk data never leaves numpy/native memory. numpy is imported where
it is used: the one-shot prover formats its proof from bytes, without it.
"""

from __future__ import annotations

from snarkd.curves.params import Curve

TYPE_CHECKING = False  # typing's import (with re and enum, ~3 ms) stays out of a one-shot proof

if TYPE_CHECKING:
    import numpy as np


def limbs_to_int(limbs: np.ndarray) -> int:
    import numpy as np

    return int.from_bytes(np.ascontiguousarray(limbs, dtype="<u8").tobytes(), "little")


def int_to_limbs(value: int, n_limbs: int) -> np.ndarray:
    import numpy as np

    return np.frombuffer(value.to_bytes(8 * n_limbs, "little"), dtype="<u8").copy()


_MONT_INVERSE: dict[int, int] = {}  # q -> the inverse of its Montgomery radix mod q


def fq_from_mont_factor(curve: Curve) -> int:
    """What a Montgomery value is multiplied by (mod q) to be plain: the radix's inverse, made once per curve (made
    per call it was most of fq_from_mont's time, which the GPU workers spent holding the GIL)."""
    inverse = _MONT_INVERSE.get(curve.q)
    if inverse is None:
        inverse = _MONT_INVERSE[curve.q] = pow(curve.rq, -1, curve.q)
    return inverse


def fq_from_mont(curve: Curve, limbs: np.ndarray) -> int:
    return limbs_to_int(limbs) * fq_from_mont_factor(curve) % curve.q


def fq_to_mont(curve: Curve, value: int) -> np.ndarray:
    return int_to_limbs(value * curve.rq % curve.q, curve.fq_limbs)


def g1_affine_ints(curve: Curve, point: np.ndarray) -> tuple[int, int] | None:
    """(x, y) plain ints of a Montgomery affine G1 point; None for infinity (all zeros)."""
    import numpy as np

    point = np.asarray(point, dtype="<u8").reshape(-1)
    if not point.any():
        return None
    n = curve.fq_limbs
    return fq_from_mont(curve, point[:n]), fq_from_mont(curve, point[n : 2 * n])


def g2_affine_ints(curve: Curve, point: np.ndarray) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((x.c0, x.c1), (y.c0, y.c1)) plain ints; None for infinity."""
    import numpy as np

    point = np.asarray(point, dtype="<u8").reshape(-1)
    if not point.any():
        return None
    n = curve.fq_limbs
    c = [fq_from_mont(curve, point[i * n : (i + 1) * n]) for i in range(4)]
    return (c[0], c[1]), (c[2], c[3])


def g1_to_json(curve: Curve, point: np.ndarray) -> list[str]:
    return _g1_json(g1_affine_ints(curve, point))


def g2_to_json(curve: Curve, point: np.ndarray) -> list[list[str]]:
    return _g2_json(g2_affine_ints(curve, point))


def _coords_from_bytes(curve: Curve, data: bytes, count: int) -> list[int] | None:
    n = curve.n8q
    if len(data) != count * n:
        raise ValueError(f"expected {count * n} bytes, got {len(data)}")
    if not any(data):
        return None
    rinv = pow(curve.rq, -1, curve.q)
    return [int.from_bytes(data[i * n : (i + 1) * n], "little") * rinv % curve.q for i in range(count)]


def g1_bytes_to_json(curve: Curve, data: bytes) -> list[str]:
    """g1_to_json for a point given as raw bytes (affine, Montgomery, zeros = infinity)."""
    c = _coords_from_bytes(curve, data, 2)
    return _g1_json(None if c is None else (c[0], c[1]))


def g2_bytes_to_json(curve: Curve, data: bytes) -> list[list[str]]:
    c = _coords_from_bytes(curve, data, 4)
    return _g2_json(None if c is None else ((c[0], c[1]), (c[2], c[3])))


def _g1_json(xy) -> list[str]:
    if xy is None:
        return ["0", "1", "0"]
    return [str(xy[0]), str(xy[1]), "1"]


def _g2_json(xy) -> list[list[str]]:
    if xy is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = xy
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def g1_from_ints(curve: Curve, x: int, y: int) -> np.ndarray:
    import numpy as np

    return np.concatenate([fq_to_mont(curve, x), fq_to_mont(curve, y)])


def g2_from_ints(curve: Curve, x: tuple[int, int], y: tuple[int, int]) -> np.ndarray:
    import numpy as np

    return np.concatenate([fq_to_mont(curve, v) for v in (x[0], x[1], y[0], y[1])])


def fr_array_from_ints(values: list[int]) -> np.ndarray:
    """(n, 4) uint64 plain scalars from Python ints (small n only)."""
    import numpy as np

    out = np.zeros((len(values), 4), dtype="<u8")
    for i, v in enumerate(values):
        out[i] = np.frombuffer(v.to_bytes(32, "little"), dtype="<u8")
    return out
