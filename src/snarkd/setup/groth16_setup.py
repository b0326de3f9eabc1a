"""Single-party Groth16 setup for development and testing (`snarkd setup`).

NOT FOR PRODUCTION: whoever runs this knows the toxic waste (tau, alpha, beta,
delta) -- or could have kept it -- and can therefore forge proofs for the
circuit. Use a multi-party ceremony (snarkjs powersoftau + zkey contribute) for
anything that must be sound against the person who made the key.

What it computes, for an r1cs with m constraints, nPublic public signals and a
domain of n = 2^p rows (p = floor(log2(m + nPublic)) + 1, as snarkjs):
  1. tau, alpha, beta, delta at random (the OS CSPRNG, or expanded from --seed),
     gamma = 1 (the G2 generator, as snarkjs's groth16 setup).
  2. The QAP at tau in O(n + nnz) field operations (native qap_eval): the
     Lagrange basis L_c(tau), u_s, v_s, w_s per signal, the IC/C scalars
     (beta u + alpha v + w)(/delta) and the H basis L^(2n)_(2i+1)(tau)/delta.
  3. All query points by fixed-base batch-affine scalar multiplication of the
     G1/G2 generators (native FixedBaseG1/G2, multithreaded), in chunks that are
     streamed into the zkey, so memory stays near the scalar arrays plus one chunk.
The zkey's layout is snarkjs's (formats/zkey_writer.py); §10 records one
contribution named "snarkd setup ..." so the key's origin is visible.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from snarkd.atomic import atomic_write_json
from snarkd.curves.params import Curve
from snarkd.errors import InputError
from snarkd.formats import zkey_writer as zw
from snarkd.formats.r1cs import read_r1cs, read_r1cs_header
from snarkd.formats.zkey import read_zkey, vk_json
from snarkd.native import _setup

WARNING = (
    "WARNING: `snarkd setup` is a single-party setup for development and testing only. "
    "It is NOT secure for production: whoever ran it could have kept the secret values "
    "(tau, alpha, beta, delta) and could forge proofs for this circuit. "
    "For production keys, run a multi-party ceremony (snarkjs powersoftau + zkey contribute)."
)
CONTRIBUTION_NAME = "snarkd setup: single-party dev key, NOT for production"
CHUNK = 1 << 16  # points per native call (progress granularity, output buffer size)


class SetupError(InputError):
    """An r1cs that snarkd setup cannot make a key for (e.g. too large)."""


@dataclass
class SetupResult:
    curve: str
    n_vars: int
    n_public: int
    n_constraints: int
    domain_size: int
    zkey: str
    vk: str | None
    seconds: dict = field(default_factory=dict)


# -- curve constants -------------------------------------------------------------


def _mont_bytes(x: int, curve: Curve) -> bytes:
    return (x * curve.rq % curve.q).to_bytes(curve.n8q, "little")


def g1_generator_bytes(curve: Curve) -> bytes:
    x, y = curve.g1
    return _mont_bytes(x, curve) + _mont_bytes(y, curve)


def g2_generator_bytes(curve: Curve) -> bytes:
    (x0, x1), (y0, y1) = curve.g2
    return b"".join(_mont_bytes(v, curve) for v in (x0, x1, y0, y1))


def native(curve: Curve):
    return getattr(_setup, curve.native)


def domain_power(n_constraints: int, n_public: int) -> int:
    """snarkjs: log2(m + nPublic) + 1 with its integer log2 (floor); >= 1."""
    rows = n_constraints + n_public
    return max(rows.bit_length(), 1) if rows else 1


def max_power(curve: Curve) -> int:
    # 2^S is the largest power-of-two domain of the field; domainSize is a u32 in the zkey.
    return min(curve.two_adicity, 31)


# -- randomness ------------------------------------------------------------------


class _Rng:
    """Field elements from the OS CSPRNG, or (with a seed) from SHAKE-256(seed)."""

    def __init__(self, seed: bytes | None):
        self._xof = None
        if seed is not None:
            self._xof = hashlib.shake_256(b"snarkd-setup-v1\0" + seed)
            self._pos = 0

    def bytes(self, n: int) -> bytes:
        if self._xof is None:
            return os.urandom(n)
        out = self._xof.digest(self._pos + n)[self._pos :]
        self._pos += n
        return out

    def scalar(self, r: int) -> int:
        while True:
            x = int.from_bytes(self.bytes(64), "little") % r
            if x:
                return x


def parse_seed(text: str) -> bytes:
    t = text.strip().lower()
    if t.startswith("0x"):
        t = t[2:]
    if not t:
        raise InputError("--seed: empty; give a hex string such as 00ff12")
    try:
        return bytes.fromhex(t if len(t) % 2 == 0 else "0" + t)
    except ValueError:
        raise InputError(f"--seed: {text!r} is not a hex string") from None


def _fr_bytes(x: int) -> bytes:
    return x.to_bytes(32, "little")


def _fr_array(values: list[int]) -> np.ndarray:
    return np.frombuffer(b"".join(_fr_bytes(v) for v in values), dtype="<u8").reshape(-1, 4)


# -- the setup -------------------------------------------------------------------


def _pick_window(count: int, bits: int) -> int:
    """Window minimising count * windows + table size (table adds cost ~2x)."""
    best, best_cost = 4, None
    for w in range(4, 17):
        nw = -(-(bits + 1) // w)
        cost = count * nw + 2 * nw * (1 << (w - 1))
        if w > 12:  # tables beyond L2 per window: random lookups get slower
            cost += count * nw * 0.1 * (w - 12)
        if best_cost is None or cost < best_cost:
            best, best_cost = w, cost
    return best


def _progress(total: int, enabled: bool | None):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        class _Null:
            def update(self, n=1): pass
            def set_description(self, s): pass
            def close(self): pass
        return _Null()
    return tqdm(total=total, unit="pt", unit_scale=True, desc="setup", file=sys.stderr, dynamic_ncols=True)


def _coef_chunks(r1cs, n_public: int, mod, threads: int, rows_per_chunk: int = 1 << 17):
    """§4 entries in snarkjs's order (per constraint: its A terms, then its B terms;
    then the public rows (0, m+s, s, 1)), as bytes chunks."""
    dt = np.dtype([("matrix", "<u4"), ("constraint", "<u4"), ("signal", "<u4"), ("value", "<u8", (4,))])
    A, B = r1cs.a, r1cs.b
    m = r1cs.header.n_constraints
    for c0 in range(0, m, rows_per_chunk):
        c1 = min(m, c0 + rows_per_chunk)
        a0, a1 = int(A.row_ptr[c0]), int(A.row_ptr[c1])
        b0, b1 = int(B.row_ptr[c0]), int(B.row_ptr[c1])
        na, nb = a1 - a0, b1 - b0
        ent = np.empty(na + nb, dtype=dt)
        cnt_a = np.diff(A.row_ptr[c0 : c1 + 1])
        cnt_b = np.diff(B.row_ptr[c0 : c1 + 1])
        row_start = (A.row_ptr[c0:c1] - a0) + (B.row_ptr[c0:c1] - b0)  # first entry of each row in the chunk
        rows = np.arange(c0, c1, dtype=np.int64)
        if na:
            ra = np.repeat(rows - c0, cnt_a)
            pos_a = row_start[ra] + (np.arange(na) - (A.row_ptr[c0:c1] - a0)[ra])
            ent["matrix"][pos_a] = 0
            ent["constraint"][pos_a] = ra + c0
            ent["signal"][pos_a] = A.wires[a0:a1]
            ent["value"][pos_a] = mod.coef_values(np.ascontiguousarray(A.coefs[a0:a1]), threads)
        if nb:
            rb = np.repeat(rows - c0, cnt_b)
            pos_b = row_start[rb] + cnt_a[rb] + (np.arange(nb) - (B.row_ptr[c0:c1] - b0)[rb])
            ent["matrix"][pos_b] = 1
            ent["constraint"][pos_b] = rb + c0
            ent["signal"][pos_b] = B.wires[b0:b1]
            ent["value"][pos_b] = mod.coef_values(np.ascontiguousarray(B.coefs[b0:b1]), threads)
        yield ent.tobytes()
    pub = np.zeros(n_public + 1, dtype=dt)
    pub["matrix"] = 0
    pub["constraint"] = m + np.arange(n_public + 1)
    pub["signal"] = np.arange(n_public + 1)
    pub["value"] = mod.coef_values(_fr_array([1] * (n_public + 1)), threads)
    yield pub.tobytes()


def check_r1cs_size(path, hdr) -> int:
    """Domain power for this r1cs header, or SetupError if the field cannot hold it."""
    curve = hdr.curve
    p = domain_power(hdr.n_constraints, hdr.n_public)
    limit = max_power(curve)
    if p > limit:
        rows = hdr.n_constraints + hdr.n_public
        why = (f"the {curve.name} scalar field has two-adicity {curve.two_adicity}, so the largest evaluation domain is 2^{curve.two_adicity}"
               if p > curve.two_adicity else "the zkey stores the domain size as a u32")
        raise SetupError(
            f"{path}: circuit too large: {hdr.n_constraints} constraints + {hdr.n_public} public signals = {rows} rows "
            f"need a domain of 2^{p}, but {why} (at most 2^{limit} rows here)"
        )
    return p


def setup(r1cs_path, zkey_path, vk_path=None, seed: bytes | None = None, threads: int = 0, progress: bool | None = None, window: int | None = None, log=None) -> SetupResult:
    """Write a Groth16 zkey (snarkjs layout) for `r1cs_path`; optionally its vk.json."""
    t_all = time.perf_counter()
    secs: dict[str, float] = {}
    hdr = read_r1cs_header(r1cs_path)
    curve = hdr.curve
    power = check_r1cs_size(r1cs_path, hdr)
    n = 1 << power
    m = hdr.n_constraints
    n_public = hdr.n_public
    n_vars = hdr.n_wires
    t0 = time.perf_counter()
    r1cs = read_r1cs(r1cs_path)
    secs["read_r1cs"] = time.perf_counter() - t0
    mod = native(curve)
    r = curve.r

    # toxic waste
    rng = _Rng(seed)
    omega_2n_pow_n = r - 1  # g^n for g = omega_2n
    if power == curve.two_adicity:  # snarkjs's prover uses the shift nqr^2 there
        omega_2n_pow_n = pow(curve.nqr * curve.nqr, n, r)
    while True:
        tau = rng.scalar(r)
        tn = pow(tau, n, r)
        if tn != 1 and tn != omega_2n_pow_n:
            break
    alpha, beta, delta = rng.scalar(r), rng.scalar(r), rng.scalar(r)
    # contribution record (proof-of-knowledge style values, see _contribution)
    s_pok = rng.scalar(r)

    t0 = time.perf_counter()
    mats = tuple((np.ascontiguousarray(M.row_ptr, dtype=np.int64), np.ascontiguousarray(M.wires, dtype=np.uint32), np.ascontiguousarray(M.coefs)) for M in r1cs.matrices)
    sc = mod.qap_eval(_fr_bytes(tau), _fr_bytes(alpha), _fr_bytes(beta), _fr_bytes(delta), power, n_vars, n_public, m, *mats, threads=threads)
    del mats
    secs["qap_eval"] = time.perf_counter() - t0

    g1b, g2b = g1_generator_bytes(curve), g2_generator_bytes(curve)
    n_g1 = (n_public + 1) + n + (n_vars - n_public - 1) + 2 * n_vars
    n_g2 = n_vars
    t0 = time.perf_counter()
    G1 = mod.FixedBaseG1(g1b, window or _pick_window(n_g1, 255), threads)
    G2 = mod.FixedBaseG2(g2b, window or _pick_window(n_g2, 255), threads)
    secs["tables"] = time.perf_counter() - t0
    sg1, sg2 = curve.g1_bytes, curve.g2_bytes

    def g1_points(scalars: list[int]) -> list[bytes]:
        out = bytearray(len(scalars) * sg1)
        G1.mul(_fr_array(scalars), out, threads)
        return [bytes(out[i * sg1 : (i + 1) * sg1]) for i in range(len(scalars))]

    def g2_points(scalars: list[int]) -> list[bytes]:
        out = bytearray(len(scalars) * sg2)
        G2.mul(_fr_array(scalars), out, threads)
        return [bytes(out[i * sg2 : (i + 1) * sg2]) for i in range(len(scalars))]

    alpha1, beta1, delta1 = g1_points([alpha, beta, delta])
    beta2, delta2 = g2_points([beta, delta])
    gamma2 = g2b

    cs_hash = _circuit_hash(r1cs_path, hdr)
    contribution = _contribution(curve, cs_hash, delta, s_pok, g1_points, g2_points)

    n_coefs = r1cs.a.nnz + r1cs.b.nnz + n_public + 1
    bar = _progress(n_g1 + n_g2, progress)
    t0 = time.perf_counter()
    try:
        with zw.ZkeyWriter(zkey_path) as w:
            w.section(1, zw.protocol_payload())
            w.section(2, zw.header_payload(curve, n_vars, n_public, n, alpha1, beta1, beta2, gamma2, delta1, delta2))
            w.begin_section(4, zw.coefs_size(n_coefs, curve.n8r))
            w.write(struct.pack("<I", n_coefs))
            for chunk in _coef_chunks(r1cs, n_public, mod, threads):
                w.write(chunk)
            w.end_section()
            del r1cs
            t1 = time.perf_counter()
            secs["coefs"] = t1 - t0
            for sid, key, fb, size, label in ((3, "ic", G1, sg1, "IC"), (9, "h", G1, sg1, "H"), (8, "c", G1, sg1, "C"), (5, "a", G1, sg1, "A"), (6, "b", G1, sg1, "B1"), (7, "b", G2, sg2, "B2")):
                scal = sc[key]
                cnt = scal.shape[0]
                bar.set_description(f"setup {label}")
                w.begin_section(sid, cnt * size)
                buf = bytearray(min(cnt, CHUNK) * size)
                for i in range(0, cnt, CHUNK):
                    k = min(CHUNK, cnt - i)
                    view = memoryview(buf)[: k * size]
                    fb.mul(scal[i : i + k], view, threads)
                    w.write(view)
                    bar.update(k)
                w.end_section()
                if key != "b" or sid == 7:
                    del sc[key]
                t2 = time.perf_counter()
                secs[f"points_{label}"] = t2 - t1
                t1 = t2
            w.section(10, zw.contributions_payload(cs_hash, [contribution]))
    finally:
        bar.close()
    secs["write_total"] = time.perf_counter() - t0

    vk_out = None
    if vk_path is not None:
        t0 = time.perf_counter()
        write_vk(zkey_path, vk_path)
        vk_out = str(vk_path)
        secs["vk"] = time.perf_counter() - t0
    secs["total"] = time.perf_counter() - t_all
    return SetupResult(curve.name, n_vars, n_public, m, n, str(zkey_path), vk_out, secs)


def write_vk(zkey_path, vk_path) -> None:
    z = read_zkey(zkey_path)
    try:
        vk = vk_json(z)
    finally:
        z.close()
    atomic_write_json(vk_path, vk)


def _circuit_hash(r1cs_path, hdr) -> bytes:
    """64-byte §10 csHash. NOT snarkjs's circuit hash (that one hashes the δ = 1
    key points); here: BLAKE2b-512 of a domain tag and the r1cs file."""
    h = hashlib.blake2b(b"snarkd setup circuit hash v1\0", digest_size=64)
    with open(r1cs_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.digest()


def _contribution(curve: Curve, cs_hash: bytes, delta: int, s: int, g1_points, g2_points) -> dict:
    """One §10 contribution recording this setup: deltaAfter = δ·G1 and a
    knowledge-of-δ record in snarkjs's shape (g1_s = s·G1, g1_sx = sδ·G1,
    g2_spx = δ·g2_sp with g2_sp = t·G2, t from the transcript). It satisfies
    e(g1_s, g2_spx) = e(g1_sx, g2_sp), but g2_sp is not snarkjs's hash-to-G2, so
    `snarkjs zkey verify` (which also needs the ptau) is not expected to pass."""
    r = curve.r
    delta_after, g1_s, g1_sx = g1_points([delta, s, s * delta % r])
    transcript = hashlib.blake2b(cs_hash + g1_s + g1_sx, digest_size=64).digest()
    t = int.from_bytes(hashlib.blake2b(b"snarkd g2_sp\0" + transcript, digest_size=64).digest(), "little") % r or 1
    (g2_spx,) = g2_points([t * delta % r])
    return {"delta_after": delta_after, "g1_s": g1_s, "g1_sx": g1_sx, "g2_spx": g2_spx, "transcript": transcript, "type": 0, "name": CONTRIBUTION_NAME}
