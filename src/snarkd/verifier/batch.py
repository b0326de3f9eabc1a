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

The coefficients come from the OS CSPRNG (`secrets`), 128 random bits each (as a + b*lambda
mod r with 64-bit a, b: 2^128 distinct values, and r_i A_i costs 64 doublings; see
native/pairing/batch_verify.hpp): a batch containing an invalid proof passes only if the
coefficients satisfy one nonzero linear equation mod r, probability <= 2^-128, the usual
security level for BN254/BLS12-381 (whose discrete logs cost ~2^100-2^128 anyway); wider
coefficients would lengthen every scalar multiplication for no gain.
"""

from __future__ import annotations

import secrets
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from snarkd.native._pairing import BATCH_CHUNK as CHUNK  # pairs per shared Miller loop in the native check
from snarkd.native._pairing import BATCH_NOT_PARSED as NOT_PARSED
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

    # Proofs as snarkjs writes them (decimal strings) go to the native core as text: it parses,
    # checks and randomizes them in parallel. Anything else (hex or JSON numbers, a missing field,
    # a wrong shape) and any proof the native parser refuses is read by the single verifier
    # itself, so its answers and messages are exactly `verify`'s.
    lines, index, slow = [], [], []
    for i, (public, proof) in enumerate(items):
        groth16.check_proof_labels(curve, proof, _names(names, i)[1])
        line = _text_line(public, proof, key.n_public)
        if line is None:
            slow.append(i)
        else:
            lines.append(line)
            index.append(i)

    found: list[int] = []
    if index:
        coeffs = secrets.token_bytes(COEFF_BYTES * len(index))
        batch = pvk.batch_text("\n".join(lines).encode("ascii", "replace"), len(index), coeffs, threads)
        status = batch.status
        usable = array("I")
        for k, st in enumerate(status):
            if st == VERIFY_OK:
                usable.append(k)
            elif st == NOT_PARSED:
                slow.append(index[k])
            else:
                result.bad.append(index[k])

        def check(idx: array) -> bool:
            result.checks += 1
            return batch.check(pvk, idx, threads)

        if usable:
            _bisect(check, usable, False, found)
    result.bad.extend(index[k] for k in found)
    for i in sorted(slow):
        public, proof = items[i]
        pub_name, proof_name = _names(names, i)
        if not groth16.verify(vk, public, proof, names=(vk_name, pub_name, proof_name)):
            result.bad.append(i)
    result.bad.sort()
    return result


def _names(names, i: int) -> tuple[str, str]:
    return names[i] if names is not None else (f"public[{i}]", f"proof[{i}]")


def _text_line(public, proof, n_public: int) -> str | None:
    """The proof's coordinates and public values as one line for PreparedVK.batch_text, or None
    when it is not plainly strings in snarkjs's shapes (the single verifier then reads it)."""
    if type(public) is not list or len(public) != n_public or type(proof) is not dict:
        return None
    a, b, c = proof.get("pi_a"), proof.get("pi_b"), proof.get("pi_c")
    if type(a) is not list or type(b) is not list or type(c) is not list:
        return None
    if len(a) == 2:
        a = [*a, "1"]
    if len(c) == 2:
        c = [*c, "1"]
    if len(b) == 2:
        b = [*b, ["1", "0"]]
    if len(a) != 3 or len(c) != 3 or len(b) != 3:
        return None
    b0, b1, b2 = b
    if type(b0) is not list or type(b1) is not list or type(b2) is not list or not len(b0) == len(b1) == len(b2) == 2:
        return None
    try:
        line = ",".join((*a, *b0, *b1, *b2, *c, *public))
    except TypeError:  # a value that is not a string
        return None
    if "\n" in line or not line.isascii():
        return None
    return line


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
    if half > CHUNK:  # halves on the native check's chunk boundaries: their Miller loops are reused
        half -= half % CHUNK
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
