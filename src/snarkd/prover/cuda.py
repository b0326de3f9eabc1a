"""The CUDA backend: the device stage on one GPU (snarkd.gpu).

The key's bases, the CSR form of its coefs section and (when they fit) its MSM
window tables are uploaded once per (key, device) and shared by every worker on
that device (snarkd.gpu.device.GpuDevice.resident). `device_stage` then uploads
one witness (and a, b when synthesis computed them on the CPU), asks the device
for the sparse products, the H computation and the MSMs, and returns the same
G1Sums as the CPU backend: identical points, so identical proofs for the same r, s.
The GPU work, its memory needs and its kernel timing are GpuDevice's; this file
says what a proof asks of it.

A key whose bases do not fit beside one proof's work (stream_bases "auto"), or any key with
"on", keeps its bases on the host, page-locked, and is proved in batches (`device_stage_batch`):
its StreamPlan (gpu/stream.py, from the device budget) says the chunk, how many proofs share one
pass over the bases, whether the CSR stays on the device (else synthesis computes A·w, B·w on the
CPU: `host_spmv`) and how H is computed. Each proof's H and witness MSMs then run in two passes
whose chunks cross PCIe once for the whole batch, overlapped with the MSMs.
"""

from __future__ import annotations

import copy
import threading
import time
from contextlib import ExitStack, contextmanager

import numpy as np

from snarkd.gpu import device as gdevice
from snarkd.gpu import stream as gstream
from snarkd.gpu.memory import GpuMemoryError, GpuUnavailable
from snarkd.gpu.resident import TABLE_MODES
from snarkd.prover.qap import sparse_products
from snarkd.prover.types import G1Sums, Synthesized
from snarkd.units import parse_size

STREAM_MODES = ("auto", "on", "off")
_UNMADE = object()  # a plan cache's miss (None is a plan's answer: none fits)


class CudaBackend:
    spmv_on_device = True  # A·w, B·w from the resident CSR: synthesis only checks the witness
    g2_on_device = True  # the G2 MSM takes ~15 ms here at 2^20, ~1 s on a CPU
    max_concurrent = 0  # every device worker at once, each on its own stream (memory reservations bound them)
    # Of the budget, what a streamed key's plan leaves free for an urgent lane's stage run at a bulk stage's yield
    # point (engine/preempt.py), which keeps its reservation while paused: an engine's largest share of a lane above
    # priority 0, in the view it proves with (with_urgent_share; 0: plans take the whole budget, and such
    # preemptions are skipped).
    urgent_share = 0.0

    def __init__(self, device: int = 0, *, memory_budget: int | str = "auto", msm_tables: str = "auto",
                 msm_window_bits: int = 0, cubin_dir: str = "", stream_bases: str = "auto"):
        if msm_tables not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {msm_tables!r} is not one of {', '.join(TABLE_MODES)}")
        if stream_bases not in STREAM_MODES:
            raise ValueError(f"stream_bases: {stream_bases!r} is not one of {', '.join(STREAM_MODES)}")
        ok, why = gdevice.available()
        if not ok:
            raise GpuUnavailable(f"the cuda backend cannot run here: {why}")
        budget = parse_size(memory_budget)
        self.dev = gdevice.get(device, None if budget == "auto" else budget, cubin_dir)
        self.name = f"cuda:{self.dev.index}"
        self.msm_tables = msm_tables
        self.msm_c = int(msm_window_bits)
        self.stream_bases = stream_bases
        self.stream_batch_max = gstream.BATCH_MAX
        self.stream_csr_modes = gstream.CSR_MODES  # a benchmark narrows these to compare (bench/large_proof.py)
        # the plan caches, keyed by the urgent share too: one backend's views (with_urgent_share) share them
        self._plans: dict[tuple, object] = {}  # (id(zkey), share) -> its StreamPlan here (made once per key)
        self._urgent_plans: dict[tuple, object] = {}  # (id(zkey), share) -> an urgent stage's plan beside a paused one
        self._urgent_local = threading.local()  # .on: this thread runs an urgent lane's stage (urgent())
        self._stage_plans: dict[tuple, object] = {}  # (id(zkey), share, proofs in the stage) -> the stage's plan

    def __repr__(self) -> str:
        return f"CudaBackend(device={self.dev.index}, msm_tables={self.msm_tables!r})"

    def with_urgent_share(self, share: float) -> "CudaBackend":
        """This backend as an engine whose urgent lanes have `share` of the budget uses it (Backend.with_urgent_share):
        get_backend gives every engine of a process the same object, so the share is the view's, not set on that
        object (two engines would plan with the last one's). The view shares the device, what is resident on it and
        the plan caches (keyed by the share)."""
        if share == self.urgent_share:
            return self
        view = copy.copy(self)
        view.urgent_share = share
        return view

    @property
    def gpu(self):
        """The GpuDevice this backend proves on (Backend.gpu: the daemon's aggregator takes the first)."""
        return self.dev

    def pin(self) -> None:
        """Make this GPU the calling thread's current device, with a stream of its own (a device
        worker's proofs then overlap with its siblings' on the GPU). Every call below also enters the
        device itself, so work never lands on another GPU."""
        self.dev.use(own_stream=True)

    @contextmanager
    def urgent(self):
        """An urgent lane's device stage: on the calling worker's highest-priority stream (GpuDevice.urgent_stream),
        and, for a streamed key whose own plan does not fit beside the stages holding the device, by its urgent plan
        (urgent_plan)."""
        self._urgent_local.on = True
        try:
            with self.dev.urgent_stream():
                yield
        finally:
            self._urgent_local.on = False

    def kernel_seconds(self) -> float:
        """Seconds the GPU ran this device's kernels so far (gpu/busy.py)."""
        return self.dev.clock.seconds()

    def release(self, key) -> None:
        zid = id(key.zkey)
        for cache in (self._plans, self._stage_plans, self._urgent_plans):  # every view's: in place, they share them
            # another view (another engine's) may release the same key meanwhile, or add a plan: its keys listed at
            # once (list() of a dict is one step under the GIL), each dropped if still there
            for k in list(cache):
                if k[0] == zid:
                    cache.pop(k, None)
        self.dev.release(key.zkey)

    def residency(self, key):
        return self.dev.residency(key.zkey)

    def make_resident(self, key, timer=None) -> bool:
        """Upload the key (and build its tables) as device_stage would, under a proof's reservation,
        so that the tables' "auto" decision leaves the same room for the proof's own work."""
        if self.dev.residency(key.zkey) is not None:
            return False
        mem = self.dev.memory
        with ExitStack() as stack:
            if timer is not None:
                stack.enter_context(timer.phase("key_upload"))
            stack.enter_context(mem.guard("uploading the proving key"))
            stack.enter_context(mem.reserve(self.work_bytes(key), what="proof"))
            if self.bases_streamed(key):
                plan = self.stream_plan(key)
                self.dev.resident(key.zkey, "off", self.msm_c, True, plan.csr)
            else:
                self.dev.resident(key.zkey, self.msm_tables, self.msm_c)
            self.dev.synchronize()
        return True

    def stream_plan(self, key):
        """The key's StreamPlan on this device (gpu/stream.py), made once; a key no plan fits is refused,
        naming its size and the budget (GpuMemoryError: the key cannot be proved here). With an urgent share, the
        plan leaves that much of the budget free for urgent_plan where the key still fits without it."""
        plan = self._plans.get((id(key.zkey), self.urgent_share))
        if plan is None:
            plan = None
            keep = int(self.urgent_share * self.dev.memory.budget)
            if keep:
                room = self.dev.memory.budget - self.dev.held_bytes(but=key.zkey) - keep
                plan = self.dev.stream_plan(key.zkey, True, self.stream_batch_max, 0, self.stream_csr_modes, room=room)
            if plan is None:
                plan = self.dev.stream_plan(key.zkey, True, self.stream_batch_max, 0, self.stream_csr_modes)
            if plan is None:
                shape = gstream.KeyShape.of(key.zkey, 0)
                best = gstream.largest_power(shape.curve, self.dev.memory.budget)
                raise GpuMemoryError(
                    f"{key.zkey.path}: a proof of this key (domain 2^{key.zkey.domain_power}, {key.zkey.n_vars} "
                    f"variables, bases {shape.base_bytes / 2**30:.2f} GiB) does not fit device {self.dev.index}'s "
                    f"budget of {self.dev.memory.budget / 2**30:.2f} GiB even with its bases streamed from the host; "
                    f"the largest circuit this budget proves is 2^{best['power']} ({best.get('next', '')})")
            self._plans[(id(key.zkey), self.urgent_share)] = plan
        return plan

    def use_stream_plan(self, key, plan) -> None:
        """Prove `key` by `plan` (one made by hand: a test's, a benchmark's) instead of the one stream_plan makes."""
        self._plans[(id(key.zkey), self.urgent_share)] = plan

    def stage_plan(self, key, k: int):
        """The plan for a stage of k proofs of a streamed key: the cheapest for k (stream.plan's expect) among those
        within the key's plan (its CSR placement, and no more device memory than it reserves), made once per k.
        A lone proof gets large chunks and one merged pass; a 10-partition job the batch that shares each chunk."""
        base = self.stream_plan(key)
        if not base.parts:  # a plan made by hand (a test's, a benchmark's) runs as given
            return base
        got = self._stage_plans.get((id(key.zkey), self.urgent_share, k))
        if got is None:  # same chunk and CSR placement (made at load), so the same bytes held
            got = self.dev.stream_plan(key.zkey, True, max(base.batch, k), base.chunk, (base.csr,), expect=k,
                                       room=base.peak) or base
            self._stage_plans[(id(key.zkey), self.urgent_share, k)] = got
        return got

    def urgent_plan(self, key):
        """The plan of a lone urgent proof of a streamed key in the room the key's plan leaves (urgent_share): the
        key's CSR placement (what it holds on the device is shared), chunks sized for that room; None without one."""
        keep = int(self.urgent_share * self.dev.memory.budget)
        base = self.stream_plan(key)
        if not keep or not base.parts:
            return None
        at = (id(key.zkey), self.urgent_share)
        plan = self._urgent_plans.get(at, _UNMADE)  # read once: another view's release may drop it meanwhile
        if plan is _UNMADE:  # (None, no urgent plan fits, is kept too)
            plan = self._urgent_plans[at] = self.dev.stream_plan(key.zkey, True, 1, 0, (base.csr,), expect=1,
                                                                 room=base.held + keep)
        return plan

    def _stage_plan_now(self, key, k: int):
        """stage_plan, or for an urgent lane's lone proof whose stage plan does not fit beside what is reserved now
        (a bulk stage paused at a yield point keeps its reservation), the urgent plan."""
        plan = self.stage_plan(key, k)
        if k == 1 and getattr(self._urgent_local, "on", False):
            mem = self.dev.memory
            small = self.urgent_plan(key)
            if small is not None and mem.reserved + plan.peak - plan.held > mem.budget:
                return small
        return plan

    def host_spmv(self, key) -> bool:
        """Whether synthesis must compute A·w, B·w on the CPU for `key` (a streamed key whose CSR stays on the host)."""
        return self.bases_streamed(key) and self.stream_plan(key).csr == "host"

    def batch_limit(self, key) -> int:
        """Proofs of `key` one device stage takes together: a streamed key's plan batch; 1 with resident bases."""
        return self.stream_plan(key).batch if self.bases_streamed(key) else 1

    def bases_streamed(self, key) -> bool:
        """Whether the key's bases stay on the host: mode "on"; "auto" when they and the CSR would not fit
        in the device budget beside what the device holds and one proof's work (or as the key is resident)."""
        r = self.dev.residency(key.zkey)
        if r is not None:
            return r.streamed
        if self.stream_bases != "auto":
            return self.stream_bases == "on"
        return not self.dev.fits(key.zkey, self.msm_c)

    def preempt_blocker(self, key) -> str:
        """Why a device stage of `key` cannot start now beside the stages holding this device's memory (a paused
        stage keeps its reservation: engine/preempt.py): "" when it can; "key_not_resident" when the key would
        have to be uploaded first (its upload and tables are not sized beside a paused stage); "device_memory"
        when its work does not fit in the budget beside what is reserved."""
        if self.dev.residency(key.zkey) is None:
            return "key_not_resident"
        mem = self.dev.memory
        need = self.work_bytes(key)
        small = self.urgent_plan(key) if self.bases_streamed(key) else None
        if small is not None:  # a preempting stage is an urgent lane's: it may run by the urgent plan
            need = min(need, small.peak - small.held)
        return "" if mem.reserved + need <= mem.budget else "device_memory"

    def work_bytes(self, key) -> int:
        """Device memory one device stage needs beyond the resident key (an upper estimate)."""
        if self.bases_streamed(key):
            plan = self.stream_plan(key)
            return plan.peak - plan.held
        return self.dev.proof_bytes(key.zkey, self.msm_c)

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False,
                     yield_point=None) -> G1Sums:
        """yield_point: called once the proof's device memory is reserved (before its upload: an urgent stage's
        hold on the device begins there, engine/preempt.py), before each MSM (Backend.device_stage; the host
        has waited for the previous one) and between an MSM's phases (gpu.msm.msm_window_sums' `between`; the time
        paused there is taken out of the MSM's phase: the engine records it as "preempted")."""
        if self.bases_streamed(key):
            return self.device_stage_batch(key, [synth], [timer], threads, with_g2, yield_point)[0]
        zk, native, dev, c = key.zkey, key.native, self.dev, self.msm_c
        curve = key.curve.native
        a_host, b_host = synth.a, synth.b
        synth.a = synth.b = None
        mem = dev.memory
        with mem.guard("a proof"), mem.reserve(dev.proof_bytes(zk, c), what="proof"):
            # guard made this device current for the thread: allocations and launches below land on it,
            # on the thread's own stream; only this proof's work is waited for
            rk = dev.resident(zk, self.msm_tables, c)
            kernels = dev.clock.brackets()
            if yield_point is not None:
                yield_point()
            with timer.phase("upload"):
                w = mem.upload(synth.witness)
                ab = None
                if a_host is not None:
                    ab = [mem.upload(a_host), mem.upload(b_host)]
            del a_host, b_host
            if ab is None:
                with timer.phase("spmv"), kernels():
                    ab = dev.spmv(rk, w)
            with timer.phase("ntt"), kernels():
                h = dev.h_values(curve, zk.domain_power, ab, full_tables=dev.full_tables(zk.domain_power))
            # one digit sort of w serves A, B1, C (w[n_public+1:]) and B2 when their window modes agree
            sorts, nv = {}, zk.n_vars

            def msm(name: str, g2: bool, scalars, n: int, offset: int = 0, tag: str = ""):
                paused = [0.0]

                def between() -> None:  # inside the MSM, between its kernels' phases (gpu.msm.msm_window_sums)
                    paused[0] += yield_point()

                if yield_point is not None:
                    yield_point()
                with timer.phase(f"msm_{name}"), kernels():
                    out = dev.msm(curve, g2, getattr(rk, name), scalars, n, native, c, table=rk.tables.get(name),
                                  offset=offset, sorts=sorts if tag else None, tag=tag,
                                  between=between if yield_point is not None else None)
                timer.exclude(f"msm_{name}", paused[0] * 1e3)
                return out

            res_h = msm("h", False, h, zk.domain_size)
            del h
            sums = G1Sums(h=res_h, a=msm("a", False, w, nv, tag="w"), b1=msm("b1", False, w, nv, tag="w"),
                          c=msm("c", False, w, nv, offset=zk.n_public + 1, tag="w"))
            if with_g2:
                sums.b2 = msm("b2", True, w, nv, tag="w")
            del sorts
            dev.sync_stream()
            timer.record("kernels", kernels.count() * 1e3)
        return sums

    def device_stage_batch(self, key, synths: list, timers: list, threads: int = 0, with_g2: bool = False,
                           yield_point=None) -> list:
        """The device stage of several proofs of one streamed key (at most batch_limit(key)), run by the plan for
        that many (stage_plan): each proof's witness up, A·w and B·w (on the device, or sent up from synthesis),
        H; then the passes over the H bases and over A, B1, C, B2 for all of them (stream.msm_pass: one pass
        when the plan merges them). With the witnesses kept on the device, each goes up on the copy stream
        while the previous proof's A·w, B·w and H run. The passes' times, bytes and busy seconds are shared out
        evenly over the batch's timers (less the time paused at yield_point, called between the passes' chunks and
        between two proofs' MSMs of a chunk: Backend.device_stage). Returns one G1Sums per proof, in order."""
        import cupy

        paused = [0.0]  # seconds spent at yield points, taken out of the passes' wall times

        def pause() -> None:
            if yield_point is not None:
                paused[0] += yield_point()

        zk, native, dev = key.zkey, key.native, self.dev
        curve = key.curve.native
        k = len(synths)
        if k > self.stream_plan(key).batch:
            raise ValueError(f"a batch of {k} proofs; the stream plan takes at most {self.stream_plan(key).batch}")
        plan = self._stage_plan_now(key, k)
        mem = dev.memory
        with mem.guard(f"a batch of {k} streamed proof(s)"), \
                mem.reserve(plan.peak - plan.held, what=f"batch of {k} streamed proof(s)"):
            rk = dev.resident(zk, "off", self.msm_c, True, plan.csr)
            compute = cupy.cuda.get_current_stream()
            early = plan.keep_w and plan.csr != "host"  # every witness held from the start: up beside the kernels
            if early:
                dev.sync_stream()  # nothing of this stream's is pending: the new arrays are free for the copy stream
                copy = cupy.cuda.Stream(non_blocking=True)
                wdev = [cupy.empty(s.witness.nbytes // 4, dtype=cupy.uint32) for s in synths]
            hs, ws, brackets = [], [], []
            for i, (synth, timer) in enumerate(zip(synths, timers)):
                kernels = dev.clock.brackets()
                brackets.append(kernels)
                a_host, b_host = synth.a, synth.b
                synth.a = synth.b = None
                with timer.phase("upload"):
                    if early:
                        w = mem.upload(synth.witness, out=wdev[i], stream=copy)
                        compute.wait_event(copy.record())
                    else:
                        w = mem.upload(synth.witness) if (plan.csr != "host" or plan.keep_w) else None
                    ab = [mem.upload(a_host), mem.upload(b_host)] if a_host is not None else None
                del a_host, b_host
                if ab is None and plan.csr == "host":  # synthesized without them (a caller's choice): the CPU's
                    with timer.phase("spmv"):
                        ab = sparse_products(key, synth.witness, threads)
                    with timer.phase("upload"):
                        ab = [mem.upload(x) for x in ab]
                if ab is None and plan.csr == "streamed":
                    wbox = [w]
                    del w
                    with timer.phase("spmv"), kernels():
                        ab = dev.spmv_streamed_ab(rk, wbox, plan.h_mode == "parked", plan.keep_w)
                    w = wbox[0] if wbox else None
                if ab is None:
                    with timer.phase("spmv"), kernels():
                        ab = dev.spmv(rk, w)
                with timer.phase("ntt"), kernels():
                    hs.append(dev.h_values(curve, zk.domain_power, ab, plan.h_mode))
                ws.append(w if plan.keep_w else None)
                del w
                if not early:
                    dev.sync_stream()
                    pause()
            dev.sync_stream()
            for kernels, timer in zip(brackets, timers):
                timer.record("kernels", kernels.count() * 1e3)
            if early:
                del wdev
            w_ranges = (plan.ranges(zk.n_vars), lambda lo, hi: gstream.w_tasks(lo, hi, zk.n_public, with_g2))
            pause()
            t0, p0 = time.perf_counter(), paused[0]
            if plan.merged:
                out, st = dev.msm_pass(curve, rk.host, [(plan.ranges(zk.domain_size), gstream.h_tasks, hs), (*w_ranges, ws)],
                                       plan.c, native, between=pause)
                del hs, ws
                t2 = time.perf_counter() - (paused[0] - p0)
                # one pass: its wall time shared by the two sets in proportion to their kernels' GPU time
                kh, kw = st["segment_kernel_s"]
                t1 = t0 + (t2 - t0) * kh / max(kh + kw, 1e-9)
                out_h = out_w = out
                stats = [st]
            else:
                out_h, st_h = dev.msm_pass(curve, rk.host, [(plan.ranges(zk.domain_size), gstream.h_tasks, hs)], plan.c,
                                           native, between=pause)
                del hs
                t1 = time.perf_counter() - (paused[0] - p0)
                pause()
                for i, synth in enumerate(synths):
                    if ws[i] is None:
                        ws[i] = mem.upload(synth.witness)
                out_w, st_w = dev.msm_pass(curve, rk.host, [(*w_ranges, ws)], plan.c, native, between=pause)
                del ws
                t2 = time.perf_counter() - (paused[0] - p0)
                stats = [st_h, st_w]
        dev.count_streamed_proofs(k)
        zero = np.zeros(2 * zk.limbs, dtype=np.uint64)  # infinity: a set with no rows (a key of public inputs only)
        for timer in timers:
            timer.record("msm_h", (t1 - t0) * 1e3 / k)
            timer.record("msm_w", (t2 - t1) * 1e3 / k)
            timer.record("h2d", sum(st["copy_s"] for st in stats) * 1e3 / k)
            timer.record("kernels", sum(st["kernel_s"] for st in stats) * 1e3 / k)
        return [G1Sums(h=oh["h"], a=ow["a"], b1=ow["b1"], c=ow.get("c", zero), b2=ow.get("b2") if with_g2 else None)
                for oh, ow in zip(out_h, out_w)]
