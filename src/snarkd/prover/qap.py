"""Witness -> evaluations of a·b − c on the odd coset of the 2n-th roots (snarkjs's QAP step).

snarkjs's H basis is the Lagrange basis of the 2n-domain at its odd points, so
the prover needs (a·b − c)(ω_{2n}^{2i+1}) for i < n: interpolate each of a, b
and c on the n-domain, shift coefficient j by ω_{2n}^j, and evaluate again.
No division by Z is needed: a·b − c vanishes on the even points.
"""

from __future__ import annotations

import time

import numpy as np

from snarkd.prover.proving_key import ProvingKey
from snarkd.prover.timing import PhaseTimer


def sparse_products(key: ProvingKey, witness_values: np.ndarray, timer: PhaseTimer, threads: int = 0):
    """a = A·w and b = B·w on the domain (Montgomery form), from the key's prepared
    sidecar when it has one (snarkd.prover.prepared), else from its coefs section."""
    with timer.phase("spmv"):
        if key.prepared is not None:
            try:
                return key.native.spmv_prepared(key.prepared.blocks, witness_values, key.domain_size, threads)
            except ValueError as exc:  # arrays inconsistent: never use them
                key.drop_prepared(str(exc))
        return key.native.spmv_ab(key.zkey.coefs, witness_values, key.domain_size, threads)


def h_coset_values(key: ProvingKey, a: np.ndarray, b: np.ndarray, timer: PhaseTimer, threads: int = 0) -> np.ndarray:
    """Plain (non-Montgomery) scalars for the H MSM, one per domain point.

    snarkjs never stores C: on the domain, c = a∘b for a satisfying witness. The
    native qap_h does the six transforms and the pointwise steps in one call and
    says how long its last step (the H values) took."""
    start = time.perf_counter()
    h, h_ms = key.native.qap_h(a, b, threads)
    total = (time.perf_counter() - start) * 1e3
    timer.ms["ntt"] = timer.ms.get("ntt", 0.0) + max(total - h_ms, 0.0)
    timer.ms["h"] = timer.ms.get("h", 0.0) + h_ms
    return h
