"""A .zkey mapped for one proof, numpy-free: `KeyFile` (the file and its layout, read once: `snarkd prove`
asks its domain before proving) and `MappedKey` (a SectionKey, snarkd.prover.types, over it: what
prover/groth16.py's steps read on the one-shot path)."""

from __future__ import annotations

import importlib
import os

from snarkd.errors import FormatError
from snarkd.formats.zkey_layout import open_zkey, read_layout
from snarkd.prover import prepared as _prepared
from snarkd.prover.types import HEADER
SECTION_IDS = {"coefs": 4, "a": 5, "b1": 6, "b2": 7, "c": 8, "h": 9}
G2_POINTS = ("b2", "beta2", "delta2", "gamma2")
COORDS = (("x", "y"), ("x.c0", "x.c1", "y.c0", "y.c1"))


class KeyFile:
    """A .zkey opened for one-shot proofs: mapped once, its header and layout read once (`snarkd prove`
    asks its domain before proving: auto backend, progress bar)."""

    def __init__(self, path: str | os.PathLike):
        self.path = path
        self.file = open_zkey(path)
        try:
            self.layout = read_layout(self.file)
        except BaseException:
            self.file.close()
            raise

    @property
    def domain_power(self) -> int:
        return self.layout.domain_size.bit_length() - 1

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "KeyFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MappedKey:
    """A KeyFile as the proof's steps read it (a SectionKey, snarkd.prover.types) for one proof: its sections
    zero-copy views of the mapping, each checked just before its first use (FormatError naming the section,
    as read_zkey words it) and its pages released after its last (drop_pages)."""

    read_once = True

    def __init__(self, key: KeyFile, prepared=None):
        lay = key.layout
        self.file, self.path, self.curve = key.file, key.file.path, lay.curve
        self.native = getattr(importlib.import_module("snarkd.native._core"), lay.curve.native)
        self.n_vars, self.n_public, self.domain_size = lay.n_vars, lay.n_public, lay.domain_size
        self.prepared = prepared
        self._zkey_path = key.path
        buf = key.file.buffer
        self._views = {name: buf[off : off + nbytes]
                       for name, (off, nbytes) in (*lay.sections.items(), *lay.header_points.items())}
        self._unchecked = {*SECTION_IDS, *HEADER}

    def section(self, name: str) -> memoryview:
        return self._views[name]

    def use(self, *names: str) -> None:
        for name in names:
            if name in self._unchecked:
                self._check(name)
                self._unchecked.discard(name)

    def _check(self, name: str) -> None:
        view, native = self._views[name], self.native
        if name == "coefs":
            bad = native.coefs_error(view, self.domain_size, self.n_vars)
            if bad is not None:
                raise FormatError(self.path, bad[1], section=self.file.label(4))
            return
        g2 = name in G2_POINTS
        bad = native.first_noncanonical_point(view, g2)
        if bad is not None:
            point, coord = bad
            what = name if name in HEADER else point
            raise FormatError(self.path, f"point {what}: coordinate {COORDS[g2][coord]} is not canonical (not below q)",
                              section=self.file.label(SECTION_IDS.get(name, 2)))

    def done(self, *names: str) -> None:
        for name in names:
            if name == "prepared":
                for block in (self.prepared.blocks.values() if self.prepared is not None else ()):
                    self.native.drop_pages(block)
            else:
                self.native.drop_pages(self._views[name])

    def drop_prepared(self, why: str) -> None:
        _prepared.discard(self.prepared, self._zkey_path, why)
        self.prepared = None

    def release(self) -> None:
        for v in self._views.values():
            v.release()
        if self.prepared is not None:
            self.prepared.close()
            self.prepared = None
