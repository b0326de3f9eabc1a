"""snarkjs .wtns witness files (version 2, 2 sections).

§1: u32 n8 (32), prime (the scalar field r, n8 bytes LE), u32 nWitness.
§2: nWitness values, n8 bytes each, LE, plain (not Montgomery). w[0] = 1.
"""

from __future__ import annotations

import os
import struct

from snarkd.atomic import atomic_open
from snarkd.errors import FormatError, MismatchError

TYPE_CHECKING = False  # typing stays out of `snarkd witness`'s imports
if TYPE_CHECKING:
    import numpy as np

    from .binfile import BinFile
    from .zkey import ZKey

# Imported where used, not here: the binfile reader (it loads the native core) and curves.params. `snarkd witness`
# only writes, and imports this module on its whole-process path.

MAGIC = b"wtns"
VERSIONS = (2,)
N8 = 32
LIMBS = N8 // 8


class Witness:
    """A witness: the field's prime and its values, (n, 4) uint64 limbs (plain form, little-endian). A plain
    class, not a dataclass: dataclasses costs `snarkd witness` ~9 ms of imports."""

    __slots__ = ("prime", "values", "path")

    def __init__(self, prime: int, values: np.ndarray, path: str = "<witness>"):
        self.prime = prime
        self.values = values
        self.path = path

    def __repr__(self) -> str:
        return f"Witness(prime={self.prime!r}, values=<{len(self)} values>, path={self.path!r})"

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def value(self, i: int) -> int:
        from .binfile import limbs_to_int

        return limbs_to_int(self.values[i])

    def to_ints(self) -> list[int]:
        from .binfile import limbs_to_int

        return [limbs_to_int(v) for v in self.values]


class MappedWitness(Witness):
    """A .wtns mapped for one proof, numpy-free (the one-shot prover's, prover/oneshot.py): values is a (n, 4)
    memoryview of u64 limbs over the mapping; close() lets the view and the mapping go."""

    __slots__ = ("_file",)

    @classmethod
    def open(cls, path: str | os.PathLike, name: str) -> "MappedWitness":
        from .binfile import BinFile

        bf = BinFile.open(path, MAGIC, VERSIONS)
        try:
            prime, n, off = read_header(bf)
            values = bf.buffer[off : off + N8 * n].cast("Q", [n, LIMBS]) if n else bf.buffer[off:off]
        except BaseException:
            bf.close()
            raise
        witness = cls(prime, values, name)
        witness._file = bf
        return witness

    def close(self) -> None:
        self.values.release()
        self._file.close()


def read_header(bf: BinFile) -> tuple[int, int, int]:
    """(prime, nWitness, file offset of the values) of an opened .wtns, checked
    (field size, section sizes); no numpy."""
    from .binfile import u32, uint

    sec1 = bf.section(1, "header")
    label1 = bf.label(1)
    if len(sec1) < 4:
        raise FormatError(bf.path, f"size is {len(sec1)} bytes, too short for the field size", section=label1)
    n8 = u32(sec1, 0)
    if n8 != N8:
        raise FormatError(bf.path, f"field element size {n8} bytes is not supported (expected {N8}: the bn128/bls12381 scalar field)", section=label1)
    if len(sec1) != 4 + n8 + 4:
        raise FormatError(bf.path, f"size is {len(sec1)} bytes, expected {4 + n8 + 4}", section=label1)
    prime = uint(sec1, 4, n8)
    n = u32(sec1, 4 + n8)
    off2 = bf.offset(2, "values")
    size2 = bf.size(2)
    if size2 != n * n8:
        raise FormatError(bf.path, f"size is {size2} bytes, expected {n * n8} for nWitness {n} × {n8} bytes", section=bf.label(2))
    return prime, n, off2


def _parse(bf: BinFile, copy: bool) -> Witness:
    import numpy as np

    prime, n, off2 = read_header(bf)
    values = np.frombuffer(bf.buffer, dtype="<u8", count=n * LIMBS, offset=off2).reshape(n, LIMBS)
    if copy:
        values = values.copy()
    return Witness(prime, values, bf.path)


def read_wtns(path: str | os.PathLike) -> Witness:
    """Read a .wtns file. Values are copied out of the mapping (a witness is small
    next to its key, and this lets the file be closed at once)."""
    from .binfile import BinFile

    bf = BinFile.open(path, MAGIC, VERSIONS)
    try:
        return _parse(bf, copy=True)
    finally:
        bf.close()


def map_wtns(path: str | os.PathLike) -> Witness:
    """A .wtns file as a zero-copy view of its memory map (the daemon's by-reference witnesses):
    the mapping lives as long as the values do, also after the file is unlinked."""
    from .binfile import BinFile

    return _parse(BinFile.open(path, MAGIC, VERSIONS), copy=False)


def parse_wtns(data, name: str = "<witness bytes>", copy: bool = True) -> Witness:
    """Parse .wtns bytes (e.g. received over the network); same checks as read_wtns.
    copy=False: the values are a view of `data` (which must then stay unchanged)."""
    from .binfile import BinFile

    bf = BinFile.from_bytes(data, name, MAGIC, VERSIONS)
    return _parse(bf, copy=copy)


def wtns_size(n_values: int) -> int:
    """The size of a .wtns file of n values as snarkjs writes it (header, 2 sections)."""
    return 12 + (12 + 4 + N8 + 4) + 12 + N8 * n_values


def _body(values) -> tuple[memoryview, int]:
    """(the values' bytes, how many values). values: (n, 4) uint64 limbs (numpy), their bytes (a bytes-like
    object of n * 32 bytes: the native witness path, which never imports numpy, and whose buffer is written as
    it is, not copied), or a sequence of ints."""
    import sys

    np = sys.modules.get("numpy")  # an ndarray can only come from a process that imported numpy
    if isinstance(values, (bytes, bytearray, memoryview)):
        body = memoryview(values).cast("B")
        if len(body) % N8:
            raise ValueError(f"witness bytes must be a multiple of {N8}, got {len(body)}")
        return body, len(body) // N8
    if np is not None and isinstance(values, np.ndarray):
        arr = np.ascontiguousarray(values, dtype="<u8")
        if arr.ndim != 2 or not 1 <= arr.shape[1] <= LIMBS:
            raise ValueError(f"witness values must have shape (n, {LIMBS}), got {arr.shape}")
        return memoryview(arr).cast("B"), arr.shape[0]
    vals = [int(v) for v in values]
    return memoryview(b"".join(v.to_bytes(N8, "little") for v in vals)), len(vals)


def _head(prime: int, body_len: int, n: int) -> bytes:
    """Everything snarkjs writes before the values."""
    # snarkjs writes a field's own element size: 32 bytes for BN254 and BLS12-381, 8 for 64-bit fields
    n8 = body_len // n if n else N8
    hdr = struct.pack("<I", n8) + prime.to_bytes(n8, "little") + struct.pack("<I", n)
    return b"".join([MAGIC, struct.pack("<II", 2, 2), struct.pack("<IQ", 1, len(hdr)), hdr,
                     struct.pack("<IQ", 2, body_len)])


def wtns_bytes(prime: int, values) -> bytes:
    """The exact bytes snarkjs writes for this witness (values: as `_body` takes them)."""
    body, n = _body(values)
    return _head(prime, len(body), n) + body


def write_wtns(path: str | os.PathLike, prime: int, values, durable: bool = True) -> None:
    """Write a .wtns atomically, byte-identical to snarkjs's (values: as `_body` takes them; written from their
    own buffer, not joined into one more copy). durable=False: no fsync before the rename (`snarkd witness`, as
    snarkjs and circom's C++ generator write it: a reader still sees the old file or the whole new one)."""
    body, n = _body(values)
    with atomic_open(path, "wb", durable) as fh:
        fh.write(_head(prime, len(body), n))
        fh.write(body)


def _field_name(p: int) -> str:
    from snarkd.curves.params import curve_by_r

    c = curve_by_r(p)
    return f"{p} ({c.name} scalar field)" if c else f"{p} (unknown field)"


def check_header_values(prime: int, n: int, w0: int | None, r: int, n_vars: int, curve_name: str, key_path,
                        name: str) -> None:
    """The O(1) checks of a witness against a key: same field, nVars values, w[0] == 1 (w0: None when
    there are no values). check_witness_header's, and the one-shot prover's on the numbers it maps."""
    if prime != r:
        raise MismatchError(f"{name}: witness is for field {_field_name(prime)}, key {key_path} is for field {r} "
                            f"({curve_name})")
    if n != n_vars:
        raise MismatchError(f"{name}: witness has {n} values, key {key_path} expects nVars = {n_vars} (a witness for "
                            f"another circuit?)")
    if n == 0 or w0 != 1:  # the value itself is not echoed: a witness holds secrets
        raise MismatchError(f"{name}: witness value w[0] must be 1 (the constant ONE signal), and is not")


def check_witness_header(witness: Witness, zkey: "ZKey", name: str | None = None) -> None:
    """The O(1) part of check_witness: same field, nVars values, w[0] == 1."""
    n = len(witness)
    check_header_values(witness.prime, n, witness.value(0) if n else None, zkey.r, zkey.n_vars, zkey.curve.name,
                        zkey.path, name or witness.path)


def check_witness(witness: Witness, zkey: "ZKey", name: str | None = None, threads: int = 0) -> None:
    """MismatchError unless `witness` fits `zkey`: same field, nVars values,
    w[0] == 1, every value canonical (< r; checked on `threads` threads, 0: all)."""
    check_witness_fits(witness, zkey.r, zkey.n_vars, zkey.curve.name, zkey.path, name or witness.path, threads)


def check_witness_fits(witness: Witness, r: int, n_vars: int, curve_name: str, key_path, name: str,
                       threads: int = 0) -> None:
    """check_witness against a key given by its field r, nVars, curve and path (the prover's steps take any
    key: prover/groth16.py). Numpy-free: the values may be any (n, 4) buffer of u64 limbs, C-contiguous."""
    from .binfile import first_not_below

    n = len(witness)
    w0 = int.from_bytes(memoryview(witness.values).cast("B")[0:32], "little") if n else None
    check_header_values(witness.prime, n, w0, r, n_vars, curve_name, key_path, name)
    bad = first_not_below(witness.values, r, threads)
    if bad >= 0:
        raise MismatchError(f"{name}: witness value w[{bad}] is not canonical (not below the field prime r = {r})")
