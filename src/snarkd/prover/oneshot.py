"""`snarkd prove` on the CPU: one proof through the staged prover's own steps, run back to back.

The key and the witness stay memory-mapped (with the key's prepared sidecar
when there is a valid one: snarkd.prover.prepared) and go to
prover.groth16.prove as a MappedKey: zero-copy section buffers, each bulk
section checked just before its first use (canonical coordinates, coefficient
entries) and its pages released after its last, so the key is never resident
all at once. The sequence of the steps is prover/groth16.py's, the one every
path runs; only the key differs. Nothing on this path imports numpy: its
import alone costs ~60 ms and ~17 MB, a large share of a one-shot proof at
2^16-2^17 constraints.
"""

from __future__ import annotations

import importlib
import os

from snarkd.errors import FormatError, InputError
from snarkd.formats.binfile import BinFile
from snarkd.formats.wtns import MAGIC as WTNS_MAGIC, VERSIONS as WTNS_VERSIONS, Witness
from snarkd.formats.wtns import read_header as read_wtns_header
from snarkd.formats.zkey_layout import open_zkey, read_layout
from snarkd.prover import prepared as _prepared
from snarkd.prover.groth16 import HEADER, prove
from snarkd.prover.timing import PhaseTimer
from snarkd.prover.types import Proof

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
        from snarkd.native import _core

        for name in names:
            if name == "prepared":
                for block in (self.prepared.blocks.values() if self.prepared is not None else ()):
                    _core.drop_pages(block)
            else:
                _core.drop_pages(self._views[name])

    def drop_prepared(self, why: str) -> None:
        _prepared.discard(self.prepared, self._zkey_path, why)
        self.prepared = None

    def release(self) -> None:
        for v in self._views.values():
            v.release()
        if self.prepared is not None:
            self.prepared.close()
            self.prepared = None


def prove_files(zkey: str | os.PathLike | KeyFile, witness_path: str | os.PathLike, threads: int = 0,
                timer: PhaseTimer | None = None, r: int | None = None, s: int | None = None,
                witness_name: str | None = None, verify: bool = True) -> Proof:
    """Prove with fresh blinding from the OS CSPRNG (r, s only for reproducible tests).
    zkey: a path, or a KeyFile opened already (left open for its owner to close).
    verify: check the proof against the key's own verification data before returning it
    (native pairing, ~2 ms); a proof that does not verify raises SelfCheckError (exit 4)
    naming the likely cause (snarkd.verifier.self_check)."""
    timer = timer or PhaseTimer()
    witness_name = witness_name or os.fspath(witness_path)
    key = wf = mapped = values = None
    try:
        with timer.phase("load"):
            key = zkey if isinstance(zkey, KeyFile) else KeyFile(zkey)
            wf = BinFile.open(witness_path, WTNS_MAGIC, WTNS_VERSIONS)
            prime, n, woff = read_wtns_header(wf)
            lay = key.layout
            mapped = MappedKey(key, _prepared.load(key.path, key.file, lay.curve.name, lay.n_vars, lay.domain_size))
            values = wf.buffer[woff : woff + 32 * n].cast("Q", [n, 4]) if n else wf.buffer[woff:woff]
        result = prove(mapped, Witness(prime, values, witness_name), threads, r, s, witness_name, timer)
        if verify:
            # the proof checked against the key's own verification data before it is returned:
            # a damaged key, a witness that does not satisfy the circuit, a bug -- exit 4, and
            # nothing is written
            with timer.phase("verify"):
                ok = _verifies(mapped, result)
            if not ok:
                _self_check_failed(key.path, result.proof, result.public, witness_name, threads)
        result.timings = dict(timer.ms)
        return result
    finally:
        if values is not None:
            values.release()
        if mapped is not None:
            mapped.release()
        for f in (wf, key if key is not zkey else None):
            if f is not None:
                f.close()


def _verifies(key: MappedKey, result: Proof) -> bool:
    """The proof against the key's verification data (native pairing on the mapped header and IC)."""
    from snarkd.verifier.groth16 import proof_points, verify_points

    curve = key.curve
    a, b, c = proof_points(curve, result.proof)
    if a is None:
        return False
    try:
        return verify_points(curve, key.section("alpha1"), key.section("beta2"), key.section("gamma2"),
                             key.section("delta2"), key.section("ic"), [int(v) for v in result.public], a, b, c)
    except InputError:  # a verification-key point off its curve: the key is damaged
        return False


def _self_check_failed(zkey_path, proof: dict, public: list[str], witness_name: str, threads: int) -> None:
    """The self-check's verdict with its diagnosis (which needs the numpy reader: only here)."""
    from snarkd.formats.zkey import read_zkey
    from snarkd.verifier.self_check import SelfCheckError, verify_against_key

    with read_zkey(zkey_path) as zk:
        verify_against_key(zk, proof, public, witness_name=witness_name, threads=threads)
    raise SelfCheckError(f"self-check failed: the proof does not verify against the verification key inside "
                         f"{os.fspath(zkey_path)}; nothing was written.")
