"""Reference Groth16 verifier on py_ecc (pure Python, ~seconds per proof): a test oracle and a benchmark
baseline (bench/verify_bench.py), kept out of the package (py_ecc is a test dependency); `snarkd.verifier.verify`
is the native implementation. Same input semantics as the native verifier,
minus the subgroup checks.

A proof is *invalid* (False) when snarkjs would say so: a public value ≥ r,
a proof point off its curve, or a failed pairing equation. Input that is not
a verification key, public list or proof at all is an `InputError`.

    e(A, B) = e(α, β) · e(Σ pub_i·IC_i, γ) · e(C, δ)

checked as one product of four Miller loops with one final exponentiation.
"""

from __future__ import annotations

import py_ecc.optimized_bls12_381
import py_ecc.optimized_bn128

from snarkd.curves.params import Curve, curve_by_name
from snarkd.errors import InputError


def _backend(curve: Curve):
    return py_ecc.optimized_bn128 if curve.name == "bn128" else py_ecc.optimized_bls12_381


def _int(value, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0) if value.startswith(("0x", "0X")) else int(value)
        except ValueError:
            pass
    raise InputError(f"{where}: expected a decimal string, got {value!r}")


def _g1(ecc, curve: Curve, obj, where: str):
    """Projective (py_ecc) point from snarkjs JSON [x, y, z]; None if not in Fq or off-curve."""
    if not isinstance(obj, list) or len(obj) != 3:
        raise InputError(f"{where}: expected [x, y, z]")
    x, y, z = (_int(v, where) for v in obj)
    if max(x, y, z) >= curve.q:
        return None
    if z == 0:
        return ecc.Z1
    zi = pow(z, -1, curve.q)  # Jacobian, as snarkjs: x = X/Z^2, y = Y/Z^3
    p = (ecc.FQ(x * zi * zi), ecc.FQ(y * zi * zi * zi), ecc.FQ.one())
    return p if ecc.is_on_curve(p, ecc.b) else None


def _g2(ecc, curve: Curve, obj, where: str):
    if not isinstance(obj, list) or len(obj) != 3 or not all(isinstance(c, list) and len(c) == 2 for c in obj):
        raise InputError(f"{where}: expected [[x0, x1], [y0, y1], [z0, z1]]")
    coords = [[_int(v, where) for v in c] for c in obj]
    if max(max(c) for c in coords) >= curve.q:
        return None
    x, y, z = (ecc.FQ2(c) for c in coords)
    if z == ecc.FQ2.zero():
        return ecc.Z2
    zi = ecc.FQ2.one() / z
    p = (x * zi * zi, y * zi * zi * zi, ecc.FQ2.one())
    return p if ecc.is_on_curve(p, ecc.b2) else None


def _field(obj: dict, key: str, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{where}: missing field {key!r}")
    return obj[key]


def verify_reference(vk: dict, public: list, proof: dict, names: tuple[str, str, str] = ("vk", "public", "proof")) -> bool:
    vk_name, pub_name, proof_name = names
    protocol = _field(vk, "protocol", vk_name)
    if protocol != "groth16":
        raise InputError(f"{vk_name}: protocol {protocol!r} is not supported (only groth16)")
    try:
        curve = curve_by_name(str(_field(vk, "curve", vk_name)))
    except ValueError as exc:
        raise InputError(f"{vk_name}: {exc}") from None
    if "curve" in proof and proof.get("curve") not in (None, curve.name):
        raise InputError(f"{proof_name}: curve {proof.get('curve')!r} does not match the key's {curve.name!r}")
    ecc = _backend(curve)
    if not isinstance(public, list):
        raise InputError(f"{pub_name}: expected a JSON array of decimal strings")
    ic = _field(vk, "IC", vk_name)
    if not isinstance(ic, list) or len(ic) != len(public) + 1:
        n = len(ic) - 1 if isinstance(ic, list) else "?"
        raise InputError(f"{pub_name}: {len(public)} public values, but the key expects {n}")
    pubs = [_int(v, f"{pub_name}[{i}]") for i, v in enumerate(public)]
    if any(v < 0 or v >= curve.r for v in pubs):
        return False

    key_points = {}
    for name in ("vk_alpha_1",):
        key_points[name] = _g1(ecc, curve, _field(vk, name, vk_name), f"{vk_name}.{name}")
    for name in ("vk_beta_2", "vk_gamma_2", "vk_delta_2"):
        key_points[name] = _g2(ecc, curve, _field(vk, name, vk_name), f"{vk_name}.{name}")
    ic_points = [_g1(ecc, curve, p, f"{vk_name}.IC[{i}]") for i, p in enumerate(ic)]
    if any(p is None for p in [*key_points.values(), *ic_points]):
        raise InputError(f"{vk_name}: a key point is not on the curve {curve.name}")

    a = _g1(ecc, curve, _field(proof, "pi_a", proof_name), f"{proof_name}.pi_a")
    b = _g2(ecc, curve, _field(proof, "pi_b", proof_name), f"{proof_name}.pi_b")
    c = _g1(ecc, curve, _field(proof, "pi_c", proof_name), f"{proof_name}.pi_c")
    if a is None or b is None or c is None:
        return False

    cpub = ic_points[0]
    for v, p in zip(pubs, ic_points[1:]):
        if v:
            cpub = ecc.add(cpub, ecc.multiply(p, v))

    # e(−A, B)·e(α, β)·e(cpub, γ)·e(C, δ) == 1
    pairs = [(b, ecc.neg(a)), (key_points["vk_beta_2"], key_points["vk_alpha_1"]), (key_points["vk_gamma_2"], cpub), (key_points["vk_delta_2"], c)]
    acc = ecc.FQ12.one()
    for q, p in pairs:
        acc = acc * ecc.pairing(q, p, final_exponentiate=False)
    return ecc.final_exponentiate(acc) == ecc.FQ12.one()
