"""Batch verification of many Groth16 proofs of one verification key.

    verify_batch(vk, [(public, proof), ...]) -> BatchResult(bad=[indices])

The proofs' equations are checked as one random linear combination (one
multi-pairing: a Miller loop per proof plus three for the key's fixed G2
points, one final exponentiation; snarkd.native._pairing ProofBatch, see
native/pairing/batch_verify.hpp for the equation and its soundness). When the
combination fails, the bad proofs are found by bisection: each half is its own
combination; a half that passes is done, and every proof named bad has failed a
check of its own (a one-proof check is exact), so a valid proof is never named.

Semantics are the single verifier's (snarkd.verifier.groth16, its docstring):
a proof that `verify` calls invalid (coordinates >= q, points off the curve or
outside the subgroup, a public value >= r, a failed pairing equation) is named
bad; input that `verify` refuses as bad input (a malformed key, public list or
proof, a wrong public count, another protocol or curve) raises InputError
naming its file, for the whole batch (one refusal: the batch is bad input).
One difference of order: the key is read before any proof, so a malformed key
is InputError even where `verify` would first find a public value >= r.

The coefficients are 128-bit values from the OS CSPRNG (`secrets`): a batch
containing an invalid proof passes only if the coefficients satisfy one
nonzero linear equation mod r, probability <= 2^-128, the usual security
level for BN254/BLS12-381 (whose discrete logs cost ~2^100-2^128 anyway);
wider coefficients would lengthen every scalar multiplication for no gain.
"""

from __future__ import annotations

import secrets
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from snarkd.verifier import groth16
from snarkd.verifier.groth16 import VERIFY_OK, load_json

COEFF_BYTES = 16  # 128-bit coefficients: see the module docstring


@dataclass
class BatchResult:
    n: int
    bad: list[int] = field(default_factory=list)  # indices of the invalid proofs, ascending
    checks: int = 0  # random-linear-combination checks run (1 when all are valid)

    @property
    def valid(self) -> bool:
        return not self.bad


def verify_batch(vk: dict, items: Sequence[tuple[list, dict]], names: Sequence[tuple[str, str]] | None = None,
                 vk_name: str = "vk", threads: int = 0) -> BatchResult:
    """Check the (public, proof) pairs (snarkjs JSON objects) under `vk`.
    names: (public name, proof name) per item for error messages (default public[i], proof[i])."""
    key = groth16.read_key(vk, vk_name)
    curve, n = key.curve, len(items)
    result = BatchResult(n=n)
    if n == 0:
        return result
    pvk = key.prepared(vk_name)

    # Python reads each proof exactly as `verify` does (labels, numbers, canonical coordinates);
    # the point checks and all curve arithmetic are native, in parallel.
    pubs, a, b, c, index = [], [], [], [], []
    n8r = curve.n8r
    for i, (public, proof) in enumerate(items):
        pub_name, proof_name = names[i] if names is not None else (f"public[{i}]", f"proof[{i}]")
        groth16.check_proof_labels(curve, proof, proof_name)
        values = groth16.read_publics(curve, key.n_public, public, pub_name)
        if values is None:
            result.bad.append(i)
            continue
        pa, pb, pc = groth16.proof_points(curve, proof, proof_name)
        if pa is None:
            result.bad.append(i)
            continue
        pubs.extend(v.to_bytes(n8r, "little") for v in values)
        a.append(pa)
        b.append(pb)
        c.append(pc)
        index.append(i)

    if index:
        coeffs = secrets.token_bytes(COEFF_BYTES * len(index))
        batch = pvk.batch(b"".join(pubs), b"".join(a), b"".join(b), b"".join(c), coeffs, threads)
        status = batch.status
        usable = array("I", (k for k in range(len(index)) if status[k] == VERIFY_OK))
        result.bad.extend(index[k] for k in range(len(index)) if status[k] != VERIFY_OK)

        def check(idx: array) -> bool:
            result.checks += 1
            return batch.check(pvk, idx, threads)

        found: list[int] = []
        if usable:
            _bisect(check, usable, False, found)
        result.bad.extend(index[k] for k in found)
    result.bad.sort()
    return result


def _bisect(check, idx: array, known_bad: bool, found: list[int]) -> None:
    """Append to `found` the proofs of idx that fail. known_bad: idx is known to hold one
    (its parent failed and its sibling passed), so its own combined check is skipped; a
    single proof is always checked itself, so no proof is named on inference alone."""
    if len(idx) == 1:
        if not check(idx):
            found.append(idx[0])
        return
    if not known_bad and check(idx):
        return
    half = len(idx) // 2
    left, right = idx[:half], idx[half:]
    if len(left) > 1 and check(left):  # the bad ones are all on the right
        _bisect(check, right, True, found)
    else:  # the left failed (a single proof is checked by the call itself)
        _bisect(check, left, True, found)
        _bisect(check, right, False, found)


def verify_batch_files(vk_path, pairs: Sequence[tuple[str | Path, str | Path]], threads: int = 0) -> BatchResult:
    """verify_batch over files: InputError naming the file for any malformed one."""
    vk = load_json(vk_path, "verification key")
    items, names = [], []
    for public_path, proof_path in pairs:
        items.append((load_json(public_path, "public signals"), load_json(proof_path, "proof")))
        names.append((str(public_path), str(proof_path)))
    return verify_batch(vk, items, names=names, vk_name=str(vk_path), threads=threads)
