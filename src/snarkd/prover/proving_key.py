"""A proving key kept resident: the .zkey memory-mapped, sections as zero-copy arrays."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from snarkd.curves.params import Curve
from snarkd.formats.zkey import ZKey, read_zkey
from snarkd.native import _core


def native_for(curve: Curve):
    """The native core's submodule for this curve (bn254 or bls12_381)."""
    return getattr(_core, curve.native)


@dataclass
class ProvingKey:
    zkey: ZKey
    path: str = ""
    native: object = field(default=None, repr=False)

    @classmethod
    def load(cls, path: str | os.PathLike, check_points: bool = False) -> "ProvingKey":
        zkey = read_zkey(path, check_points=check_points)
        return cls(zkey=zkey, path=os.fspath(path), native=native_for(zkey.curve))

    @property
    def curve(self) -> Curve:
        return self.zkey.curve

    @property
    def n_vars(self) -> int:
        return self.zkey.n_vars

    @property
    def n_public(self) -> int:
        return self.zkey.n_public

    @property
    def domain_size(self) -> int:
        return self.zkey.domain_size

    @property
    def nbytes(self) -> int:
        return self.zkey.nbytes

    def close(self) -> None:
        self.zkey.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
