"""The CPU backend: the device stage on the native core (snarkd.native), all cores by default."""

from __future__ import annotations

import contextlib

from snarkd.prover.qap import sparse_products
from snarkd.prover.types import G1Sums, Synthesized


class CpuBackend:
    name = "cpu"
    spmv_on_device = False  # synthesis computes A·w, B·w on the CPU (the device stage does them if it did not)
    g2_on_device = False  # on the CPU the G2 MSM is left to finalize, off the device worker
    max_concurrent = 1  # one device stage at a time: each uses every core
    gpu = None  # no GPU: aggregation on this backend's machine runs its Miller loops on the CPU
    urgent_share = 0.0  # host memory: the engine's budget and lane shares bound it

    def __repr__(self) -> str:
        return "CpuBackend()"

    def pin(self) -> None:
        pass

    def with_urgent_share(self, share: float) -> "CpuBackend":
        return self  # host memory: the engine's budget and lane shares bound it, not a device plan

    def release(self, key) -> None:
        pass

    def residency(self, key) -> None:
        return None  # nothing of a key lives here beyond the host's map

    def make_resident(self, key, timer=None) -> bool:
        return False

    def work_bytes(self, key) -> int:
        return 0  # host memory: counted by the engine's budget

    def kernel_seconds(self) -> None:
        return None  # no separate device clock: its device stage is all native CPU work

    def host_spmv(self, key) -> bool:
        return True

    def batch_limit(self, key) -> int:
        return 1

    def urgent(self):
        return contextlib.nullcontext()  # one device stage at a time on the cores: nothing to put first

    def preempt_blocker(self, key) -> str:
        return ""  # host memory: a stage's was reserved in the engine's budget when its partition was admitted

    def device_stage_batch(self, key, synths: list, timers: list, threads: int = 0, with_g2: bool = False,
                           yield_point=None) -> list:
        return [self.device_stage(key, s, t, threads, with_g2, yield_point) for s, t in zip(synths, timers)]

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False,
                     yield_point=None) -> G1Sums:
        """yield_point: called before each MSM (the engine's preemption boundary: engine/preempt.py), or None.
        key: any SectionKey (snarkd.prover.types): each section checked before its first use and done with
        after its last (a one-shot key's pages released), the sums bytes: no numpy."""
        pause = yield_point or (lambda: 0.0)
        native, w = key.native, synth.witness
        a, b = synth.a, synth.b
        synth.a = synth.b = None
        if a is None:  # synthesized without the sparse products
            with timer.phase("spmv"):
                a, b = sparse_products(key, w, threads)
        with timer.phase("ntt"):  # the H values (prover/qap.py); a key read once gives a, b back as soon as read
            h, h_ms = native.qap_h(a, b, threads, release=key.read_once)
        timer.split("ntt", "h", h_ms)  # qap_h's last step, the H values, is a phase of its own
        del a, b
        pause()
        with timer.phase("msm_h"):
            key.use("h")
            sum_h = native.msm_h(key.section("h"), h, threads)
            key.done("h")
        del h
        # msm_w: the witness's zeros skipped and ones summed directly (real circuits are full of both), the
        # rest through 8-lane batch-affine Pippenger; one at a time, each on all threads
        sums = {}
        for name, start in (("a", 0), ("b1", 0), ("c", key.n_public + 1)):
            pause()
            with timer.phase(f"msm_{name}"):
                key.use(name)
                sums[name] = native.msm_w(key.section(name), w, start, False, threads)
                key.done(name)
        out = G1Sums(h=sum_h, **sums)
        if with_g2:
            pause()
            out.b2 = msm_b2(key, w, timer, threads)
        return out


def msm_b2(key, w, timer, threads: int = 0):
    """The G2 sum Σ w_i·B2_i on the CPU: in the device stage (with_g2) or, where a device leaves it, in
    finalize (prover/groth16.py)."""
    with timer.phase("msm_b2"):
        key.use("b2")
        b2 = key.native.msm_w(key.section("b2"), w, 0, True, threads)
        key.done("b2")
    return b2


CPU = CpuBackend()
