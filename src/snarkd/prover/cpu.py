"""The CPU backend: the device stage on the native core (snarkd.native), all cores by default."""

from __future__ import annotations

import contextlib

from snarkd.prover.qap import h_coset_values, sparse_products
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
        """yield_point: called before each MSM (the engine's preemption boundary: engine/preempt.py), or None."""
        pause = yield_point or (lambda: 0.0)
        zk, native, w = key.zkey, key.native, synth.witness
        a, b = synth.a, synth.b
        synth.a = synth.b = None
        if a is None:  # synthesized without the sparse products
            a, b = sparse_products(key, w, timer, threads)
        h = h_coset_values(key, a, b, timer, threads)
        del a, b
        pause()
        with timer.phase("msm_h"):
            res_h = native.msm_g1(zk.h, h, threads)
        del h
        # msm_witness: the witness's zeros skipped and ones summed directly (real
        # circuits are full of both), the rest through 8-lane batch-affine Pippenger
        l = zk.n_public + 1
        pause()
        with timer.phase("msm_a"):
            sum_a = native.msm_witness(w, [(zk.a, 0)], [], threads)[0][0]
        pause()
        with timer.phase("msm_b1"):
            sum_b1 = native.msm_witness(w, [(zk.b1, 0)], [], threads)[0][0]
        pause()
        with timer.phase("msm_c"):
            sum_c = native.msm_witness(w, [(zk.c, l)], [], threads)[0][0]
        sums = G1Sums(h=res_h, a=sum_a, b1=sum_b1, c=sum_c)
        if with_g2:
            pause()
            with timer.phase("msm_b2"):
                sums.b2 = native.msm_witness(w, [], [(zk.b2, 0)], threads)[1][0]
        return sums


CPU = CpuBackend()
