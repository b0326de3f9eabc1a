"""Witness -> evaluations of a·b − c on the odd coset of the 2n-th roots (snarkjs's QAP step).

snarkjs's H basis is the Lagrange basis of the 2n-domain at its odd points, so
the prover needs (a·b − c)(ω_{2n}^{2i+1}) for i < n: interpolate each of a, b
and c on the n-domain, shift coefficient j by ω_{2n}^j, and evaluate again.
No division by Z is needed: a·b − c vanishes on the even points.

Both steps take a SectionKey (snarkd.prover.types) and return native FrVectors:
no numpy on this path. Their callers time them (phases "spmv", "ntt" and "h").
"""

from __future__ import annotations


def sparse_products(key, witness_values, threads: int = 0):
    """a = A·w and b = B·w on the domain (Montgomery form), from the key's prepared
    sidecar when it has one (snarkd.prover.prepared), else from its coefs section
    (checked before its first use)."""
    if key.prepared is not None:
        try:
            ab = key.native.spmv_prepared(key.prepared.blocks, witness_values, key.domain_size, threads)
            key.done("prepared")
            return ab
        except ValueError as exc:  # arrays inconsistent: never use them
            key.drop_prepared(str(exc))
    key.use("coefs")
    ab = key.native.spmv_ab(key.section("coefs"), witness_values, key.domain_size, threads)
    key.done("coefs")
    return ab


def h_coset_values(key, a, b, threads: int = 0):
    """(plain, non-Montgomery scalars for the H MSM, one per domain point (an FrVector); the milliseconds of
    its last step, the H values).

    snarkjs never stores C: on the domain, c = a∘b for a satisfying witness. The
    native qap_h does the six transforms and the pointwise steps in one call and
    says how long its last step took (its caller reports it as the phase "h",
    apart from "ntt"). A key read once (a one-shot proof) gives a and b back as
    soon as they are read."""
    return key.native.qap_h(a, b, threads, release=key.read_once)
