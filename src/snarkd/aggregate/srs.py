"""The aggregation SRS: powers of two independent secrets a and b, and its file.

    G1: [a^i]_1, [b^i]_1  for i < 2 max_n      G2: [a^i]_2, [b^i]_2  for i < max_n

For n proofs (n <= max_n) the commitment keys are v = ([a^i]_2, [b^i]_2)_{i<n} (paired with A and C)
and w = ([a^(n+i)]_1, [b^(n+i)]_1)_{i<n} (paired with B); the KZG openings of the final keys use
the G2 powers below n and the G1 powers below 2n - 1; the verifier needs only g, h, [a]_1, [b]_1,
[a]_2, [b]_2 (the powers 0 and 1), which define the SRS's identity (`srs_id`).

File (`.srs`): the checked header of formats/checked_header.py (magic SNKDAGGS, version 1, JSON
header: curve, max_n, dev, sources = the SHA-256 of each source ptau, id, body_crc32c), then the
body: the G1 a-powers, the G1 b-powers, the G2 a-powers, the G2 b-powers, each point in the zkey
layout. Read memory-mapped through native._mapguard (a file truncated under its mapping reads as zeros,
never SIGBUS; `changed()` says so: the daemon keeps SRS files mapped); every field checked (InputError naming
the file).

A development SRS (`dev_srs`, `snarkd aggregation-srs --dev`) comes from secrets one machine drew:
whoever holds them can forge aggregates. It says so in its header, and everything that uses it warns.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from snarkd.aggregate.group import Group
from snarkd.curves.params import CURVES, Curve
from snarkd.errors import InputError
from snarkd.formats import checked_header
from snarkd.native import _mapguard

MAGIC = b"SNKDAGGS"
VERSION = 1
MAX_LOG = 27
DEV_WARNING = "WARNING: development aggregation SRS (one party drew its secrets): NOT SECURE FOR PRODUCTION"


@dataclass
class AggregationSRS:
    curve: Curve
    max_n: int
    dev: bool
    sources: list[str]
    g1_a: np.ndarray  # (2 max_n, G1 bytes) uint8
    g1_b: np.ndarray
    g2_a: np.ndarray  # (max_n, G2 bytes) uint8
    g2_b: np.ndarray
    path: Path | None = None
    _keep: object = field(default=None, repr=False)  # the _mapguard.Mapping the arrays view
    _points: tuple | None = field(default=None, repr=False)  # the verifier points as checked when read
    _digest: bytes = field(default=b"", repr=False)  # SHA-256 of the body as read
    _checked_n: int = field(default=0, repr=False)  # the powers for n up to this are checked (check_powers)

    def changed(self) -> str:
        """"" while the file is as it was read (or the SRS was made in memory); else how it changed: its size
        or mtime (native._mapguard), or its content (a body hash: a file rewritten in place with its mtime
        restored is seen too)."""
        why = self._keep.changed() if self._keep is not None else ""
        if not why and self._digest and _body_digest(self) != self._digest:
            why = "its content changed (same size and modification time)"
        return why

    @property
    def id(self) -> bytes:
        return srs_id(self.curve, self.verifier_points())

    def verifier_points(self) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
        """(g, h, [a]_1, [b]_1, [a]_2, [b]_2): of a file, copies taken and checked when it was read (what the
        id and the verifier use never changes under them)"""
        if self._points is not None:
            return self._points
        return (self.g1_a[0].tobytes(), self.g2_a[0].tobytes(), self.g1_a[1].tobytes(), self.g1_b[1].tobytes(),
                self.g2_a[1].tobytes(), self.g2_b[1].tobytes())

    def specialize(self, n: int) -> "ProverKey":
        """The commitment keys for n proofs; InputError naming the file unless n fits and the powers n uses
        (G1 below 2n, G2 below n) are successive powers of a and of b (checked once per prefix: `check_powers`)."""
        if n < 2 or n & (n - 1) or n > self.max_n:
            raise InputError(f"{self.name}: aggregates n = {n} proofs, but this SRS serves powers of two from 2 to {self.max_n}")
        self.check_powers(n)
        return ProverKey(n=n, v1=self.g2_a[:n].tobytes(), v2=self.g2_b[:n].tobytes(),
                         w1=self.g1_a[n : 2 * n].tobytes(), w2=self.g1_b[n : 2 * n].tobytes(), srs=self)

    @property
    def name(self) -> str:
        return str(self.path) if self.path else "aggregation SRS"

    def check_powers(self, n: int, threads: int = 0) -> None:
        """InputError naming the file unless the G1 powers below 2n and the G2 powers below n are, for a and for
        b, points of the subgroup and successive powers of one secret (verifier/ptau_check.check_chain:
        randomized pairing checks, a bad file passes with probability 2^-128). Only the prefix a call uses is
        checked, once: a BN254 SRS of max_n 2^20 is not scanned whole to aggregate 8 proofs. An SRS made in
        memory (dev_srs, srs_from_ptau: checked from its sources) is not checked again."""
        if self._keep is None or n <= self._checked_n:
            return
        from snarkd.verifier.ptau_check import check_chain

        for s, g1, g2 in (("a", self.g1_a, self.g2_a), ("b", self.g1_b, self.g2_b)):
            check_chain(self.curve, self.name, g1[: 2 * n], g2[:n], labels=(f"G1 {s}-powers", f"G2 {s}-powers"),
                        threads=threads)
        self._checked_n = n


@dataclass
class ProverKey:
    """The SRS specialized to n proofs: the commitment keys (concatenated point bytes)."""

    n: int
    v1: bytes
    v2: bytes
    w1: bytes
    w2: bytes
    srs: AggregationSRS


def srs_id(curve: Curve, points) -> bytes:
    return hashlib.sha256(b"snarkd/aggregation-srs/v1" + curve.name.encode() + b"".join(points)).digest()


# ---------------------------------------------------------------- generation
def powers(x: int, count: int, r: int) -> list[int]:
    """[1, x, x^2, ..., x^(count-1)] mod r."""
    out, acc = [], 1
    for _ in range(count):
        out.append(acc)
        acc = acc * x % r
    return out


def _fixed_base(curve: Curve, base: bytes, scalars: list[int], g2: bool, threads: int = 0) -> np.ndarray:
    from snarkd.native import _setup

    m = getattr(_setup, curve.native)
    fb = (m.FixedBaseG2 if g2 else m.FixedBaseG1)(base, 12 if len(scalars) > 4096 else 8, threads)
    size = curve.g2_bytes if g2 else curve.g1_bytes
    out = np.zeros((len(scalars), size), dtype=np.uint8)
    fb.mul(b"".join(s.to_bytes(32, "little") for s in scalars), out, threads)
    return out


def dev_srs(curve: Curve, max_n: int, a: int | None = None, b: int | None = None) -> AggregationSRS:
    """A development SRS from two secrets (random unless given: tests pass them)."""
    check_max_n(max_n, "max_n")
    r = curve.r
    a = a if a is not None else 2 + secrets.randbelow(r - 2)
    b = b if b is not None else 2 + secrets.randbelow(r - 2)
    if a == b:
        raise ValueError("the two secrets must differ")
    G = Group(curve)
    g, h = G.generator_g1(), G.generator_g2()
    pa, pb = powers(a, 2 * max_n, r), powers(b, 2 * max_n, r)
    return AggregationSRS(curve, max_n, True, [],
                          _fixed_base(curve, g, pa, False), _fixed_base(curve, g, pb, False),
                          _fixed_base(curve, h, pa[:max_n], True), _fixed_base(curve, h, pb[:max_n], True))


def srs_from_ptau(a, b, max_n: int | None = None) -> AggregationSRS:
    """The SRS from two Ptau-like objects of independent ceremonies (formats/ptau.py's interface:
    curve, power, tau_g1(count), tau_g2(count), path). A ptau of power p holds 2^(p+1) - 1 G1
    powers, so it serves max_n up to 2^(p-1) (the w key needs the G1 powers up to 2 max_n - 1)."""
    if a.curve is not b.curve:
        raise InputError(f"{getattr(b, 'path', 'ptau B')}: curve {b.curve.name} differs from {getattr(a, 'path', 'ptau A')}'s {a.curve.name}")
    power = min(a.power, b.power)
    limit = 1 << (power - 1) if power >= 2 else 0
    if max_n is None:
        max_n = limit
    check_max_n(max_n, "--max")
    if max_n > limit:
        raise InputError(f"--max {max_n}: the ptau files (power {a.power} and {b.power}) serve at most {limit}")
    g1a, g1b = np.asarray(a.tau_g1(2 * max_n)), np.asarray(b.tau_g1(2 * max_n))
    g2a, g2b = np.asarray(a.tau_g2(max_n)), np.asarray(b.tau_g2(max_n))
    if g1a[1].tobytes() == g1b[1].tobytes():
        raise InputError(f"{getattr(b, 'path', 'ptau B')}: its secret is the one of {getattr(a, 'path', 'ptau A')} (the two must be independent)")
    sources = [_file_sha256(getattr(x, "path", None)) for x in (a, b)]
    return AggregationSRS(a.curve, max_n, False, sources, g1a, g1b, g2a, g2b)


def _file_sha256(path) -> str:
    if path is None:
        return hashlib.sha256(b"").hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_max_n(max_n, what: str) -> None:
    if isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 2 or max_n & (max_n - 1) or max_n > 1 << MAX_LOG:
        raise InputError(f"{what}: {max_n!r} is not a power of two from 2 to 2^{MAX_LOG}")


# ---------------------------------------------------------------- the file
def _body_digest(srs: AggregationSRS) -> bytes:
    h = hashlib.sha256()  # releases the GIL: ~2 ms for the 4 MiB of a BN254 max_n = 8192 SRS
    for p in (srs.g1_a, srs.g1_b, srs.g2_a, srs.g2_b):
        h.update(memoryview(p).cast("B"))
    return h.digest()


def _body_parts(srs: AggregationSRS):
    return [np.ascontiguousarray(x) for x in (srs.g1_a, srs.g1_b, srs.g2_a, srs.g2_b)]


def write_srs(path, srs: AggregationSRS) -> None:
    from snarkd.atomic import atomic_open

    parts = _body_parts(srs)
    body_crc = checked_header.crc32c(b"".join(p.tobytes() for p in parts))
    header = json.dumps({"curve": srs.curve.name, "max_n": srs.max_n, "dev": srs.dev, "sources": srs.sources,
                         "id": srs.id.hex(), "body_crc32c": body_crc}, sort_keys=True).encode()
    with atomic_open(path, "wb") as f:
        f.write(checked_header.pack(MAGIC, VERSION, header))
        for p in parts:
            f.write(p.tobytes())


def read_srs_max_n(path) -> int:
    """The max_n an SRS file's header declares (its header only, checked; the body is not read): a bound to
    check a request against before parsing it."""
    from snarkd.formats.file_trust import open_regular

    fd = open_regular(path, "aggregation SRS")
    with os.fdopen(fd, "rb") as f:
        head = f.read(1 << 16)
    err = lambda msg: InputError(f"{path}: {msg}")  # noqa: E731
    if len(head) < checked_header.PREFIX.size:
        raise err("not an aggregation SRS (too short)")
    header, _ = checked_header.unpack(head, MAGIC, VERSION, "aggregation SRS", err)
    max_n = header.get("max_n") if isinstance(header, dict) else None
    try:
        check_max_n(max_n, "max_n")
    except InputError as exc:
        raise err(str(exc)) from None
    return max_n


_HEADER_KEYS = {"curve", "max_n", "dev", "sources", "id", "body_crc32c"}


def read_srs(path, check_all: bool = True, threads: int = 0) -> AggregationSRS:
    """The SRS file at `path`, memory-mapped; InputError naming the file on anything malformed.
    check_all=False (the verifier, which reads only the six verifier points and checks those): the
    other points are covered by the body checksum but not each checked to be on its curve. The powers an
    aggregation uses are checked to be successive powers of a and b by `specialize` (check_powers): a file
    whose powers are swapped or replaced, its checksum recomputed, is refused there."""
    from snarkd.formats.file_trust import open_regular

    path = Path(path)

    def bad(msg: str) -> InputError:
        return InputError(f"{path}: {msg}")

    fd = open_regular(path, "aggregation SRS")  # a FIFO or a device is refused, never waited on
    try:
        if os.fstat(fd).st_size < checked_header.PREFIX.size:
            raise bad("not an aggregation SRS (too short)")
        mm = _mapguard.Mapping(fd)
    except OSError as exc:
        raise bad(f"cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    header, off = checked_header.unpack(memoryview(mm), MAGIC, VERSION, "aggregation SRS", bad)
    if not isinstance(header, dict) or set(header) != _HEADER_KEYS:
        raise bad(f"header fields must be exactly {sorted(_HEADER_KEYS)}")
    curve = next((c for c in CURVES if c.name == header["curve"]), None)
    if curve is None:
        raise bad(f"unknown curve {header['curve']!r}")
    max_n = header["max_n"]
    try:
        check_max_n(max_n, "max_n")
    except InputError as exc:
        raise bad(str(exc)) from None
    dev, sources = header["dev"], header["sources"]
    if not isinstance(dev, bool):
        raise bad("dev must be true or false")
    if not isinstance(sources, list) or len(sources) != (0 if dev else 2) or not all(
            isinstance(s, str) and len(s) == 64 and all(ch in "0123456789abcdef" for ch in s) for s in sources):
        raise bad("sources must list the SHA-256 (hex) of the two source ptau files (none for a dev SRS)")
    crc = header["body_crc32c"]
    if isinstance(crc, bool) or not isinstance(crc, int):
        raise bad("body_crc32c must be an integer")
    g1, g2 = curve.g1_bytes, curve.g2_bytes
    sizes = [2 * max_n * g1, 2 * max_n * g1, max_n * g2, max_n * g2]
    if len(mm) - off != sum(sizes):
        raise bad(f"body holds {len(mm) - off} bytes, max_n {max_n} on {curve.name} needs {sum(sizes)}")
    body = memoryview(mm)[off:]
    if checked_header.crc32c(body) != crc:
        raise bad("body checksum mismatch (corrupt)")
    arrays, pos = [], 0
    for s, width in zip(sizes, (g1, g1, g2, g2)):
        arrays.append(np.frombuffer(mm, dtype=np.uint8, count=s, offset=off + pos).reshape(-1, width))
        pos += s
    srs = AggregationSRS(curve, max_n, dev, sources, *arrays, path=path, _keep=mm)
    srs._points = srs.verifier_points()  # copies: the checks below and every later use see these bytes
    srs._digest = _body_digest(srs)
    _check_points(srs, bad, check_all, threads)
    if header["id"] != srs.id.hex():
        raise bad("id does not match the SRS's points")
    return srs


def _check_points(srs: AggregationSRS, bad, check_all: bool, threads: int = 0) -> None:
    G = Group(srs.curve)
    scans = (("G1 a-powers", srs.g1_a, G.core.g1_first_not_on_curve), ("G1 b-powers", srs.g1_b, G.core.g1_first_not_on_curve),
             ("G2 a-powers", srs.g2_a, G.core.g2_first_not_on_curve), ("G2 b-powers", srs.g2_b, G.core.g2_first_not_on_curve))
    for name, arr, first_off in scans if check_all else scans[:0]:
        i = first_off(arr)
        if i >= 0:
            raise bad(f"{name}[{i}] is not a point of {srs.curve.name}")
    g, h, a1, b1, a2, b2 = srs.verifier_points()
    if g != G.generator_g1() or srs.g1_b[0].tobytes() != g:
        raise bad("the G1 powers do not start with the generator")
    if h != G.generator_g2() or srs.g2_b[0].tobytes() != h:
        raise bad("the G2 powers do not start with the generator")
    if a1 == b1 or a1 in (g, bytes(len(g))) or b1 in (g, bytes(len(g))):
        raise bad("the secrets a and b must be distinct and neither 0 nor 1")
    for p in (a1, b1):
        if not G.g1_valid(p):
            raise bad("[a]_1 or [b]_1 is not in the order-r subgroup")
    for q in (a2, b2):
        if not G.g2_valid(q):
            raise bad("[a]_2 or [b]_2 is not in the order-r subgroup")
    # [a]_1 and [a]_2 (and b) are powers of one secret: e([a]_1, h) == e(g, [a]_2)
    for p, q in ((a1, a2), (b1, b2)):
        if G.pair.multi_pairing([p, G.g1_neg(g)], [h, q]) != G.gt_one():
            raise bad("[a]_1 and [a]_2 (or b) are not of one secret")


def srs_from_ptau_files(a_path, b_path, max_n: int | None = None) -> AggregationSRS:
    """The production SRS: two snarkjs ptau files read and checked (formats/ptau.py and
    verifier/ptau_check.py: well formed, powers of one secret each, the two secrets distinct)."""
    from snarkd.formats.ptau import read_ptau
    from snarkd.verifier.ptau_check import check_independent, check_powers

    with read_ptau(a_path) as a, read_ptau(b_path) as b:
        check_independent(a, b)
        power = min(a.power, b.power)
        n = max_n if max_n is not None else (1 << (power - 1) if power >= 2 else 0)
        check_max_n(n, "--max")
        for p in (a, b):
            check_powers(p, 2 * n, n)
        return srs_from_ptau(a, b, n)
