"""The Groth16 prover as snarkjs runs it (groth16_prove.js), phase by phase.

    pi_a = Σ w_i·A_i + α1 + r·δ1
    pi_b = Σ w_i·B2_i + β2 + s·δ2            (G2)
    pi_c = Σ_{i>l} w_i·C_i + Σ h_j·H_j + s·pi_a + r·(Σ w_i·B1_i + β1 + s·δ1) − r·s·δ1

The work is split in three stages, as a proving service schedules it
(cuzk's "split API"): `synthesize` (CPU: witness check, sparse products),
`device_stage` (NTTs and the G1 MSMs, the part a GPU worker runs) and
`finalize` (the G2 MSM, blinding and assembly, on CPU after the device is
released). `prove` runs all three. Each phase is timed under the name users
see in `--timings`; big buffers are dropped as soon as they are dead.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

from snarkd.curves.encoding import fr_array_from_ints, g1_to_json, g2_to_json, limbs_to_int
from snarkd.formats.wtns import Witness, check_witness
from snarkd.prover.proving_key import ProvingKey
from snarkd.prover.qap import h_coset_values, sparse_products
from snarkd.prover.timing import PhaseTimer


@dataclass
class Proof:
    proof: dict
    public: list[str]
    timings: dict[str, float] = field(default_factory=dict)
    curve: str = ""


@dataclass
class Synthesized:
    """A witness checked against its key, with a = A·w and b = B·w on the domain."""

    witness: np.ndarray
    a: np.ndarray | None
    b: np.ndarray | None

    @property
    def nbytes(self) -> int:
        return sum(x.nbytes for x in (self.a, self.b) if x is not None)


@dataclass
class G1Sums:
    """The device stage's output: the G1 MSM results (affine, Montgomery limbs)."""

    h: np.ndarray
    a: np.ndarray
    b1: np.ndarray
    c: np.ndarray
    b2: np.ndarray | None = None  # set when the G2 MSM also ran on the device


def synthesize(key: ProvingKey, witness: Witness, timer: PhaseTimer, threads: int = 0, witness_name: str = "witness",
               sparse: bool = True) -> Synthesized:
    """Check the witness and (sparse=True) compute a = A·w, b = B·w. With
    sparse=False a and b stay None: a GPU device stage computes them on the
    device from the key's resident CSR, and the CPU path computes them there."""
    with timer.phase("check"):
        check_witness(witness, key.zkey, witness_name)
    if not sparse:
        return Synthesized(witness=witness.values, a=None, b=None)
    a, b = sparse_products(key, witness.values, timer, threads)
    return Synthesized(witness=witness.values, a=a, b=b)


def device_stage(key: ProvingKey, synth: Synthesized, timer: PhaseTimer, threads: int = 0, with_g2: bool = False,
                 backend=None) -> G1Sums:
    """NTTs, H and the G1 MSMs. Frees synth.a and synth.b (the big buffers).

    backend: None or "cpu" (the native core, below), "cuda"/"auto", or a backend
    object from snarkd.prover.backend; all give identical sums."""
    if backend is not None:
        if isinstance(backend, str):
            from snarkd.prover.backend import get_backend

            backend = get_backend(backend)
        if backend.name != "cpu":
            return backend.device_stage(key, synth, timer, threads, with_g2)
    zk, native, w = key.zkey, key.native, synth.witness
    a, b = synth.a, synth.b
    synth.a = synth.b = None
    if a is None:  # synthesized with sparse=False
        a, b = sparse_products(key, w, timer, threads)
    h = h_coset_values(key, a, b, timer, threads)
    del a, b
    with timer.phase("msm_h"):
        res_h = native.msm_g1(zk.h, h, threads)
    del h
    with timer.phase("msm_a"):
        sum_a = native.msm_g1(zk.a, w, threads)
    with timer.phase("msm_b1"):
        sum_b1 = native.msm_g1(zk.b1, w, threads)
    with timer.phase("msm_c"):
        sum_c = native.msm_g1(zk.c, w[zk.n_public + 1 :], threads)
    sums = G1Sums(h=res_h, a=sum_a, b1=sum_b1, c=sum_c)
    if with_g2:
        with timer.phase("msm_b2"):
            sums.b2 = native.msm_g2(zk.b2, w, threads)
    return sums


def _combine_g1(native, points: list[np.ndarray], scalars: list[int], threads: int) -> np.ndarray:
    return native.msm_g1(np.stack(points), fr_array_from_ints(scalars), threads)


def _combine_g2(native, points: list[np.ndarray], scalars: list[int], threads: int) -> np.ndarray:
    return native.msm_g2(np.stack(points), fr_array_from_ints(scalars), threads)


def finalize(
    key: ProvingKey,
    witness_values: np.ndarray,
    sums: G1Sums,
    timer: PhaseTimer,
    threads: int = 0,
    r: int | None = None,
    s: int | None = None,
) -> Proof:
    """G2 MSM (unless the device did it), blinding with fresh r, s, and proof.json assembly."""
    zk, native, curve = key.zkey, key.native, key.curve
    w = witness_values
    if sums.b2 is None:
        with timer.phase("msm_b2"):
            sums.b2 = native.msm_g2(zk.b2, w, threads)
    with timer.phase("assemble"):
        order = curve.r
        r = secrets.randbelow(order) if r is None else r % order
        s = secrets.randbelow(order) if s is None else s % order
        pi_a = _combine_g1(native, [sums.a, zk.alpha1, zk.delta1], [1, 1, r], threads)
        pib1 = _combine_g1(native, [sums.b1, zk.beta1, zk.delta1], [1, 1, s], threads)
        pi_b = _combine_g2(native, [sums.b2, zk.beta2, zk.delta2], [1, 1, s], threads)
        pi_c = _combine_g1(native, [sums.c, sums.h, pi_a, pib1, zk.delta1], [1, 1, s, r, (-r * s) % order], threads)
        proof = {
            "pi_a": g1_to_json(curve, pi_a),
            "pi_b": g2_to_json(curve, pi_b),
            "pi_c": g1_to_json(curve, pi_c),
            "protocol": "groth16",
            "curve": curve.name,
        }
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

    backend: None/"cpu" (the native core) or a GPU backend (snarkd.prover.backend):
    then A·w, B·w, H and every MSM, G2 included, run on the device."""
    timer = timer or PhaseTimer()
    gpu = backend is not None and not isinstance(backend, str) and backend.name != "cpu"
    synth = synthesize(key, witness, timer, threads, witness_name, sparse=not gpu)
    sums = device_stage(key, synth, timer, threads, with_g2=gpu, backend=backend if gpu else None)
    return finalize(key, synth.witness, sums, timer, threads, r, s)
