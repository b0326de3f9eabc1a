"""Is a proving key's data sound? Every point on its curve and in the order-r subgroup.

A .zkey that parses can still be damaged (bit rot, a bad copy): a flipped bit in
a point section leaves a point that is off the curve, and a prover that uses it
writes a proof nobody can verify. `check_key_points` scans every section of
points with the native core (`snarkd.native._check`: threads, no per-point
Python) and reports the first bad point of each section.

Points are in the zkey layout (affine Montgomery, all zeros = infinity). The
point at infinity is allowed in the big sections (snarkjs writes it for signals
a matrix does not use) but not for the header's alpha, beta, gamma, delta: a
key with one of those at infinity is degenerate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snarkd.formats.zkey import HEADER_POINTS, ZKey

# (section id, section name, ZKey attribute, group)
POINT_SECTIONS = ((3, "IC", "ic", 1), (5, "A", "a", 1), (6, "B1", "b1", 1), (7, "B2", "b2", 2), (8, "C", "c", 1), (9, "H", "h", 1))

NOT_ON_CURVE = 1
NOT_IN_SUBGROUP = 2


@dataclass(frozen=True)
class SectionResult:
    """The outcome for one section (or the header's points)."""

    section: str  # "2 (header)", "5 (A)", ...
    group: str  # "G1", "G2" or "G1/G2"
    count: int  # points checked
    problem: str | None = None  # None: every point is sound

    @property
    def ok(self) -> bool:
        return self.problem is None


def _natives(zkey: ZKey, subgroup: bool):
    if subgroup:
        from snarkd.native import _check

        return getattr(_check, zkey.curve.native)
    from snarkd.native import _core

    return getattr(_core, zkey.curve.native)


def _first_bad(mod, arr: np.ndarray, g: int, subgroup: bool, threads: int) -> tuple[int, int]:
    """(index, NOT_ON_CURVE | NOT_IN_SUBGROUP) of the first bad point, or (-1, 0)."""
    if arr.shape[0] == 0:
        return -1, 0
    if subgroup:
        fn = mod.g1_first_invalid if g == 1 else mod.g2_first_invalid
        i, status = fn(arr, threads)
        return int(i), int(status)
    fn = mod.g1_first_not_on_curve if g == 1 else mod.g2_first_not_on_curve
    i = int(fn(arr))
    return i, (NOT_ON_CURVE if i >= 0 else 0)


def _describe(status: int, curve: str, g: int) -> str:
    group = "G1" if g == 1 else "G2"
    if status == NOT_ON_CURVE:
        return f"is not on the {curve} {group} curve (or has a coordinate >= q)"
    return f"is on the {curve} {group} curve but not in its order-r subgroup"


def check_header_points(zkey: ZKey, subgroup: bool = True, threads: int = 0) -> SectionResult:
    mod = _natives(zkey, subgroup)
    label = "2 (header)"
    for name, g in HEADER_POINTS:
        pt = getattr(zkey, name)
        if not np.any(pt):
            return SectionResult(label, "G1/G2", len(HEADER_POINTS), f"point {name} is the point at infinity (a degenerate key)")
        i, status = _first_bad(mod, pt.reshape(1, -1), g, subgroup, threads)
        if i >= 0:
            return SectionResult(label, "G1/G2", len(HEADER_POINTS), f"point {name} {_describe(status, zkey.curve.name, g)}")
    return SectionResult(label, "G1/G2", len(HEADER_POINTS))


def check_key_points(zkey: ZKey, subgroup: bool = True, threads: int = 0) -> list[SectionResult]:
    """One SectionResult for the header points and one per point section, in
    file-format order. subgroup=False checks only that points are on their
    curves (cheap: no scalar multiplication), as the prover's diagnosis does."""
    mod = _natives(zkey, subgroup)
    results = [check_header_points(zkey, subgroup, threads)]
    for sid, name, attr, g in POINT_SECTIONS:
        arr = getattr(zkey, attr)
        i, status = _first_bad(mod, arr, g, subgroup, threads)
        problem = f"point {i} {_describe(status, zkey.curve.name, g)}" if i >= 0 else None
        results.append(SectionResult(f"{sid} ({name})", "G1" if g == 1 else "G2", int(arr.shape[0]), problem))
    return results
