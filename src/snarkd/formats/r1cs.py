"""circom .r1cs files (version 1).

§1 header: u32 field size fs, prime (fs bytes LE), u32 nWires, u32 nPubOut,
u32 nPubIn, u32 nPrvIn, u64 nLabels, u32 mConstraints.
§2 constraints: for each constraint, for each of A, B, C: u32 count, then count
× (u32 wire, fs-byte LE plain coefficient). §3: nWires × u64 label ids.
§4/§5 (custom gates, PLONK only) are ignored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from snarkd.curves.params import Curve, curve_by_r
from snarkd.errors import FormatError

from .binfile import BinFile, first_not_below, limbs_to_int, u32, u64, uint

MAGIC = b"r1cs"
VERSIONS = (1,)


@dataclass(frozen=True)
class R1csHeader:
    field_size: int
    prime: int
    curve: Curve
    n_wires: int
    n_pub_out: int
    n_pub_in: int
    n_prv_in: int
    n_labels: int
    n_constraints: int

    @property
    def n_public(self) -> int:
        """Public signals (outputs + public inputs), the zkey's nPublic."""
        return self.n_pub_out + self.n_pub_in


@dataclass(frozen=True)
class SparseMatrix:
    """One of A, B, C in CSR form: row i has entries row_ptr[i]:row_ptr[i+1]."""

    row_ptr: np.ndarray  # (m+1,) int64
    wires: np.ndarray  # (nnz,) uint32
    coefs: np.ndarray  # (nnz, fs/8) uint64, plain (not Montgomery)

    @property
    def nnz(self) -> int:
        return int(self.wires.shape[0])

    def row(self, i: int) -> list[tuple[int, int]]:
        """[(wire, coefficient as int)] of row i (for tests and debugging)."""
        s, e = int(self.row_ptr[i]), int(self.row_ptr[i + 1])
        return [(int(self.wires[k]), limbs_to_int(self.coefs[k])) for k in range(s, e)]


@dataclass(frozen=True)
class R1cs:
    path: str
    header: R1csHeader
    a: SparseMatrix
    b: SparseMatrix
    c: SparseMatrix

    @property
    def matrices(self) -> tuple[SparseMatrix, SparseMatrix, SparseMatrix]:
        return (self.a, self.b, self.c)


def _parse_header(bf: BinFile) -> R1csHeader:
    sec = bf.section(1, "header")
    label = bf.label(1)
    if len(sec) < 4:
        raise FormatError(bf.path, f"size is {len(sec)} bytes, too short for the field size", section=label)
    fs = u32(sec, 0)
    if fs == 0 or fs % 8 != 0:
        raise FormatError(bf.path, f"field size {fs} is not a positive multiple of 8 bytes", section=label)
    expected = 4 + fs + 4 * 4 + 8 + 4
    if len(sec) != expected:
        raise FormatError(bf.path, f"size is {len(sec)} bytes, expected {expected} for field size {fs}", section=label)
    prime = uint(sec, 4, fs)
    o = 4 + fs
    n_wires, n_pub_out, n_pub_in, n_prv_in = (u32(sec, o + 4 * i) for i in range(4))
    n_labels = u64(sec, o + 16)
    m = u32(sec, o + 24)
    curve = curve_by_r(prime)
    if curve is None:
        raise FormatError(bf.path, f"prime {prime} is not the scalar field of bn128 or bls12381 (compile with circom -p bn128 or -p bls12381)", section=label)
    if fs != curve.n8r:
        raise FormatError(bf.path, f"field size {fs} does not match the {curve.name} scalar field ({curve.n8r} bytes)", section=label)
    if n_wires < 1 + n_pub_out + n_pub_in + n_prv_in:
        raise FormatError(bf.path, f"nWires {n_wires} is smaller than 1 + nPubOut {n_pub_out} + nPubIn {n_pub_in} + nPrvIn {n_prv_in}", section=label)
    return R1csHeader(fs, prime, curve, n_wires, n_pub_out, n_pub_in, n_prv_in, n_labels, m)


def read_r1cs_header(path: str | os.PathLike) -> R1csHeader:
    bf = BinFile.open(path, MAGIC, VERSIONS)
    try:
        hdr = _parse_header(bf)
        bf.section(2, "constraints")  # present (not parsed here)
        return hdr
    finally:
        bf.close()


def _lc_offsets(words: np.ndarray, n_lcs: int, term_words: int, path: str, label: str) -> tuple[np.ndarray, np.ndarray]:
    """Walk the chain of linear-combination counts (inherently sequential: each
    position depends on the previous count), in the native core. Only the u32
    counts are touched; terms are gathered afterwards with numpy. Returns (word
    offset of each count, counts)."""
    from snarkd.native import _check

    total = len(words)
    starts, k, pos = _check.r1cs_lc_offsets(words, n_lcs, term_words)
    if k < n_lcs:
        raise FormatError(path, f"truncated: linear combination {k} (constraint {k // 3}, matrix {'ABC'[k % 3]}) starts past the end of the section", section=label)
    counts = words[starts].astype(np.int64) if n_lcs else np.zeros(0, dtype=np.int64)
    if pos != total:
        if pos > total:
            i = int(np.searchsorted(starts + 1 + counts * term_words, total, side="right"))
            raise FormatError(path, f"truncated: the terms of constraint {i // 3} (matrix {'ABC'[i % 3]}) run past the end of the section", section=label)
        raise FormatError(path, f"{4 * (total - pos)} unexpected trailing bytes after {n_lcs // 3} constraints", section=label)
    return starts, counts


def read_r1cs(path: str | os.PathLike) -> R1cs:
    """Header and A, B, C in CSR form (numpy; no per-term Python objects)."""
    path_s = str(path)
    bf = BinFile.open(path, MAGIC, VERSIONS)
    try:
        hdr = _parse_header(bf)
        sec = bf.section(2, "constraints")
        label = bf.label(2)
        fs = hdr.field_size
        m = hdr.n_constraints
        if len(sec) % 4 != 0:
            raise FormatError(path_s, f"size {len(sec)} is not a multiple of 4 bytes", section=label)
        if bf.offset(2) % 4 == 0:
            words_np = np.frombuffer(sec, dtype="<u4")  # zero-copy, aligned
        else:
            words_np = np.frombuffer(sec, dtype="<u4").copy()  # one memcpy to align
        term_words = 1 + fs // 4
        n_limbs = fs // 8
        starts, counts = _lc_offsets(words_np, 3 * m, term_words, path_s, label)
        # A sliding window of term_words words over the section (a view, no copy):
        # indexing it at the term offsets gathers all terms of a matrix at once.
        window = np.lib.stride_tricks.sliding_window_view(words_np, term_words) if len(words_np) >= term_words else None
        mats = []
        for mat in range(3):
            st, ct = starts[mat::3], counts[mat::3]
            row_ptr = np.zeros(m + 1, dtype=np.int64)
            np.cumsum(ct, out=row_ptr[1:])
            nnz = int(row_ptr[-1])
            if nnz:
                # word offset of term k of row i: starts[i] + 1 + k*term_words
                k = np.arange(nnz, dtype=np.int64) - np.repeat(row_ptr[:-1], ct)
                k *= term_words
                k += np.repeat(st + 1, ct)
                terms = window[k]
                del k
                wires = np.ascontiguousarray(terms[:, 0])
                coefs = np.ascontiguousarray(terms[:, 1:]).view("<u8").reshape(nnz, n_limbs)
                del terms
            else:
                wires = np.zeros(0, dtype=np.uint32)
                coefs = np.zeros((0, n_limbs), dtype=np.uint64)
            bad = np.flatnonzero(wires >= hdr.n_wires)
            if bad.size:
                t = int(bad[0])
                row = int(np.searchsorted(row_ptr, t, side="right")) - 1
                raise FormatError(path_s, f"constraint {row}, matrix {'ABC'[mat]}: wire {int(wires[t])} is out of range (nWires = {hdr.n_wires})", section=label)
            t = first_not_below(coefs, hdr.prime)
            if t >= 0:
                row = int(np.searchsorted(row_ptr, t, side="right")) - 1
                raise FormatError(path_s, f"constraint {row}, matrix {'ABC'[mat]}: coefficient {limbs_to_int(coefs[t])} is not below the prime", section=label)
            mats.append(SparseMatrix(row_ptr, wires.astype(np.uint32, copy=False), coefs))
        del window, words_np
        return R1cs(path_s, hdr, *mats)
    finally:
        bf.close()
