"""A proving key kept resident: the .zkey memory-mapped, sections as zero-copy arrays,
and its prepared sidecar (snarkd.prover.prepared) when there is a valid one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from snarkd.curves.params import Curve
from snarkd.formats.prepared import PreparedFile
from snarkd.formats.zkey import ZKey, read_zkey
from snarkd.native import _core
from snarkd.prover import prepared as _prepared


def native_for(curve: Curve):
    """The native core's submodule for this curve (bn254 or bls12_381)."""
    return getattr(_core, curve.native)


@dataclass
class ProvingKey:
    """The staged prover's key (a SectionKey, snarkd.prover.types): read_zkey checked every section at load,
    and it stays resident for as many proofs as come (the engine's)."""

    zkey: ZKey
    path: str = ""
    native: object = field(default=None, repr=False)
    prepared: PreparedFile | None = field(default=None, repr=False)
    read_once = False  # kept for many proofs: nothing given back after one

    @classmethod
    def load(cls, path: str | os.PathLike, check_points: bool = False, prepared: str = "use") -> "ProvingKey":
        """prepared: "use" the sidecar KEY.zkey.prep when there is a valid one (a stale or
        corrupt one is rebuilt, with a warning), "build" it as well when it is missing
        (a daemon loading a key for many proofs), or "off"."""
        zkey = read_zkey(path, check_points=check_points)
        try:
            prep = _prepared.load(path, zkey._bf, zkey.curve.name, zkey.n_vars, zkey.domain_size, prepared)
        except BaseException:
            zkey.close()
            raise
        return cls(zkey=zkey, path=os.fspath(path), native=native_for(zkey.curve), prepared=prep)

    def section(self, name: str):
        """A section (coefs, a, b1, b2, c, h) or header point as a zero-copy array of the mapping."""
        return getattr(self.zkey, name)

    def use(self, *names: str) -> None:
        pass  # read_zkey checked them all

    def done(self, *names: str) -> None:
        pass  # resident for the next proof

    def drop_prepared(self, why: str) -> None:
        """Stop using the sidecar (the native core refused its arrays) and remove it."""
        _prepared.discard(self.prepared, self.path, why)
        self.prepared = None

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

    def changed(self) -> str:
        """"" while the mapped files are as they were loaded; else which one changed and how (a file
        rewritten or truncated under its mapping: what was read from it cannot be trusted)."""
        why = self.zkey.changed()
        if why:
            return f"{self.path}: {why}"
        prep = self.prepared  # read once: the key may be closed meanwhile
        why = prep.changed() if prep is not None else ""
        return f"{prep.path}: {why}" if why else ""

    def close(self) -> None:
        if self.prepared is not None:
            self.prepared.close()
            self.prepared = None
        self.zkey.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
