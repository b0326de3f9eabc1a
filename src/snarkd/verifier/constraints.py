"""Does a witness satisfy a circuit? (A·w)·(B·w) = C·w for every constraint of the .r1cs.

What `snarkjs wtns check` answers, on the native core (`snarkd.native._check`,
threads, no per-term Python). A proof made from a witness that fails here does
not verify: this is how `snarkd check` tells "the witness is wrong" from "the
key is damaged" after a failed self-check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snarkd.errors import MismatchError
from snarkd.formats.binfile import first_not_below, limbs_to_int
from snarkd.formats.r1cs import R1cs
from snarkd.formats.wtns import Witness
from snarkd.formats.zkey import ZKey


@dataclass(frozen=True)
class Unsatisfied:
    """The first failing constraint, with its three sums (plain ints mod r)."""

    index: int
    a: int
    b: int
    c: int

    def __str__(self) -> str:
        return f"constraint {self.index}: (A·w)·(B·w) != C·w (A·w = {self.a}, B·w = {self.b}, C·w = {self.c})"


def check_witness_fits_r1cs(r1cs: R1cs, witness: Witness, witness_name: str | None = None) -> None:
    """MismatchError unless the witness could belong to this circuit: same
    field, nWires values, w[0] = 1, every value below r."""
    name = witness_name or witness.path
    hdr = r1cs.header
    if witness.prime != hdr.prime:
        raise MismatchError(f"{name}: witness is for field {witness.prime}, circuit {r1cs.path} is over {hdr.prime} ({hdr.curve.name})")
    if len(witness) != hdr.n_wires:
        raise MismatchError(f"{name}: witness has {len(witness)} values, circuit {r1cs.path} has nWires = {hdr.n_wires} (a witness for another circuit?)")
    if len(witness) == 0 or witness.value(0) != 1:
        raise MismatchError(f"{name}: witness value w[0] must be 1 (the constant ONE signal)")
    bad = first_not_below(witness.values, hdr.prime)
    if bad >= 0:
        raise MismatchError(f"{name}: witness value w[{bad}] is not below the field prime r")


def check_r1cs_fits_key(r1cs: R1cs, zkey: ZKey) -> None:
    """MismatchError unless the key could have been made from this circuit."""
    hdr = r1cs.header
    if hdr.curve is not zkey.curve:
        raise MismatchError(f"{r1cs.path}: circuit is over {hdr.curve.name}, key {zkey.path} is for {zkey.curve.name}")
    if hdr.n_wires != zkey.n_vars:
        raise MismatchError(f"{r1cs.path}: circuit has nWires = {hdr.n_wires}, key {zkey.path} has nVars = {zkey.n_vars} (a key for another circuit?)")
    if hdr.n_public != zkey.n_public:
        raise MismatchError(f"{r1cs.path}: circuit has {hdr.n_public} public signals, key {zkey.path} has nPublic = {zkey.n_public}")
    rows = hdr.n_constraints + hdr.n_public + 1
    if rows > zkey.domain_size:
        raise MismatchError(f"{r1cs.path}: circuit needs {rows} rows (constraints + public + 1), key {zkey.path} has domainSize = {zkey.domain_size}")


def _row_sum(mat, w: np.ndarray, i: int, r: int) -> int:
    return sum(coef * limbs_to_int(w[wire]) for wire, coef in mat.row(i)) % r


def first_unsatisfied(r1cs: R1cs, witness: Witness, threads: int = 0) -> Unsatisfied | None:
    """The first constraint the witness does not satisfy, or None. Call
    check_witness_fits_r1cs first (the native scan rejects a misfit with ValueError)."""
    from snarkd.native import _check

    mod = getattr(_check, r1cs.header.curve.native)
    mats = [(m.row_ptr, m.wires, m.coefs) for m in r1cs.matrices]
    w = np.ascontiguousarray(witness.values, dtype="<u8")
    i = int(mod.r1cs_first_unsatisfied(*mats, w, threads))
    if i < 0:
        return None
    r = r1cs.header.prime
    a, b, c = (_row_sum(m, w, i, r) for m in r1cs.matrices)
    return Unsatisfied(i, a, b, c)
