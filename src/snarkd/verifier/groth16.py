"""Groth16 verification with snarkjs's semantics, on the native pairing.

    e(A, B) = e(α, β) · e(Σ pub_i·IC_i, γ) · e(C, δ)

is checked as one product of four Miller loops with one final exponentiation
(`snarkd.native._pairing`, a few ms a proof). Prepared verification keys
(their G2 line coefficients) are cached, so repeated proofs under one key
skip that work.

Semantics (those of `snarkjs groth16 verify`, except where noted):
- a public value ≥ r (or < 0) → False;
- a proof point off its curve → False; points are read as snarkjs reads them:
  Jacobian [X, Y, Z] (x = X/Z², y = Y/Z³), Z = 0 → the point at infinity;
- a proof point on its curve but outside the order-r subgroup → False.
  snarkjs checks only that points are on the curve; for such a point its
  pairing check then fails anyway (barring a crafted proof), so the answers
  agree, but snarkd rejects it before pairing (G1 of BLS12-381 and G2 of both
  curves have cofactors; BN254's G1 has none);
- a proof coordinate ≥ q or < 0 → False. snarkjs instead reduces it mod q (so
  x + q is read as x): snarkd treats such non-canonical encodings as invalid;
- input that is not a verification key, public list or proof at all (missing
  field, bad number, wrong public count, unknown curve, a key point off its
  curve) → `snarkd.errors.InputError`. Numbers are read as snarkjs reads them
  (ffjavascript's unstringifyBigInts): decimal-digit strings, `0x` hex strings
  and JSON integers. "0X.." (which snarkjs reads inconsistently), a JSON integer
  beyond 2^53 (which JavaScript would round) and any other string (signs,
  spaces, `_`) are bad input; so is JSON nested over 200 deep
  (snarkd.formats.json_text);
- a proof whose "protocol" is not "groth16", or whose "curve" is not the key's,
  is bad input (snarkjs ignores both fields and may accept it); so is a key
  whose "nPublic" disagrees with its IC, and a public list whose length is not
  nPublic (snarkjs uses the first len(public) IC points and may accept a short
  list whose missing values would be 0);
- verification-key points must be affine (z = 1, or 0 for infinity), as
  snarkjs exports them (its verifier misreads projective IC points); proof
  points may be Jacobian;
- curve names are matched as snarkjs matches them (case and punctuation
  ignored: bn128, bn254, alt_bn128; bls12381, bls12-381).

The differential fuzz test (tests/fuzz) runs snarkjs and this verifier on the
same mutated proofs and keys and holds every difference to this list.
"""

from __future__ import annotations

import os
import _thread  # the lock threading.Lock is, without the threading module's imports
from collections import OrderedDict, namedtuple

from snarkd.curves.params import BLS12_381, BN254, Curve
from snarkd.errors import InputError
from snarkd.native import _pairing

# status codes of snarkd.native._pairing.<curve>.groth16_verify
VERIFY_OK = 0
VERIFY_FAILED = 1
PROOF_NOT_ON_CURVE = 2
PROOF_NOT_IN_SUBGROUP = 3
PUBLIC_OUT_OF_RANGE = 4
VK_NOT_ON_CURVE = 5


_CURVE_NAMES = {"bn128": BN254, "bn254": BN254, "altbn128": BN254, "bls12381": BLS12_381}


class _NotCanonical(Exception):
    """A coordinate outside [0, q): the point is not a valid encoding."""


def native_for(curve: Curve):
    return getattr(_pairing, curve.native)


# JavaScript numbers are exact only below 2^53; snarkjs would read a larger JSON
# number as a rounded float, so such numbers are refused rather than guessed at.
_JS_SAFE = 1 << 53
_HEX_DIGITS = "0123456789abcdefABCDEF"
# A coordinate or public value has at most 116 decimal digits; far longer
# strings are not numbers of this verifier's fields (and would cost time to parse).
_MAX_DIGITS = 1000


def _int(value, where: str) -> int:
    """A number as snarkjs reads it: a JSON integer, a decimal-digit string or a 0x-hex string."""
    if isinstance(value, int) and not isinstance(value, bool):
        if -_JS_SAFE < value < _JS_SAFE:
            return value
        raise InputError(f"{where}: the JSON number {value} is too large to be exact in JavaScript; write it as a decimal string")
    if isinstance(value, str) and len(value) <= _MAX_DIGITS:
        # digits alone, by str methods: re (and enum, ~2 ms) stays out of a one-shot proof's imports
        if value.isascii() and value.isdigit():
            return int(value)
        digits = value[2:]
        if value.startswith("0x") and digits.isascii() and digits and not digits.strip(_HEX_DIGITS):  # lower-case x only, as unstringifyBigInts
            return int(digits, 16)
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise InputError(f"{where}: expected a decimal string, got {shown}")


def _curve(name, where: str) -> Curve:
    """snarkjs's getCurveFromName: case and punctuation do not count."""
    if not isinstance(name, str):
        raise InputError(f"{where}: curve must be a string, got {name!r}")
    norm = "".join(ch for ch in name.lower() if ch.isascii() and ch.isalnum())
    curve = _CURVE_NAMES.get(norm)
    if curve is None:
        raise InputError(f"{where}: unknown curve {name!r} (expected bn128 or bls12381)")
    return curve


def _mont(curve: Curve, v: int) -> bytes:
    return (v * curve.rq % curve.q).to_bytes(curve.n8q, "little")


class _NotAffine(Exception):
    """A key point given with Z other than 0 or 1."""


def _g1_bytes(curve: Curve, obj, where: str, affine: bool = False) -> bytes:
    """Affine Montgomery bytes (zkey layout) of a snarkjs JSON G1 point [X, Y, Z].
    affine=True (key points): Z must be 1 or 0, as snarkjs exports keys."""
    if not isinstance(obj, list) or len(obj) not in (2, 3):
        raise InputError(f"{where}: expected [x, y, z]")
    x, y, *z = (_int(v, where) for v in obj)
    z = z[0] if z else 1
    q = curve.q
    if min(x, y, z) < 0 or max(x, y, z) >= q:
        raise _NotCanonical(where)
    if z == 0:
        return bytes(2 * curve.n8q)
    if z != 1:
        if affine:
            raise _NotAffine(where)
        zi = pow(z, -1, q)
        zi2 = zi * zi % q
        x, y = x * zi2 % q, y * zi2 * zi % q
    if x == 0 and y == 0:
        # (0, 0) would read as infinity in the zkey layout; it is never on the curve
        return None
    return _mont(curve, x) + _mont(curve, y)


def _g2_bytes(curve: Curve, obj, where: str, affine: bool = False) -> bytes:
    if not isinstance(obj, list) or len(obj) not in (2, 3) or not all(isinstance(c, list) and len(c) == 2 for c in obj):
        raise InputError(f"{where}: expected [[x0, x1], [y0, y1], [z0, z1]]")
    coords = [[_int(v, where) for v in c] for c in obj]
    if len(coords) == 2:
        coords.append([1, 0])
    q = curve.q
    flat = [v for c in coords for v in c]
    if min(flat) < 0 or max(flat) >= q:
        raise _NotCanonical(where)
    (x0, x1), (y0, y1), (z0, z1) = coords
    if z0 == 0 and z1 == 0:
        return bytes(4 * curve.n8q)
    if (z0, z1) != (1, 0):
        if affine:
            raise _NotAffine(where)
        # Fq2 = Fq[u]/(u^2 + 1): 1/z = conj(z) / (z0^2 + z1^2)
        n = pow(z0 * z0 + z1 * z1, -1, q)
        zi = (z0 * n % q, -z1 * n % q)

        def mul(a, b):
            return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)

        zi2 = mul(zi, zi)
        x0, x1 = mul((x0, x1), zi2)
        y0, y1 = mul(mul((y0, y1), zi2), zi)
    if x0 == x1 == y0 == y1 == 0:
        return None
    return b"".join(_mont(curve, v) for v in (x0, x1, y0, y1))


def _field(obj: dict, key: str, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{where}: missing field {key!r}")
    return obj[key]


def _key_point(fn, curve, obj, where):
    """A verification-key point; InputError unless it is one. Key points must be
    affine (Z = 1, or 0 for infinity): snarkjs exports them so, and its verifier
    misreads projective IC points (it copies them into an affine buffer)."""
    try:
        b = fn(curve, obj, where, affine=True)
    except _NotAffine:
        raise InputError(f"{where}: a verification-key point must be affine (z = 1), as snarkjs exports it") from None
    except _NotCanonical:
        b = None
    if b is None:
        raise InputError(f"{where}: not a point of the curve {curve.name}")
    return b


_PREPARED: "OrderedDict[tuple, object]" = OrderedDict()
_PREPARED_MAX = 32
_PREPARED_LOCK = _thread.allocate_lock()


def _first_off_curve(curve: Curve, alpha1, beta2, gamma2, delta2, ic) -> str:
    """The name of the first key point off its curve (for the error message)."""
    m = native_for(curve)
    for name, pt, fn in (("vk_alpha_1", alpha1, m.g1_on_curve), ("vk_beta_2", beta2, m.g2_on_curve),
                         ("vk_gamma_2", gamma2, m.g2_on_curve), ("vk_delta_2", delta2, m.g2_on_curve)):
        if not fn(pt):
            return name
    n = m.G1_BYTES
    for i in range(len(ic) // n):
        if not m.g1_on_curve(ic[i * n : (i + 1) * n]):
            return f"IC[{i}]"
    return "?"


def prepared_vk(curve: Curve, alpha1, beta2, gamma2, delta2, ic, name: str = "verification key"):
    """The native PreparedVK for these key points (LRU-cached: a daemon verifies
    many proofs under one key; preparing costs ~3 G2 line precomputations).
    A key point off its curve is InputError naming `name` and the point."""
    key = (curve.name, *(bytes(memoryview(x).cast("B")) for x in (alpha1, beta2, gamma2, delta2, ic)))
    with _PREPARED_LOCK:
        pvk = _PREPARED.get(key)
        if pvk is not None:
            _PREPARED.move_to_end(key)
            return pvk
    pvk = native_for(curve).PreparedVK(*key[1:])
    if not pvk.valid:
        raise InputError(f"{name}.{_first_off_curve(curve, *key[1:])}: not a point of the curve {curve.name}")
    with _PREPARED_LOCK:
        _PREPARED[key] = pvk
        while len(_PREPARED) > _PREPARED_MAX:
            _PREPARED.popitem(last=False)
    return pvk


def verify_points(curve: Curve, alpha1, beta2, gamma2, delta2, ic, public: list[int], a, b, c,
                  vk_name: str = "verification key") -> bool:
    """Groth16 check on points already in the zkey layout (affine, LE Montgomery).

    alpha1/beta2/gamma2/delta2/a/b/c: bytes-like (or numpy arrays) of one point;
    ic: the n_public + 1 IC points concatenated; public: plain ints. For the
    prover's self-check. A key point off its curve raises InputError.
    """
    if any(v < 0 or v >= curve.r for v in public):
        return False
    pvk = prepared_vk(curve, alpha1, beta2, gamma2, delta2, ic, vk_name)
    if pvk.n_public != len(public):
        raise InputError(f"public: {len(public)} public values, but the key expects {pvk.n_public}")
    pubs = b"".join(v.to_bytes(curve.n8r, "little") for v in public)
    return pvk.verify(pubs, a, b, c) == VERIFY_OK


def proof_points(curve: Curve, proof: dict, proof_name: str = "proof"):
    """(a, b, c) in the zkey layout from a snarkjs proof object; (None, None, None)
    when a point has a coordinate outside [0, q) or is the affine (0, 0) (invalid
    proofs). A proof that is not one at all (missing field, bad number) is InputError."""
    if not isinstance(proof, dict):
        raise InputError(f"{proof_name}: expected a JSON object")
    raw = []
    for name, fn in (("pi_a", _g1_bytes), ("pi_b", _g2_bytes), ("pi_c", _g1_bytes)):
        obj = _field(proof, name, proof_name)
        try:
            raw.append(fn(curve, obj, f"{proof_name}.{name}"))
        except _NotCanonical:
            raw.append(None)
    if any(v is None for v in raw):
        return None, None, None
    return tuple(raw)


def _check_proof_labels(curve: Curve, proof, proof_name: str) -> None:
    """A proof that says it is of another protocol or curve is not this key's Groth16 proof.
    (snarkjs ignores both fields; snarkd refuses them: see the module docstring.)"""
    if not isinstance(proof, dict):
        raise InputError(f"{proof_name}: expected a JSON object")
    if "protocol" in proof and proof["protocol"] != "groth16":
        raise InputError(f"{proof_name}: protocol {proof['protocol']!r} is not groth16")
    if "curve" in proof and _curve(proof["curve"], f"{proof_name}.curve") is not curve:
        raise InputError(f"{proof_name}: curve {proof['curve']!r} does not match the key's {curve.name!r}")


class KeyPoints(namedtuple("KeyPoints", "curve alpha beta gamma delta ic n_public")):
    """A snarkjs verification key read once: its curve and its points (bytes) in the zkey layout. A named tuple,
    not a dataclass: see curves.params.Curve."""

    __slots__ = ()

    def prepared(self, name: str = "verification key"):
        return prepared_vk(self.curve, self.alpha, self.beta, self.gamma, self.delta, self.ic, name)


def _key_curve(vk: dict, vk_name: str) -> Curve:
    protocol = _field(vk, "protocol", vk_name)
    if protocol != "groth16":
        raise InputError(f"{vk_name}: protocol {protocol!r} is not supported (only groth16)")
    return _curve(_field(vk, "curve", vk_name), f"{vk_name}.curve")


def _key_ic(vk: dict, vk_name: str) -> list:
    ic = _field(vk, "IC", vk_name)
    if not isinstance(ic, list) or not ic:
        raise InputError(f"{vk_name}.IC: expected a non-empty list of G1 points")
    if "nPublic" in vk:
        n_public = vk["nPublic"]
        if isinstance(n_public, bool) or not isinstance(n_public, int) or n_public != len(ic) - 1:
            raise InputError(f"{vk_name}: nPublic {n_public!r} does not match its {len(ic)} IC points (nPublic + 1 expected)")
    return ic


def _key_points(vk: dict, curve: Curve, ic: list, vk_name: str) -> KeyPoints:
    alpha = _key_point(_g1_bytes, curve, _field(vk, "vk_alpha_1", vk_name), f"{vk_name}.vk_alpha_1")
    beta, gamma, delta = (
        _key_point(_g2_bytes, curve, _field(vk, name, vk_name), f"{vk_name}.{name}")
        for name in ("vk_beta_2", "vk_gamma_2", "vk_delta_2")
    )
    ic_bytes = b"".join(_key_point(_g1_bytes, curve, p, f"{vk_name}.IC[{i}]") for i, p in enumerate(ic))
    return KeyPoints(curve, alpha, beta, gamma, delta, ic_bytes, len(ic) - 1)


def read_key(vk: dict, vk_name: str = "vk") -> KeyPoints:
    """The key checks of `verify` (the same checks, messages and order), once for many proofs
    (snarkd.verifier.batch, snarkd.aggregate)."""
    curve = _key_curve(vk, vk_name)
    return _key_points(vk, curve, _key_ic(vk, vk_name), vk_name)


def read_publics(curve: Curve, n_public: int, public, pub_name: str) -> list[int] | None:
    """The public list as `verify` reads it: InputError if it is not one of n_public numbers;
    None if a value is outside [0, r) (an invalid proof)."""
    if not isinstance(public, list):
        raise InputError(f"{pub_name}: expected a JSON array of decimal strings")
    if len(public) != n_public:
        raise InputError(f"{pub_name}: {len(public)} public values, but the key expects {n_public}")
    pubs = [_int(v, f"{pub_name}[{i}]") for i, v in enumerate(public)]
    if any(v < 0 or v >= curve.r for v in pubs):
        return None
    return pubs


check_proof_labels = _check_proof_labels


def verify_on_sections(key, result) -> bool:
    """A prover's proof (`result`: its points as affine Montgomery bytes and its public values) against the
    verification data inside the key it was made with (`key.section`: a mapped or a loaded .zkey), with no JSON
    in between: the self-check of every proving path (the one-shot proof, the engine's). A key point off its
    curve (a damaged key) is a failed check, not an error."""
    try:
        return verify_points(key.curve, key.section("alpha1"), key.section("beta2"), key.section("gamma2"),
                             key.section("delta2"), key.section("ic"), [int(v) for v in result.public], *result.points)
    except InputError:
        return False


def verify(vk: dict, public: list, proof: dict, names: tuple[str, str, str] = ("vk", "public", "proof")) -> bool:
    """True iff `proof` is a valid Groth16 proof of `public` under `vk` (snarkjs JSON objects)."""
    vk_name, pub_name, proof_name = names
    curve = _key_curve(vk, vk_name)
    _check_proof_labels(curve, proof, proof_name)
    if not isinstance(public, list):
        raise InputError(f"{pub_name}: expected a JSON array of decimal strings")
    ic = _key_ic(vk, vk_name)
    if len(ic) != len(public) + 1:
        raise InputError(f"{pub_name}: {len(public)} public values, but the key expects {len(ic) - 1}")
    pubs = [_int(v, f"{pub_name}[{i}]") for i, v in enumerate(public)]
    if any(v < 0 or v >= curve.r for v in pubs):
        return False
    return _verify_read(_key_points(vk, curve, ic, vk_name), pubs, proof, proof_name, vk_name)


def verify_with_key(key: KeyPoints, public: list, proof: dict,
                    names: tuple[str, str, str] = ("vk", "public", "proof")) -> bool:
    """`verify` with the key read already (read_key): the engine's self-check of each proof it makes (the JSON that
    leaves, checked as snarkjs reads it), without reading the key's points from its JSON every time."""
    vk_name, pub_name, proof_name = names
    _check_proof_labels(key.curve, proof, proof_name)
    pubs = read_publics(key.curve, key.n_public, public, pub_name)
    return pubs is not None and _verify_read(key, pubs, proof, proof_name, vk_name)


def _verify_read(k: KeyPoints, pubs: list[int], proof: dict, proof_name: str, vk_name: str) -> bool:
    a, b, c = proof_points(k.curve, proof, proof_name)
    if a is None:
        return False
    return verify_points(k.curve, k.alpha, k.beta, k.gamma, k.delta, k.ic, pubs, a, b, c, vk_name=vk_name)


def load_json(path: str | os.PathLike, what: str):
    """A JSON file, or InputError naming the file (missing, not a file, too big, not JSON). (os.PathLike, not
    pathlib's Path: pathlib and urllib.parse, ~5-10 ms, are not imported by a plain `snarkd prove`.)"""
    from snarkd.formats import json_text  # here: it imports numpy, which the prover's self-check does without

    return json_text.load(path, what)


def parse_json(data: bytes, name: str, what: str):
    """JSON text as JavaScript's JSON.parse reads it (strict UTF-8, no BOM, no
    NaN/Infinity), nesting bounded before parsing; InputError naming `name`."""
    from snarkd.formats import json_text

    return json_text.loads(data, name, what)


def verify_files(vk_path, public_path, proof_path) -> bool:
    vk = load_json(vk_path, "verification key")
    public = load_json(public_path, "public signals")
    proof = load_json(proof_path, "proof")
    return verify(vk, public, proof, names=(str(vk_path), str(public_path), str(proof_path)))
