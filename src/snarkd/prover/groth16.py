"""The Groth16 prover as snarkjs runs it (groth16_prove.js): the one place its steps are sequenced.

    pi_a = Σ w_i·A_i + α1 + r·δ1
    pi_b = Σ w_i·B2_i + β2 + s·δ2            (G2)
    pi_c = Σ_{i>l} w_i·C_i + Σ h_j·H_j + s·pi_a + r·(Σ w_i·B1_i + β1 + s·δ1) − r·s·δ1

The work is split in three stages, as a proving service schedules it
(cuzk's "split API"): `synthesize` (CPU: witness check, sparse products),
`device_stage` (NTTs and the MSMs, on a Backend: the CPU core or a GPU) and
`finalize` (the G2 MSM unless the backend did it, blinding and assembly, on
the CPU). `prove` runs all three back to back: the engine and the Ray actors
call the stages one by one, `snarkd prove`/`fullprove` call `prove`.

Each step is one native call with the GIL released (the witness's scan in
snarkd.native._scan through formats.wtns.check_witness_fits; snarkd.native._core:
the key's checks, spmv, qap_h, msm_h/msm_w, groth16_blind), over a SectionKey
(prover.types): a resident ProvingKey, or the one-shot MappedKey
(prover.mapped) whose sections are checked just before their first use and
released after their last. Each phase is timed under the name users see in
`--timings`. Nothing here imports numpy: on the CPU a one-shot proof never
does.
"""

from __future__ import annotations

import contextlib
import os

from snarkd.curves.encoding import g1_bytes_to_json, g2_bytes_to_json
from snarkd.formats.wtns import Witness, check_witness_fits
from snarkd.prover.cpu import CPU, msm_b2
from snarkd.prover.qap import sparse_products
from snarkd.prover.timing import PhaseTimer
from snarkd.prover.types import HEADER, G1Sums, Proof, SectionKey, Synthesized, proof_json


def _bytes(values) -> memoryview:
    """The witness values' bytes (a numpy array or a memoryview, C-contiguous)."""
    return memoryview(values).cast("B")


def public_values(witness_values, n_public: int) -> list[str]:
    """w[1..n_public] as decimal strings (public.json)."""
    b = _bytes(witness_values)
    return [str(int.from_bytes(b[32 * i : 32 * i + 32], "little")) for i in range(1, n_public + 1)]


def synthesize(key: SectionKey, witness: Witness, timer: PhaseTimer, threads: int = 0, witness_name: str = "witness",
               sparse: bool = True) -> Synthesized:
    """Check the witness (and the key's header points) and (sparse=True) compute a = A·w, b = B·w. With
    sparse=False a and b stay None, for a backend that computes them itself."""
    with timer.phase("check"):
        check_witness_fits(witness, key.curve.r, key.n_vars, key.curve.name, key.path, witness_name, threads)
        key.use(*HEADER)
    if not sparse:
        return Synthesized(witness=witness.values, a=None, b=None)
    with timer.phase("spmv"):
        a, b = sparse_products(key, witness.values, threads)
    return Synthesized(witness=witness.values, a=a, b=b)


def device_stage(key, synth: Synthesized, timer: PhaseTimer, threads: int = 0, with_g2: bool = False,
                 backend=None) -> G1Sums:
    """NTTs, H and the G1 MSMs (G2 too when with_g2) on `backend` (a name or a
    Backend; None: the CPU). Frees synth.a and synth.b (the big buffers)."""
    return _resolve(backend).device_stage(key, synth, timer, threads, with_g2)


def random_below(n: int) -> int:
    """A uniform integer in [0, n) from the OS's CSPRNG: secrets.randbelow's draw (the top bit length of fresh
    bytes, redrawn until below n), without importing secrets (hashlib, hmac, random: ~3 ms of a one-shot proof)."""
    bits = n.bit_length()
    size = (bits + 7) // 8
    while True:
        x = int.from_bytes(os.urandom(size), "little") >> (8 * size - bits)
        if x < n:
            return x


def finalize(
    key: SectionKey,
    witness_values,
    sums: G1Sums,
    timer: PhaseTimer,
    threads: int = 0,
    r: int | None = None,
    s: int | None = None,
) -> Proof:
    """G2 MSM (unless the device did it), blinding with fresh r, s, and proof.json assembly (one native function
    for every path: native/groth16/blind.hpp)."""
    native, curve = key.native, key.curve
    if sums.b2 is None:
        sums.b2 = msm_b2(key, witness_values, timer, threads)
    with timer.phase("assemble"):
        order = curve.r
        r = random_below(order) if r is None else r % order
        s = random_below(order) if s is None else s % order
        pi_a, pi_b, pi_c = native.groth16_blind(
            {"a": sums.a, "b1": sums.b1, "c": sums.c, "h": sums.h, "b2": sums.b2},
            {name: key.section(name) for name in HEADER},
            r.to_bytes(32, "little"), s.to_bytes(32, "little"), (r * s % order).to_bytes(32, "little"))
        proof = proof_json(curve.name, g1_bytes_to_json(curve, pi_a), g2_bytes_to_json(curve, pi_b),
                           g1_bytes_to_json(curve, pi_c))
        public = public_values(witness_values, key.n_public)
    return Proof(proof=proof, public=public, timings=dict(timer.ms), curve=curve.name, points=(pi_a, pi_b, pi_c))


def prove(
    key: SectionKey,
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
    BackendUnavailable: nothing falls back silently. On the CPU the native core's
    path switches ([cpu] ifma) wait for the whole proof, which so runs on one path."""
    be = _resolve(backend)
    timer = timer or PhaseTimer()
    with _one_path(be, key):
        synth = synthesize(key, witness, timer, threads, witness_name,
                           sparse=not be.spmv_on_device or be.host_spmv(key))
        sums = be.device_stage(key, synth, timer, threads, with_g2=be.g2_on_device)
        return finalize(key, synth.witness, sums, timer, threads, r, s)


def _resolve(backend):
    """prover.backend.resolve, imported only for a backend other than the CPU (the one-shot path's imports
    stay lean)."""
    if backend is None or backend is CPU:
        return CPU
    from snarkd.prover.backend import resolve

    return resolve(backend)


def _one_path(backend, key):
    """The native core's path gate held for a CPU proof (a switch asked for meanwhile waits for its end)."""
    return key.native.hold_paths() if backend.gpu is None else contextlib.nullcontext()
