"""Products of Miller loops on the device (pairing.cuh), for aggregation's commitments and GIPA rounds.

    miller_products(mod, curve, [(q, [p_0, ..., p_{K-1}]), ...]) -> per job [prod_i f_{Q_i}(p_k[i]) for each k]

the same values, byte for byte, as the CPU core's `_aggregate.miller_products` (Fp12, Montgomery words,
no final exponentiation): one thread per pair runs the Miller loop (miller_pairs), then runs of
PRODUCT_RUN values are multiplied level by level (fp12_product) until one is left per product.
"""

from __future__ import annotations

import numpy as np

from snarkd.curves.fp2 import fp2_mul, fp2_pow
from snarkd.curves.params import Curve

PRODUCT_RUN = 16  # values one thread multiplies per level: 2^13 pairs -> 512 -> 32 -> 2 -> 1
BLOCK = 128  # miller_pairs' __launch_bounds__


def frobenius_words(curve: Curve) -> np.ndarray:
    """The Fp2 constants of BN254's two Frobenius lines, as the CPU core's FrobeniusConsts has them:
    gamma_{1,e} = xi^(e (p - 1) / 6) for e = 2, 3 and gamma_{2,e} = gamma_{1,e} * conj(gamma_{1,e}), in
    Montgomery words (zeros for BLS12-381, whose loop has no Frobenius lines)."""
    q = curve.q
    out = []
    if curve.native == "bn254":
        base = fp2_pow((9, 1), (q - 1) // 6, q)
        g1 = {e: fp2_pow(base, e, q) for e in (2, 3)}
        g2 = {e: fp2_mul(g1[e], (g1[e][0], -g1[e][1] % q), q) for e in (2, 3)}
        for c in (g1[2], g1[3], g2[2], g2[3]):
            out += [v * curve.rq % q for v in c]
    else:
        out = [0] * 8
    return np.frombuffer(b"".join(v.to_bytes(curve.n8q, "little") for v in out), dtype=np.uint32)


def fp12_one(curve: Curve) -> bytes:
    return (curve.rq % curve.q).to_bytes(curve.n8q, "little") + bytes(11 * curve.n8q)


def device_bytes(curve: Curve, jobs: list) -> int:
    """Device memory miller_products takes for `jobs` at most: the points, every pair's Miller value
    and the first level of products."""
    m = memoryview(jobs[0][0]).nbytes // curve.g2_bytes if jobs else 0
    K = sum(len(ps) for _, ps in jobs)
    return len(jobs) * m * curve.g2_bytes + K * m * (curve.g1_bytes + 12 * curve.n8q * (1 + 1 / PRODUCT_RUN)) + 4096


def miller_products(mod, curve: Curve, jobs: list) -> list[list[bytes]]:
    """For each job (q, [p_0, ..., p_{K-1}]): [prod_i f_{Q_i}(p_k[i]) for each k]. q holds m affine G2
    points, each p m affine G1 points (zkey layout, Montgomery; bytes or numpy rows), m the same for
    every job: all the jobs' pairs go into one launch (a thread's Miller loop takes ~10 ms on the
    H200 whatever the launch's size, so one launch for a GIPA round's six products instead of six).
    A pair with an infinity point contributes 1. Runs on the current device and stream; raises
    ValueError on mismatched lengths."""
    import cupy

    from snarkd.gpu.module import launch

    qs, pss = [], []
    for q, ps in jobs:
        qs.append(memoryview(q).cast("B"))
        pss.append([memoryview(p).cast("B") for p in ps])
    m = len(qs[0]) // curve.g2_bytes if qs else 0
    if any(len(q) != m * curve.g2_bytes for q in qs) or any(len(p) != m * curve.g1_bytes for ps in pss for p in ps):
        raise ValueError("miller_products: every q must hold m G2 points and every p m G1 points, m the same")
    K = sum(len(ps) for ps in pss)
    if m == 0 or K == 0:
        return [[fp12_one(curve)] * len(ps) for ps in pss]
    words = 12 * curve.n8q // 4
    qblock = np.array([b for b, ps in enumerate(pss) for _ in ps], dtype=np.uint32)
    q_dev = cupy.asarray(np.frombuffer(b"".join(qs), dtype=np.uint32))
    p_dev = cupy.asarray(np.frombuffer(b"".join(p for ps in pss for p in ps), dtype=np.uint32))
    frob = cupy.asarray(frobenius_words(curve))
    vals = cupy.empty(m * K * words, dtype=cupy.uint32)
    launch(mod, "miller_pairs", m * K, (q_dev, cupy.asarray(qblock), p_dev, np.uint32(m), np.uint32(K), frob, vals),
           block=BLOCK)
    del q_dev, p_dev
    count = m
    while count > 1:
        per = -(-count // PRODUCT_RUN)
        nxt = cupy.empty(per * K * words, dtype=cupy.uint32)
        launch(mod, "fp12_product", per * K, (vals, np.uint32(count), np.uint32(K), np.uint32(PRODUCT_RUN), nxt),
               block=BLOCK)
        vals, count = nxt, per
    host = cupy.asnumpy(vals).tobytes()
    size = 12 * curve.n8q
    flat = [host[k * size : (k + 1) * size] for k in range(K)]
    out, at = [], 0
    for ps in pss:
        out.append(flat[at : at + len(ps)])
        at += len(ps)
    return out
