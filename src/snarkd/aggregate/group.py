"""The curve's native kernels for aggregation and the byte encodings of its elements.

Points are bytes in the zkey layout (affine, little-endian Montgomery, all zeros = infinity),
Fp12 values as snarkd.native._pairing writes them, GT values on the wire in the 6-Fp compressed
form of native/aggregate/gt.hpp, scalars as Python ints (32 bytes little-endian when native).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from snarkd.curves.params import Curve


SMALL_MSM = 16
# Miller loops of at least this many pairs (G2 points x G1 points per G2 point) run on the GPU when the
# Group has one: a launch takes ~10 ms on the H200 whatever its size (one thread runs one pair's whole
# loop), which the CPU beats below about a hundred pairs.
GPU_MIN_PAIRS = 128


def _prefix(points, nbytes: int) -> bytes:
    """The first nbytes of a buffer of points (bytes, or a 2-D numpy array of point rows)."""
    return bytes(memoryview(points).cast("B")[:nbytes])


@dataclass(frozen=True)
class Group:
    curve: Curve
    threads: int = 0
    gpu: object = None  # a snarkd.gpu.device.GpuDevice for the Miller loops, or None (CPU only)

    @cached_property
    def agg(self):
        from snarkd.native import _aggregate

        return getattr(_aggregate, self.curve.native)

    @cached_property
    def pair(self):
        from snarkd.native import _pairing

        return getattr(_pairing, self.curve.native)

    @cached_property
    def core(self):
        from snarkd.native import _core

        return getattr(_core, self.curve.native)

    @property
    def r(self) -> int:
        return self.curve.r

    @property
    def g1_bytes(self) -> int:
        return self.curve.g1_bytes

    @property
    def g2_bytes(self) -> int:
        return self.curve.g2_bytes

    @property
    def gt_bytes(self) -> int:
        return 6 * self.curve.n8q

    # ---- scalars
    @staticmethod
    def fr(x: int) -> bytes:
        return x.to_bytes(32, "little")

    def frs(self, xs) -> bytes:
        return b"".join(x.to_bytes(32, "little") for x in xs)

    # ---- points
    # A few points: windowed double-and-add (native lincomb); Pippenger's set-up costs more than it saves.
    def msm_g1(self, points, scalars: list[int]) -> bytes:
        if not scalars:
            return bytes(self.g1_bytes)
        if len(scalars) < SMALL_MSM:
            return self.agg.lincomb_g1(_prefix(points, len(scalars) * self.g1_bytes), self.frs(scalars))
        return self.core.msm_g1(points, self.frs(scalars), self.threads).tobytes()

    def msm_g2(self, points, scalars: list[int]) -> bytes:
        if not scalars:
            return bytes(self.g2_bytes)
        if len(scalars) < SMALL_MSM:
            return self.agg.lincomb_g2(_prefix(points, len(scalars) * self.g2_bytes), self.frs(scalars))
        return self.core.msm_g2(points, self.frs(scalars), self.threads).tobytes()

    def g1_mul(self, p: bytes, k: int) -> bytes:
        return self.msm_g1(p, [k % self.r])

    def g2_mul(self, q: bytes, k: int) -> bytes:
        return self.msm_g2(q, [k % self.r])

    def g1_add(self, p: bytes, q: bytes) -> bytes:
        return self.msm_g1(p + q, [1, 1])

    def g2_add(self, p: bytes, q: bytes) -> bytes:
        return self.msm_g2(p + q, [1, 1])

    def g1_neg(self, p: bytes) -> bytes:
        return self.msm_g1(p, [self.r - 1])

    def fold_g1(self, left, right, x: int) -> bytes:
        return self.agg.fold_g1(left, right, self.fr(x), self.threads)

    def fold_g2(self, left, right, x: int) -> bytes:
        return self.agg.fold_g2(left, right, self.fr(x), self.threads)

    def scale_g1(self, points, scalars: list[int]) -> bytes:
        return self.agg.scale_g1(points, self.frs(scalars), self.threads)

    def scale_g2(self, points, scalars: list[int]) -> bytes:
        return self.agg.scale_g2(points, self.frs(scalars), self.threads)

    # ---- pairings and GT
    def miller(self, q, ps: list) -> list[bytes]:
        """[prod_i f_{q_i}(p[i]) for p in ps], Miller values without the final exponentiation."""
        return self.miller_many([(q, ps)])[0]

    def miller_many(self, jobs: list) -> list[list[bytes]]:
        """miller(q, ps) for each job (q, ps); on the GPU (the same bytes) in one launch when the Group has
        one, every q has the same number of points and the jobs have GPU_MIN_PAIRS pairs or more."""
        sizes = {memoryview(q).nbytes // self.g2_bytes for q, _ in jobs}
        pairs = sum(memoryview(q).nbytes // self.g2_bytes * len(ps) for q, ps in jobs)
        if self.gpu is not None and len(sizes) == 1 and pairs >= GPU_MIN_PAIRS:
            return self.gpu.miller_products(self.curve, jobs)
        return [self.agg.miller_products(q, ps, self.threads) for q, ps in jobs]

    def final(self, fs: list[bytes]) -> bytes:
        return self.agg.final_product(fs)

    def gt_one(self) -> bytes:
        return self.pair.fp12_one()

    def gt_compress(self, f: bytes) -> bytes:
        return self.agg.gt_compress(f)

    def gt_decompress(self, g: bytes) -> bytes | None:
        return self.agg.gt_decompress(g)

    def gt_multi_exp(self, bases: list[bytes], exps: list[int]) -> bytes:
        return self.agg.gt_multi_exp(bases, self.frs(e % self.r for e in exps), self.threads)

    # ---- canonical encodings and subgroups
    def _coords(self, data: bytes) -> list[int]:
        n = self.curve.n8q
        return [int.from_bytes(data[i : i + n], "little") for i in range(0, len(data), n)]

    def g1_valid(self, p: bytes) -> bool:
        """A canonical encoding of a point of the order-r subgroup (infinity included)."""
        if len(p) != self.g1_bytes or any(c >= self.curve.q for c in self._coords(p)):
            return False
        return bool(self.pair.g1_in_subgroup(p))

    def g2_valid(self, q: bytes) -> bool:
        if len(q) != self.g2_bytes or any(c >= self.curve.q for c in self._coords(q)):
            return False
        return bool(self.pair.g2_in_subgroup(q))

    def generator_g1(self) -> bytes:
        from snarkd.curves.encoding import g1_from_ints

        return g1_from_ints(self.curve, *self.curve.g1).tobytes()

    def generator_g2(self) -> bytes:
        from snarkd.curves.encoding import g2_from_ints

        return g2_from_ints(self.curve, *self.curve.g2).tobytes()
