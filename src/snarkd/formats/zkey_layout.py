"""Where everything is in a Groth16 .zkey, checked without reading the bulk sections.

The header (§1 protocol, §2 curve, sizes and the six header points) and the
exact size of every point section and of §4: all O(1), in plain Python (no
numpy), so the one-shot prover can start on the memory-mapped sections at once.
`read_zkey` builds its arrays on this layout; the per-entry checks of the bulk
sections (canonical coordinates, coefficient entries) come after.
"""

from __future__ import annotations

from collections import namedtuple

from snarkd.curves.params import curve_by_q
from snarkd.errors import FormatError

from .binfile import BinFile, u32, uint

MAGIC, VERSIONS = b"zkey", (1,)  # the file's magic and the versions we read (zkey.py, the writer, the one-shot path)
PROTOCOLS = {1: "Groth16", 2: "PLONK", 10: "FFLONK"}
HEADER_POINTS = (("alpha1", 1), ("beta1", 1), ("beta2", 2), ("gamma2", 2), ("delta1", 1), ("delta2", 2))
COEF_ENTRY = 12  # u32 matrix, u32 constraint, u32 signal; then an n8r-byte value


class ZKeyLayout(namedtuple("ZKeyLayout", "curve n8q q n8r r n_vars n_public domain_size n_coefs header_points sections")):
    """A zkey's header values and section extents. header_points: name -> (file offset, bytes); sections: name
    (ic, coefs, a, b1, b2, c, h) -> (file offset, bytes). A named tuple, not a dataclass: see curves.params.Curve."""

    __slots__ = ()

    @property
    def limbs(self) -> int:
        return self.n8q // 8


def _point_section(bf: BinFile, sid: int, count: int, width: int, what: str) -> tuple[int, int]:
    size = bf.size(sid) if bf.has(sid) else None
    if size is None:
        bf.section(sid)  # raises "section is missing"
    expected = count * width * 8
    if size != expected:
        raise FormatError(bf.path, f"size is {size} bytes, expected {expected} ({what})", section=bf.label(sid))
    return bf.offset(sid), expected


def read_layout(bf: BinFile) -> ZKeyLayout:
    """Header values and section extents of an opened zkey container; FormatError
    naming the section for anything malformed."""
    p = bf.path
    # §1 protocol
    s1 = bf.section(1, "protocol")
    if len(s1) != 4:
        raise FormatError(p, f"size is {len(s1)} bytes, expected 4", section=bf.label(1))
    proto = u32(s1, 0)
    if proto != 1:
        pname = PROTOCOLS.get(proto, "unknown")
        raise FormatError(p, f"protocol {proto} ({pname}) is not supported: snarkd proves Groth16 (protocol 1) only", section=bf.label(1))

    # §2 header
    s2 = bf.section(2, "header")
    l2 = bf.label(2)
    if len(s2) < 4:
        raise FormatError(p, f"size is {len(s2)} bytes, too short", section=l2)
    n8q = u32(s2, 0)
    if len(s2) < 4 + n8q + 4:
        raise FormatError(p, f"size is {len(s2)} bytes, too short for n8q = {n8q}", section=l2)
    q = uint(s2, 4, n8q)
    curve = curve_by_q(q)
    if curve is None or curve.n8q != n8q:
        raise FormatError(p, f"base field (n8q = {n8q}, q = {q}) is not bn128's or bls12381's", section=l2)
    o = 4 + n8q
    n8r = u32(s2, o)
    if n8r != curve.n8r:
        raise FormatError(p, f"n8r = {n8r}, expected {curve.n8r} for {curve.name}", section=l2)
    r = uint(s2, o + 4, n8r)
    if r != curve.r:
        raise FormatError(p, f"scalar field r = {r} does not match {curve.name}'s group order {curve.r}", section=l2)
    o += 4 + n8r
    L = n8q // 8
    expected = o + 12 + 3 * 2 * n8q + 3 * 4 * n8q
    if len(s2) != expected:
        raise FormatError(p, f"size is {len(s2)} bytes, expected {expected} for {curve.name}", section=l2)
    n_vars, n_public, domain_size = u32(s2, o), u32(s2, o + 4), u32(s2, o + 8)
    o += 12
    if n_vars < n_public + 1:
        raise FormatError(p, f"nVars = {n_vars} is smaller than nPublic + 1 = {n_public + 1}", section=l2)
    if domain_size == 0 or domain_size & (domain_size - 1):
        raise FormatError(p, f"domainSize = {domain_size} is not a power of two", section=l2)
    if domain_size.bit_length() - 1 > curve.two_adicity:
        raise FormatError(p, f"domainSize = 2^{domain_size.bit_length() - 1} exceeds the {curve.name} two-adicity 2^{curve.two_adicity}", section=l2)
    if domain_size < n_public + 1:
        raise FormatError(p, f"domainSize = {domain_size} is smaller than the nPublic + 1 = {n_public + 1} public rows", section=l2)
    base = bf.offset(2)
    header_points = {}
    for name, g in HEADER_POINTS:
        nbytes = 2 * g * L * 8
        header_points[name] = (base + o, nbytes)
        o += nbytes

    sections = {
        "ic": _point_section(bf, 3, n_public + 1, 2 * L, f"nPublic + 1 = {n_public + 1} G1 points"),
        "a": _point_section(bf, 5, n_vars, 2 * L, f"nVars = {n_vars} G1 points"),
        "b1": _point_section(bf, 6, n_vars, 2 * L, f"nVars = {n_vars} G1 points"),
        "b2": _point_section(bf, 7, n_vars, 4 * L, f"nVars = {n_vars} G2 points"),
        "c": _point_section(bf, 8, n_vars - n_public - 1, 2 * L, f"nVars - nPublic - 1 = {n_vars - n_public - 1} G1 points"),
        "h": _point_section(bf, 9, domain_size, 2 * L, f"domainSize = {domain_size} G1 points"),
    }

    # §4 coefs: the entry count and the exact size (entries are checked by the reader)
    s4 = bf.section(4, "coefs")
    l4 = bf.label(4)
    if len(s4) < 4:
        raise FormatError(p, f"size is {len(s4)} bytes, too short for the entry count", section=l4)
    n_coefs = u32(s4, 0)
    entry = COEF_ENTRY + n8r
    if len(s4) != 4 + n_coefs * entry:
        raise FormatError(p, f"size is {len(s4)} bytes, expected {4 + n_coefs * entry} for {n_coefs} entries of {entry} bytes", section=l4)
    sections["coefs"] = (bf.offset(4), len(s4))

    return ZKeyLayout(curve=curve, n8q=n8q, q=q, n8r=n8r, r=r, n_vars=n_vars, n_public=n_public, domain_size=domain_size,
                      n_coefs=n_coefs, header_points=header_points, sections=sections)


def open_zkey(path) -> BinFile:
    """A .zkey file, memory-mapped, its magic and version checked (FormatError naming it otherwise)."""
    return BinFile.open(path, MAGIC, VERSIONS)


class KeyFile:
    """A .zkey mapped and its layout read, once, numpy-free: the one-shot prover's key (prover/mapped.MappedKey
    reads its sections; `snarkd prove` may ask its domain first: the auto backend, the progress bar)."""

    def __init__(self, path):
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

    def views(self) -> dict[str, memoryview]:
        """Every point section, §4 and the header points by name (layout names), zero-copy views of the mapping."""
        buf, lay = self.file.buffer, self.layout
        return {name: buf[off : off + nbytes] for name, (off, nbytes) in (*lay.sections.items(),
                                                                          *lay.header_points.items())}

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "KeyFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
