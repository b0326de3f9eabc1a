"""What an aggregate is about: the verification key (its points and digest), the n public-input
rows, and the proofs' points, read from snarkjs JSON objects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from snarkd.curves.params import Curve
from snarkd.errors import InputError
from snarkd.verifier.groth16 import _int, check_proof_labels, proof_points, read_key, read_publics


@dataclass(frozen=True)
class VerifyingKey:
    curve: Curve
    alpha: bytes
    beta: bytes
    gamma: bytes
    delta: bytes
    ic: tuple[bytes, ...]

    @property
    def n_public(self) -> int:
        return len(self.ic) - 1

    @property
    def digest(self) -> bytes:
        return hashlib.sha256(b"snarkd/groth16-vk/v1" + self.curve.name.encode() + self.alpha + self.beta + self.gamma
                              + self.delta + b"".join(self.ic)).digest()


def read_vk(vk: dict, name: str) -> VerifyingKey:
    """The key as `snarkd verify` reads it (verifier.groth16.read_key: the same checks and messages)."""
    k = read_key(vk, name)
    size = len(k.alpha)
    return VerifyingKey(k.curve, k.alpha, k.beta, k.gamma, k.delta,
                        tuple(k.ic[i : i + size] for i in range(0, len(k.ic), size)))


def read_public(vk: VerifyingKey, public, name: str) -> list[int]:
    """The public list as `snarkd verify` reads it (verifier.groth16.read_publics); a value outside [0, r) is bad
    input here: an aggregate states its public inputs."""
    values = read_publics(vk.curve, vk.n_public, public, name)
    if values is None:
        i = next(i for i, v in enumerate(public) if not 0 <= _int(v, f"{name}[{i}]") < vk.curve.r)
        raise InputError(f"{name}[{i}]: {public[i]} is not below the scalar field modulus")
    return values


def read_proof(vk: VerifyingKey, proof, name: str) -> tuple[bytes, bytes, bytes]:
    from snarkd.aggregate.group import Group

    check_proof_labels(vk.curve, proof, name)
    a, b, c = proof_points(vk.curve, proof, name)
    G = Group(vk.curve)
    if a is None or G.core.g1_first_not_on_curve(a + c) >= 0 or G.core.g2_first_not_on_curve(b) >= 0:
        raise InputError(f"{name}: a proof point is not a point of {vk.curve.name} (not a valid proof)")
    return a, b, c


def read_proofs(vk: VerifyingKey, rows) -> tuple[list[list[int]], bytes, bytes, bytes]:
    """(public rows, A, B, C concatenated) of the proofs to aggregate: rows of (public, proof, public's name,
    proof's name), in order, each read by read_public / read_proof."""
    public, a, b, c = [], [], [], []
    for pub, proof, pub_name, proof_name in rows:
        public.append(read_public(vk, pub, pub_name))
        pa, pb, pc = read_proof(vk, proof, proof_name)
        a.append(pa)
        b.append(pb)
        c.append(pc)
    return public, b"".join(a), b"".join(b), b"".join(c)
