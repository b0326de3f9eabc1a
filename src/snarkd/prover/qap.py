"""Witness -> evaluations of a·b − c on the odd coset of the 2n-th roots (snarkjs's QAP step).

snarkjs's H basis is the Lagrange basis of the 2n-domain at its odd points, so
the prover needs (a·b − c)(ω_{2n}^{2i+1}) for i < n: interpolate each of a, b
and c on the n-domain, shift coefficient j by ω_{2n}^j, and evaluate again.
No division by Z is needed: a·b − c vanishes on the even points, and snarkjs
never stores C: on the domain, c = a∘b for a satisfying witness.

Two steps: `sparse_products` (a = A·w, b = B·w: here) and the H values, one
native call (`qap_h`: the six transforms and the pointwise steps; it says how
long its last step, the H values, took) that the CPU backend makes itself
(prover/cpu.py; a GPU computes them on the device). Both take a SectionKey
(snarkd.prover.types) and give native FrVectors: no numpy on this path. Their
callers time them (phases "spmv", "ntt" and "h").
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

