"""The aggregate's bytes and its JSON file.

JSON (`snarkd aggregate` writes it, `snarkd verify-aggregate` reads it):
    {"protocol": "snarkpack", "version": 1, "curve": "bn128", "n": N,
     "srs": {"id": HEX, "dev": BOOL}, "vk": HEX (SHA-256 of the key's points),
     "public": [[decimal strings of proof 0], ...],  "proof": BASE64}
"proof" holds, in order (GT values compressed to 6 Fp, points in the zkey layout):
    T_AB, U_AB, T_C, U_C (the commitments), Z_AB (= prod e(A_i, B_i)^(r^i)), agg_C (G1);
    per round (log2 N of them): T_AB, U_AB, T_C, U_C, Z_AB of the left cross terms, the same of the
    right ones (10 GT), ZC_L, ZC_R (G1);
    A*, B*, C* (G1, G2, G1), v1*, v2* (G2), w1*, w2* (G1), the KZG openings pi_v1, pi_v2 (G2), pi_w1, pi_w2 (G1).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from snarkd.aggregate.commitment import Commitments
from snarkd.aggregate.gipa import Round
from snarkd.aggregate.group import Group
from snarkd.curves.params import Curve
from snarkd.errors import InputError

PROTOCOL = "snarkpack"
VERSION = 1


class NotCanonical(Exception):
    """An element of the aggregate that is not a canonical encoding of a group element: the aggregate is invalid."""


@dataclass
class AggregateProof:
    curve: Curve
    n: int
    com: Commitments
    ip_ab: bytes
    agg_c: bytes
    rounds: list[Round]
    final_a: bytes
    final_b: bytes
    final_c: bytes
    final_v1: bytes
    final_v2: bytes
    final_w1: bytes
    final_w2: bytes
    pi_v1: bytes
    pi_v2: bytes
    pi_w1: bytes
    pi_w2: bytes

    def to_bytes(self) -> bytes:
        G = Group(self.curve)
        gt = G.gt_compress
        parts = [gt(v) for v in self.com.values()] + [gt(self.ip_ab), self.agg_c]
        for rnd in self.rounds:
            parts += [gt(v) for v in rnd.gt_values()] + [rnd.zc_left, rnd.zc_right]
        parts += [self.final_a, self.final_b, self.final_c, self.final_v1, self.final_v2, self.final_w1, self.final_w2,
                  self.pi_v1, self.pi_v2, self.pi_w1, self.pi_w2]
        return b"".join(parts)


def proof_size(curve: Curve, n: int) -> int:
    G = Group(curve)
    k = n.bit_length() - 1
    t, g1, g2 = G.gt_bytes, G.g1_bytes, G.g2_bytes
    return 5 * t + g1 + k * (10 * t + 2 * g1) + 6 * g1 + 5 * g2  # A*, C*, w1*, w2*, pi_w1, pi_w2; B*, v1*, v2*, pi_v1, pi_v2


def from_bytes(curve: Curve, n: int, data: bytes) -> AggregateProof:
    """Parse; NotCanonical (naming the element) on an element that is not a canonical group element."""
    G = Group(curve)
    pos = 0

    def take(size: int) -> bytes:
        nonlocal pos
        out = data[pos : pos + size]
        pos += size
        return out

    def gt(what: str) -> bytes:
        f = G.gt_decompress(take(G.gt_bytes))
        if f is None:
            raise NotCanonical(f"{what}: not a canonical GT encoding")
        return f

    def g1(what: str) -> bytes:
        p = take(G.g1_bytes)
        if not G.g1_valid(p):
            raise NotCanonical(f"{what}: not a canonical point of the G1 subgroup")
        return p

    def g2(what: str) -> bytes:
        q = take(G.g2_bytes)
        if not G.g2_valid(q):
            raise NotCanonical(f"{what}: not a canonical point of the G2 subgroup")
        return q

    com = Commitments(gt("T_AB"), gt("U_AB"), gt("T_C"), gt("U_C"))
    ip_ab, agg_c = gt("Z_AB"), g1("agg_C")
    rounds = []
    for j in range(n.bit_length() - 1):
        left = Commitments(*(gt(f"round {j} left {w}") for w in ("T_AB", "U_AB", "T_C", "U_C", "Z_AB")))
        right = Commitments(*(gt(f"round {j} right {w}") for w in ("T_AB", "U_AB", "T_C", "U_C", "Z_AB")))
        rounds.append(Round(left, right, g1(f"round {j} ZC_L"), g1(f"round {j} ZC_R")))
    return AggregateProof(curve, n, com, ip_ab, agg_c, rounds, g1("A*"), g2("B*"), g1("C*"), g2("v1*"), g2("v2*"),
                          g1("w1*"), g1("w2*"), g2("pi_v1"), g2("pi_v2"), g1("pi_w1"), g1("pi_w2"))


@dataclass
class AggregateFile:
    curve: Curve
    n: int
    srs_id: str
    srs_dev: bool
    vk_digest: str
    public: list[list[int]]
    proof: bytes  # the raw bytes (parsed by the verifier)


def to_json(agg: AggregateProof, srs_id: bytes, srs_dev: bool, vk_digest: bytes, public: list[list[int]]) -> dict:
    return {"protocol": PROTOCOL, "version": VERSION, "curve": agg.curve.name, "n": agg.n,
            "srs": {"id": srs_id.hex(), "dev": srs_dev}, "vk": vk_digest.hex(),
            "public": [[str(v) for v in row] for row in public],
            "proof": base64.b64encode(agg.to_bytes()).decode()}


_KEYS = {"protocol", "version", "curve", "n", "srs", "vk", "public", "proof"}


def _hex32(v, where: str) -> str:
    if not isinstance(v, str) or len(v) != 64 or any(c not in "0123456789abcdef" for c in v):
        raise InputError(f"{where}: expected 64 lower-case hex digits")
    return v


def read_json(obj, name: str) -> AggregateFile:
    from snarkd.curves.params import CURVES

    if not isinstance(obj, dict):
        raise InputError(f"{name}: expected a JSON object")
    if set(obj) != _KEYS:
        raise InputError(f"{name}: fields must be exactly {sorted(_KEYS)}")
    if obj["protocol"] != PROTOCOL:
        raise InputError(f"{name}.protocol: {obj['protocol']!r} is not {PROTOCOL!r}")
    if obj["version"] != VERSION or isinstance(obj["version"], bool):
        raise InputError(f"{name}.version: {obj['version']!r}, this snarkd reads version {VERSION}")
    curve = next((c for c in CURVES if c.name == obj["curve"]), None)
    if curve is None:
        raise InputError(f"{name}.curve: unknown curve {obj['curve']!r}")
    n = obj["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 2 or n & (n - 1) or n > 1 << 27:
        raise InputError(f"{name}.n: {n!r} is not a power of two from 2 to 2^27")
    srs = obj["srs"]
    if not isinstance(srs, dict) or set(srs) != {"id", "dev"} or not isinstance(srs["dev"], bool):
        raise InputError(f"{name}.srs: expected {{\"id\": HEX, \"dev\": true|false}}")
    srs_id = _hex32(srs["id"], f"{name}.srs.id")
    vk_digest = _hex32(obj["vk"], f"{name}.vk")
    public = obj["public"]
    if not isinstance(public, list) or len(public) != n:
        raise InputError(f"{name}.public: expected {n} rows of public inputs (one per proof)")
    rows = []
    width = None
    for i, row in enumerate(public):
        if not isinstance(row, list) or (width is not None and len(row) != width):
            raise InputError(f"{name}.public[{i}]: expected a list of {width if width is not None else 'the'} decimal strings")
        width = len(row)
        vals = []
        for j, v in enumerate(row):
            if not isinstance(v, str) or not v.isdigit() or not v.isascii() or len(v) > 100 or (len(v) > 1 and v[0] == "0"):
                raise InputError(f"{name}.public[{i}][{j}]: expected a canonical decimal string")
            x = int(v)
            if x >= curve.r:
                raise InputError(f"{name}.public[{i}][{j}]: not below the scalar field modulus")
            vals.append(x)
        rows.append(vals)
    proof = obj["proof"]
    if not isinstance(proof, str):
        raise InputError(f"{name}.proof: expected a base64 string")
    try:
        raw = base64.b64decode(proof.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise InputError(f"{name}.proof: not valid base64") from None
    if base64.b64encode(raw).decode() != proof:
        raise InputError(f"{name}.proof: not canonical base64")
    expected = proof_size(curve, n)
    if len(raw) != expected:
        raise InputError(f"{name}.proof: {len(raw)} bytes, an aggregate of {n} proofs on {curve.name} has {expected}")
    return AggregateFile(curve, n, srs_id, srs["dev"], vk_digest, rows, raw)
