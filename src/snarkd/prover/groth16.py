"""The Groth16 prover as snarkjs runs it (groth16_prove.js), phase by phase.

    pi_a = Σ w_i·A_i + α1 + r·δ1
    pi_b = Σ w_i·B2_i + β2 + s·δ2            (G2)
    pi_c = Σ_{i>l} w_i·C_i + Σ h_j·H_j + s·pi_a + r·(Σ w_i·B1_i + β1 + s·δ1) − r·s·δ1

The work is split in three stages, as a proving service schedules it
(cuzk's "split API"): `synthesize` (CPU: witness check, sparse products),
`device_stage` (NTTs and the MSMs, on a Backend: the CPU core or a GPU) and
`finalize` (the G2 MSM unless the backend did it, blinding and assembly, on
the CPU). `prove` runs all three. Each phase is timed under the name users
see in `--timings`; big buffers are dropped as soon as they are dead.
"""

from __future__ import annotations

import secrets

import numpy as np

from snarkd.curves.encoding import g1_bytes_to_json, g2_bytes_to_json, limbs_to_int
from snarkd.formats.wtns import Witness, check_witness
from snarkd.prover.backend import resolve
from snarkd.prover.proving_key import ProvingKey
from snarkd.prover.qap import sparse_products
from snarkd.prover.timing import PhaseTimer
from snarkd.prover.types import G1Sums, Proof, Synthesized, proof_json


def synthesize(key: ProvingKey, witness: Witness, timer: PhaseTimer, threads: int = 0, witness_name: str = "witness",
               sparse: bool = True) -> Synthesized:
    """Check the witness and (sparse=True) compute a = A·w, b = B·w. With
    sparse=False a and b stay None, for a backend that computes them itself."""
    with timer.phase("check"):
        check_witness(witness, key.zkey, witness_name, threads)
    if not sparse:
        return Synthesized(witness=witness.values, a=None, b=None)
    a, b = sparse_products(key, witness.values, timer, threads)
    return Synthesized(witness=witness.values, a=a, b=b)


def device_stage(key: ProvingKey, synth: Synthesized, timer: PhaseTimer, threads: int = 0, with_g2: bool = False,
                 backend=None) -> G1Sums:
    """NTTs, H and the G1 MSMs (G2 too when with_g2) on `backend` (a name or a
    Backend; None: the CPU). Frees synth.a and synth.b (the big buffers)."""
    return resolve(backend).device_stage(key, synth, timer, threads, with_g2)


def finalize(
    key: ProvingKey,
    witness_values: np.ndarray,
    sums: G1Sums,
    timer: PhaseTimer,
    threads: int = 0,
    r: int | None = None,
    s: int | None = None,
) -> Proof:
    """G2 MSM (unless the device did it), blinding with fresh r, s, and proof.json assembly (one native function
    for every path: native/groth16/blind.hpp)."""
    zk, native, curve = key.zkey, key.native, key.curve
    w = witness_values
    if sums.b2 is None:
        with timer.phase("msm_b2"):
            sums.b2 = native.msm_witness(w, [], [(zk.b2, 0)], threads)[1][0]
    with timer.phase("assemble"):
        order = curve.r
        r = secrets.randbelow(order) if r is None else r % order
        s = secrets.randbelow(order) if s is None else s % order
        pi_a, pi_b, pi_c = native.groth16_blind(  # native/groth16/blind.hpp: the one-shot path's own assembly
            {"a": sums.a, "b1": sums.b1, "c": sums.c, "h": sums.h, "b2": sums.b2},
            {"alpha1": zk.alpha1, "beta1": zk.beta1, "delta1": zk.delta1, "beta2": zk.beta2, "delta2": zk.delta2},
            r.to_bytes(32, "little"), s.to_bytes(32, "little"), (r * s % order).to_bytes(32, "little"))
        proof = proof_json(curve.name, g1_bytes_to_json(curve, pi_a), g2_bytes_to_json(curve, pi_b),
                           g1_bytes_to_json(curve, pi_c))
        public = [str(limbs_to_int(w[i])) for i in range(1, zk.n_public + 1)]
    return Proof(proof=proof, public=public, timings=dict(timer.ms), curve=curve.name)


def prove(
    key: ProvingKey,
    witness: Witness,
    threads: int = 0,
    r: int | None = None,
    s: int | None = None,
    witness_name: str = "witness",
    timer: PhaseTimer | None = None,
    backend=None,
) -> Proof:
    """Prove with fresh blinding from the OS CSPRNG (r, s only for reproducible tests).

    backend: a name ("cpu", "cuda", "auto") or a Backend (None: the CPU). A backend
    that computes the sparse products itself gets the witness unprocessed, and one
    that runs G2 well runs every MSM. A backend that cannot run raises
    BackendUnavailable: nothing falls back silently."""
    be = resolve(backend)
    timer = timer or PhaseTimer()
    synth = synthesize(key, witness, timer, threads, witness_name, sparse=not be.spmv_on_device or be.host_spmv(key))
    sums = be.device_stage(key, synth, timer, threads, with_g2=be.g2_on_device)
    return finalize(key, synth.witness, sums, timer, threads, r, s)
