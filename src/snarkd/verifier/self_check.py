"""The prover's self-check: verify a fresh proof against the key's own verification data.

A damaged key (a truncated download, bit rot) or a witness that does not satisfy
the circuit (made for another circuit of the same size, edited values) still
yields a well-formed proof.json; only a verifier can tell it is worthless. The
check costs one native pairing product (milliseconds), so `snarkd prove` runs it
before writing anything. When it fails, `SelfCheckError` (exit 4) names the
likely cause: a key point off its curve is looked for in every section (cheap,
no subgroup test); if none is found, the witness is the likelier culprit, and
`snarkd check KEY CIRCUIT.r1cs WITNESS.wtns` tells the two apart for sure.
"""

from __future__ import annotations

from snarkd.errors import EXIT_INTERNAL, InputError, SnarkdError
from snarkd.formats.zkey import HEADER_POINTS, ZKey
from snarkd.verifier.groth16 import proof_points, verify_points
from snarkd.verifier.key_check import POINT_SECTIONS, check_key_points


class SelfCheckError(SnarkdError):
    """A proof that did not verify against its own key: nothing was written."""

    kind = "self_check"
    exit_code = EXIT_INTERNAL
    meaning = "a proof that did not verify against its own key (nothing written): the message names the likely cause"


def _damage(zkey: ZKey, threads: int) -> str | None:
    """The first key point found off its curve, as 'section X: point i ...', or None."""
    for res in check_key_points(zkey, subgroup=False, threads=threads):
        if not res.ok:
            return f"{zkey.path}, section {res.section}: {res.problem}"
    return None


def verify_against_key(zkey: ZKey, proof: dict, public: list[str], witness_name: str = "the witness", threads: int = 0) -> None:
    """Return if `proof` verifies under the key's vk (alpha1, beta2, gamma2, delta2, IC); else SelfCheckError."""
    curve = zkey.curve
    try:
        a, b, c = proof_points(curve, proof)
        ok = a is not None and verify_points(curve, zkey.alpha1, zkey.beta2, zkey.gamma2, zkey.delta2, zkey.ic,
                                             [int(v) for v in public], a, b, c)
    except InputError:  # a key point off its curve: the verification key itself is damaged
        ok = False
    if ok:
        return
    damage = _damage(zkey, threads)
    head = f"self-check failed: the proof does not verify against the verification key inside {zkey.path}; nothing was written. "
    if damage:
        raise SelfCheckError(head + f"Cause: the key is damaged ({damage}); get a fresh copy of the key.")
    raise SelfCheckError(
        head + f"Likely cause: {witness_name} does not satisfy the circuit (a witness made for another circuit "
        f"of the same size, or edited values), or the key is damaged in a way that leaves its points on the curve "
        f"(a truncated download, bit rot). `snarkd check {zkey.path} CIRCUIT.r1cs WITNESS.wtns` tells which."
    )


class _SectionsAsZKey:
    """A key mapped for one proof (prover/mapped.MappedKey: sections by name) as verify_against_key reads a ZKey:
    numpy views of the same buffers, so that the diagnosis of a failed one-shot self-check reads the key's file
    no second time."""

    def __init__(self, key):
        import numpy as np

        self.curve, self.path = key.curve, key.path
        limbs = key.curve.n8q // 8
        for name, _ in HEADER_POINTS:
            setattr(self, name, np.frombuffer(key.section(name), dtype="<u8"))
        for _, _, name, g in POINT_SECTIONS:
            setattr(self, name, np.frombuffer(key.section(name), dtype="<u8").reshape(-1, 2 * g * limbs))


def verify_against_sections(key, proof: dict, public: list[str], witness_name: str = "the witness",
                            threads: int = 0) -> None:
    """verify_against_key for a key given by its sections (a one-shot proof's MappedKey)."""
    view = _SectionsAsZKey(key)
    try:
        verify_against_key(view, proof, public, witness_name, threads)
    finally:
        view.__dict__.clear()  # the views let go before the key's buffers are released
