"""A .zkey mapped for one proof, numpy-free: `MappedKey`, a SectionKey (snarkd.prover.types) over a
formats.zkey_layout.KeyFile and the key's prepared sidecar: what prover/groth16.py's steps read on the one-shot
path."""

from __future__ import annotations

import importlib

from snarkd.errors import FormatError
from snarkd.formats.zkey_layout import KeyFile
from snarkd.prover import prepared as _prepared
from snarkd.prover.types import HEADER

SECTION_IDS = {"coefs": 4, "a": 5, "b1": 6, "b2": 7, "c": 8, "h": 9}
G2_POINTS = ("b2", "beta2", "delta2", "gamma2")
COORDS = (("x", "y"), ("x.c0", "x.c1", "y.c0", "y.c1"))


class MappedKey:
    """A KeyFile as the proof's steps read it (a SectionKey, snarkd.prover.types) for one proof: its sections
    zero-copy views of the mapping, each checked just before its first use (FormatError naming the section,
    as read_zkey words it) and its pages released after its last (drop_pages); its prepared sidecar
    (snarkd.prover.prepared) when there is a valid one."""

    read_once = True

    def __init__(self, key: KeyFile):
        lay = key.layout
        self.file, self.path, self.curve = key.file, key.file.path, lay.curve
        self.native = getattr(importlib.import_module("snarkd.native._core"), lay.curve.native)
        self.n_vars, self.n_public, self.domain_size = lay.n_vars, lay.n_public, lay.domain_size
        self._zkey_path = key.path
        self._views = key.views()
        self.prepared = None
        self.head_start = None  # a one-shot proof's witness MSMs started before it (prover.cpu.head_start)
        try:
            self.prepared = _prepared.load(key.path, key.file, lay.curve.name, lay.n_vars, lay.domain_size)
        except BaseException:
            self.release()
            raise
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
        self._verdict(name, native.first_noncanonical_point(view, name in G2_POINTS))

    def _verdict(self, name: str, bad) -> None:
        """first_noncanonical_point's verdict on a point section: None, or its FormatError raised."""
        if bad is not None:
            point, coord = bad
            g2 = name in G2_POINTS
            what = name if name in HEADER else point
            raise FormatError(self.path, f"point {what}: coordinate {COORDS[g2][coord]} is not canonical (not below q)",
                              section=self.file.label(SECTION_IDS.get(name, 2)))

    def unchecked(self, name: str) -> bool:
        """Whether the section is still to be checked (its first use checks it)."""
        return name in self._unchecked

    def checked(self, name: str, bad) -> None:
        """A point section's check run elsewhere (prover.cpu.WitnessSums' tasks: first_noncanonical_point's
        verdict, None or (point, coordinate)): the section counted as checked, or the FormatError use() raises."""
        self._verdict(name, bad)
        self._unchecked.discard(name)

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
        if self.head_start is not None:  # its tasks read the mapping: stopped before the views go
            self.head_start.stop()
            self.head_start = None
        for v in self._views.values():
            v.release()
        if self.prepared is not None:
            self.prepared.close()
            self.prepared = None
