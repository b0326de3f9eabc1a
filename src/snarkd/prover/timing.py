"""Named, timed phases. The phase names, declared once here, are the names users see:
`--timings`, the engine's log line and per-partition timings, the Prometheus
histogram's `phase` label, the bench report and the timeline."""

from __future__ import annotations

import time
from contextlib import contextmanager

# name -> what it times, in pipeline order. Stage totals: synthesis, device, finalize.
PHASES: dict[str, str] = {
    "admission": "daemon: from the request's arrival to the engine's queue (by-reference witnesses read in)",
    "load": "reading the key and the witness (one-shot prove)",
    "key_load": "reloading a key evicted by the key budget ([keys] max_resident, host_budget)",
    "front_queue": "cluster front: waiting for an engine actor that holds the key and has room",
    "actor_call": "cluster front: from sending a partition to an actor until its proof is back (transfer included)",
    "queue_wait": "waiting for admission: priority and the memory budget",
    "witness": "witness calculation from inputs (native program or circuit .wasm)",
    "witness_wasm": "a native witness recomputed on the wasm engine because its proof failed self-verification",
    "check": "witness checked against the key (field, length, canonical values)",
    "spmv": "sparse products a = A·w, b = B·w",
    "synthesis": "synthesis stage total",
    "device_queue": "waiting in the device queue",
    "device_wait": "waiting for the device lock",
    "key_upload": "uploading the key to the device (first use there, or after an eviction)",
    "upload": "host-to-device copies of the witness (and a, b)",
    "ntt": "NTTs: a, b, c to the odd coset",
    "h": "H values from the coset evaluations",
    "msm_h": "MSM over the H bases (a streamed key: its pass for a batch of proofs, share per proof)",
    "msm_a": "MSM over the A bases",
    "msm_b1": "MSM over the B1 bases (G1)",
    "msm_c": "MSM over the C bases",
    "msm_b2": "MSM over the B2 bases (G2)",
    "msm_w": "a streamed key: one pass over the A, B1, C, B2 bases for a batch of proofs (its share per proof)",
    "h2d": "a streamed key: the copy engine sending bases (CUDA events; overlaps the MSMs; share per proof)",
    "kernels": "GPU time of the device stage's kernels (CUDA events; part of device)",
    "preempted": "a device stage paused at its yield points while a higher lane's device work ran (part of device)",
    "device": "device stage total (holding a device slot)",
    "finalize_queue": "waiting in the finalize queue",
    "assemble": "blinding with r, s and proof assembly",
    "verify": "self-verification of the proof (pairing)",
    "finalize": "finalize stage total",
    "write": "writing proof.json and public.json (one-shot prove)",
    "total": "submit to result",
}
STAGES = ("synthesis", "device", "finalize")
# The phases of one proof on the CPU, in order, as prover/groth16.prove runs them ("h" is recorded inside "ntt";
# tests/prover/test_oneshot.py checks them): the length of `snarkd prove`'s progress bar.
PROOF_STEPS = ("check", "spmv", "ntt", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2", "assemble")


def ordered(timings: dict) -> list[tuple[str, float]]:
    """(phase, ms) in pipeline order."""
    return [(k, timings[k]) for k in PHASES if k in timings]


class PhaseTimer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str):
        if name not in PHASES:
            raise ValueError(f"undeclared phase {name!r}: declare it in snarkd.prover.timing.PHASES")
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - start) * 1e3

    def record(self, name: str, ms: float) -> None:
        """A phase measured some other way (e.g. on the GPU's clock)."""
        if name not in PHASES:
            raise ValueError(f"undeclared phase {name!r}: declare it in snarkd.prover.timing.PHASES")
        self.ms[name] = self.ms.get(name, 0.0) + ms

    def split(self, name: str, part: str, ms: float) -> None:
        """`ms` of phase `name` (timed already) reported as its own phase `part` instead (a native call that
        says how long its last step took)."""
        self.exclude(name, ms)
        self.record(part, ms)

    def exclude(self, name: str, ms: float) -> None:
        """Take `ms` out of phase `name` (timed already): time inside it that another phase holds (a pause at a
        yield point within it, recorded as "preempted" by whoever paused it)."""
        self.ms[name] = max(self.ms.get(name, 0.0) - ms, 0.0)

    def total(self) -> float:
        return sum(self.ms.values())
