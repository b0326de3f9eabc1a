"""snarkd verify against snarkjs groth16.verify on the same texts, and the known differences.

`snarkjs_verify(cases)` runs snarkjs_verify.mjs once over a batch (the harness
asks every disagreement again in a process of its own: snarkjs's answer can
depend on the malformed cases before it in one process). `compare`
pairs the answers: they agree when both accept, or both reject (snarkjs's
false or exception; snarkd's exit 1 or bad input). A case snarkd accepts and
snarkjs rejects is always a finding. A case snarkjs accepts and snarkd rejects
must fall in one of the deliberate differences documented in
snarkd.verifier.groth16 (and docs/cli.md, "Verification: where snarkd is stricter
than snarkjs"); `classify` names which, and an unexplained one is a finding.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import tempfile
from pathlib import Path

from snarkd.formats.json_text import MAX_JSON_DEPTH, bracket_depth

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

_DEC = re.compile(r"[0-9]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_SAFE = 1 << 53


def snarkjs_verify(cases: list[dict[str, bytes]], batch: int = 400) -> list[str]:
    """'valid' | 'invalid' | 'error' from snarkjs for each {vk, public, proof} of file bytes."""
    out: list[str] = []
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
            for c in chunk:
                # Buffer -> utf8 string in node, as the snarkjs CLI reads files (bad bytes -> U+FFFD)
                fh.write(json.dumps({k: base64.b64encode(v).decode() for k, v in c.items()}) + "\n")
            name = fh.name
        try:
            proc = subprocess.run(["node", str(HERE / "snarkjs_verify.mjs"), name], capture_output=True,
                                  text=True, cwd=REPO, timeout=600)
        finally:
            Path(name).unlink()
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        if proc.returncode != 0 or len(lines) != len(chunk):
            raise RuntimeError(f"snarkjs_verify.mjs failed ({proc.returncode}): {proc.stderr[-2000:]}")
        out += [json.loads(ln)["r"] for ln in lines]
    return out


def _load(b: bytes):
    try:
        return json.loads(b.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def _numbers(obj):
    if isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        yield obj


def _js_number_ok(v) -> bool:
    """Read by snarkd exactly as snarkjs reads it."""
    if isinstance(v, float):
        return False  # JSON 5.0 or 1e3: snarkjs may take it, snarkd wants integers
    if isinstance(v, int):
        return -_SAFE < v < _SAFE
    return len(v) <= 1000 and bool(_DEC.match(v) or _HEX.match(v))


def _to_int(v) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if not isinstance(v, str):
        return None
    try:
        return int(v, 16) if _HEX.match(v) else int(v)
    except ValueError:
        return None


def _curve_name(name) -> str | None:
    if not isinstance(name, str):
        return None
    norm = "".join(ch for ch in name.lower() if ch.isascii() and ch.isalnum())
    return {"bn128": "bn128", "bn254": "bn128", "altbn128": "bn128", "bls12381": "bls12381"}.get(norm)


def _coerced(v, depth: int) -> bool:
    """A non-number (list, bool, null, object) where a number belongs: `depth`
    list levels above the numbers (public: 1 -> its elements; G1: 1; G2: 2)."""
    if not isinstance(v, list):
        return False
    for e in v:
        if depth <= 1:
            if not (isinstance(e, (str, int, float)) and not isinstance(e, bool)):
                return True
        elif _coerced(e, depth - 1) or not isinstance(e, list):
            return True
    return False


def classify(texts: dict[str, bytes], q: int) -> str:
    """Which deliberate difference explains 'snarkjs accepts, snarkd rejects' here."""
    for name in ("vk", "public", "proof"):
        try:
            texts[name].decode("utf-8")
        except UnicodeDecodeError:
            return "not_utf8"  # snarkjs reads bad bytes as U+FFFD
    if any(bracket_depth(texts[n], MAX_JSON_DEPTH) > MAX_JSON_DEPTH for n in ("vk", "public", "proof")):
        return "json_too_deep"  # snarkd reads at most MAX_JSON_DEPTH levels; JSON.parse goes deeper
    vk, public, proof = (_load(texts[n]) for n in ("vk", "public", "proof"))
    if not isinstance(vk, dict) or not isinstance(proof, dict):
        return "unexplained"
    if vk.get("protocol") != "groth16":
        return "vk_protocol"  # snarkjs's groth16.verify does not read it
    if "protocol" in proof and proof["protocol"] != "groth16":
        return "proof_protocol"
    if "curve" in proof and _curve_name(proof["curve"]) != _curve_name(vk.get("curve")):
        return "proof_curve"  # snarkjs ignores proof.curve; snarkd checks it against the key
    if not isinstance(public, list):
        return "public_not_list"  # snarkjs reads a non-array public.json as no public values
    ic = vk.get("IC")
    n_public = vk.get("nPublic")
    if isinstance(ic, list) and "nPublic" in vk and (type(n_public) is not int or n_public != len(ic) - 1):
        return "vk_npublic"  # snarkjs ignores nPublic; snarkd wants the integer len(IC) - 1
    if isinstance(ic, list) and len(public) < len(ic) - 1:
        return "public_short"  # snarkjs uses the first len(public) IC points
    fields = [proof.get("pi_a"), proof.get("pi_b"), proof.get("pi_c")]
    key_fields = [vk.get(k) for k in ("vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2")] + (ic if isinstance(ic, list) else [])
    g2 = [proof.get("pi_b")] + [vk.get(k) for k in ("vk_beta_2", "vk_gamma_2", "vk_delta_2")]
    if _coerced(public, 1) or any(_coerced(pt, 2 if pt in g2 else 1) for pt in fields + key_fields):
        return "js_coercion"  # BigInt(["5"]) is 5n and BigInt(true) is 1n in JavaScript
    if any(not _js_number_ok(v) for v in _numbers([public, fields, key_fields])):
        return "number_syntax"  # signs, spaces, big JSON numbers: BigInt() in snarkjs reads some of them
    for pt in fields + key_fields:
        if isinstance(pt, list) and len(pt) not in (2, 3):
            return "point_length"  # snarkjs ignores coordinates past the third
        if isinstance(pt, list) and pt and isinstance(pt[0], list) and any(isinstance(c, list) and len(c) != 2 for c in pt):
            return "point_length"
    for pt in key_fields:
        if isinstance(pt, list) and len(pt) == 3 and [_to_int(v) for v in _numbers([pt[2]])] not in ([1], [0], [1, 0], [0, 0]):
            return "vk_point_not_affine"
    vals = [_to_int(v) for v in _numbers([fields, key_fields])]
    if any(v is not None and (v < 0 or v >= q) for v in vals):
        return "coordinate_not_below_q"  # snarkjs reduces mod q
    for pt in fields + key_fields:
        if isinstance(pt, list) and len(pt) == 3 and not isinstance(pt[0], list):
            x, y, z = (_to_int(v) for v in pt)
            if x == 0 and y == 0 and z not in (0, None):
                return "affine_zero_as_infinity"  # ffjavascript reads affine (0, 0) as the point at infinity
    return "unexplained"


def compare(ours: str, theirs: str) -> str:
    """'agree', 'snarkd_only_accepts' (a finding) or 'snarkjs_only_accepts' (to classify)."""
    if (ours == "valid") == (theirs == "valid"):
        return "agree"
    return "snarkd_only_accepts" if ours == "valid" else "snarkjs_only_accepts"
