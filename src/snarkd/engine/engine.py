"""The pipelined proving engine: a plain object (start, submit, await_, cancel, status, stop).

    submit ──► pending (priority heap) ──admit when the memory budget fits──►
      synthesis workers (CPU: witness calculation from inputs, check, A·w, B·w)
        ──► device queue (bounded, by priority) ──►
      device workers, workers_per_device per device, pinned; a device slot (the backend's limit:
      one at a time on the CPU, every worker on a GPU, each on its own stream) is held for the
      device work only; a/b/c are freed and their budget released after; at the backend's yield
      points (between MSMs, between a streamed pass's chunks) a higher lane's device work runs
      first (engine/preempt.py)
        ──► finalize queue (bounded) ──►
      finalize workers (CPU: G2 MSM unless on the device, blinding, assembly, self-verification)
        ──► the job completes when all its partitions have

Each stage is a `stages.Stage` run by the one worker loop in stages.py, which
times it, records spans and handles cancellation and failures; this file says
what each stage does and keeps the jobs. It has no gRPC in it, so it can run
inside another host process (a Ray actor).

    eng = Engine(EngineConfig(synthesis_workers=2))
    eng.keys.load("chain", "chain.zkey")
    eng.start()
    job = eng.submit("chain", open("w.wtns", "rb").read())
    eng.await_(job.id).result.proof
    eng.stop()
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time

from snarkd.config import EngineConfig
from snarkd.engine import stages
from snarkd.engine.accounting import Accounting
from snarkd.engine.contract import EngineBase
from snarkd.engine.devices import resolve_devices
from snarkd.engine.errors import KeyChanged, TooLarge
from snarkd.engine.jobs import RUNNING, Job, Partition
from snarkd.engine.keys import KeyStore
from snarkd.engine.lanes import Lanes, has_priority_lane, priority_levels, urgent_share
from snarkd.engine.memory import MemoryBudget, estimate
from snarkd.engine.preempt import DeviceGate, Preemption
from snarkd.engine.stage_queue import StageQueue
from snarkd.engine.residency import DeviceResidency
from snarkd.engine.scheduler import KEEP_FINISHED, Scheduler
from snarkd.engine.status import EngineStatus, KeyStatus, engine_status, key_status
from snarkd.formats.wtns import wtns_size
from snarkd.prover import finalize, prove, synthesize
from snarkd.prover.timing import ordered
from snarkd.verifier.groth16 import verify_with_key
from snarkd.verifier.batch import verify_batch
from snarkd.witness import NATIVE_SOURCES, calculate_with_source, wasm_safety_net

log = logging.getLogger("snarkd")
BATCH_LINGER_S = 0.5  # a device stage waits at most this long for its job's partitions still in synthesis
# A native witness from inputs is replayed into page-locked memory where a GPU proves here, up to this size (its
# program's frame: the witness and the replay's registers): the upload is then one transfer, not a copy into the
# staging buffers first, which under load waits for CPU time (SHA-256 2^17 at j = 32 on an H200 host: upload 6.8-7.2
# ms from inputs against 3.7-4.4 from a witness file, the device stage 39.5-41.8 against 35.5-36.7 ms). Larger
# frames stay pageable: page-locked memory is the host's least elastic (CuPy's pool keeps what it was given).
PINNED_FRAME_MAX = 256 << 20
__all__ = ["Engine", "EngineConfig", "KEEP_FINISHED"]


class Engine(EngineBase):
    """The engine contract (engine/contract.py) in this process."""

    def __init__(self, config: EngineConfig | None = None, keys: KeyStore | None = None):
        super().__init__()
        self.config = c = config or EngineConfig()
        self.keys = keys or KeyStore(wasm_cache=c.wasm_cache)
        self.keys.max_instances = c.synthesis_workers
        self.keys.configure(c.key_max_resident, c.key_host_budget)
        self.keys.wasm_limits = (c.wasm_memory, c.wasm_fuel)
        self.keys.witness_engine = c.witness_engine
        self.keys.witness_compiled = c.witness_compiled
        # this engine's view of each device: backends are shared per process (get_backend), the urgent share of
        # streamed keys' device plans is this engine's lanes' (two engines in one process may have different lanes)
        share = urgent_share(c.lanes) if c.preempt else 0.0
        self.devices = [b.with_urgent_share(share) for b in resolve_devices(c)]
        # one synthesis feeds every device: it leaves A·w, B·w out only when every backend computes them itself
        self.sparse_on_host = not all(b.spmv_on_device for b in self.devices)
        self.g2_on_device = c.g2_on_device is True or (c.g2_on_device == "auto" and all(b.g2_on_device for b in self.devices))
        self.budget = MemoryBudget(c.memory_budget)
        self.acct = Accounting(self.budget, self.devices)
        self.book = Scheduler(self.keys, self.acct, self._notify, max_active=c.max_queued_jobs)
        self._lock = self.book.cv  # accounting is kept under the book's lock
        self.residency = DeviceResidency(self.devices, self.keys, c.key_max_resident, c.key_device_budget, self._lock)
        depth = c.queue_depth or max(1, len(self.devices) * c.workers_per_device)
        self._device_q, self._final_q = StageQueue(depth), StageQueue(depth)
        # device stages at once per device: the backend's limit, else one per device worker
        self._device_gates = [DeviceGate(b.max_concurrent or c.workers_per_device) for b in self.devices]
        self.preemption = [Preemption(self, d, g) for d, g in enumerate(self._device_gates)]
        # yield points only where a job of another lane could take the device at one: each is a check in Python on
        # the device worker (before each MSM and between its phases), which then competes for the GIL
        self._yields = c.preempt and priority_levels(c.lanes) > 1
        self._nested = [self._nested_stage(d) for d in range(len(self.devices))]
        slots = sum(b.max_concurrent or c.workers_per_device for b in self.devices)
        workers = {"synthesis": c.synthesis_workers, "device": slots, "finalize": c.finalize_workers}
        # the completion model's stages and their workers (engine/eta.py): fixed here, so the model copies a dict
        # rather than calling back into the engine (a cluster front's come and go: it gives a function of its own)
        self.book.eta.stages = workers.copy
        self.book.finish_past_deadline = c.finish_past_deadline
        # a lane's share is of what a newcomer could wait behind in the pipeline: the synthesis workers, the device
        # queue, the device slots, the finalize queue and workers (the most it holds anyway: no bound without shares)
        self.book.lanes = Lanes(c.lanes, slots=c.synthesis_workers + 2 * depth + slots + c.finalize_workers,
                                synthesis_workers=c.synthesis_workers, budget=self.budget.budget)
        self.book.max_weight = c.max_queued_weight
        self.book.self_verify = c.self_verify
        # a GPU whose stages run side by side gets a worker more for lanes above priority 0 (engine/preempt.py)
        self._lane_devices = [d for d, b in enumerate(self.devices)
                              if c.preempt and b.max_concurrent == 0 and has_priority_lane(c.lanes)]
        self.keys.preparers.append(self._warm_witness_buffer)
        self.workers = stages.Workers({"synthesis": c.synthesis_workers,
                                       "device": len(self.devices) * c.workers_per_device + len(self._lane_devices),
                                       "finalize": c.finalize_workers})

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "Engine":
        c = self.config
        synth = stages.Stage("synthesis", lambda: self.book.admit(self._stopping), self._synthesize,
                             self._hand_on(self._device_q, left_synthesis=True))
        final = stages.Stage("finalize", lambda: self._final_q.get(self._stopping), self._finalize, self._complete,
                             queue_phase="finalize_queue")
        nicer = functools.partial(stages.lower_priority, c.synthesis_nice)
        for i in range(c.synthesis_workers):
            self.workers.spawn(synth, f"synth-{i}", self, nicer)
        for d, backend in enumerate(self.devices):
            work = self._device_work(d)
            dev = stages.Stage("device", lambda: self._device_q.get(self._stopping), None,
                               self._hand_on(self._final_q), queue_phase="device_queue", wait_phase="device_wait",
                               gather=self._gather(d), work_batch=work)
            for k in range(c.workers_per_device):
                self.workers.spawn(dev, f"{backend.name}/w{k}", self, backend.pin)
            if d in self._lane_devices:
                self.workers.spawn(self._lane_worker(d), f"{backend.name}/lanes", self, backend.pin)
        for i in range(c.finalize_workers):
            self.workers.spawn(final, f"final-{i}", self)
        self._started, self.t_start = True, time.monotonic()
        log.info("engine started synthesis_workers=%d devices=%s workers_per_device=%d finalize_workers=%d "
                 "queue_depth=%d memory_budget=%d g2_on_device=%s self_verify=%s", c.synthesis_workers,
                 ",".join(b.name for b in self.devices), c.workers_per_device, c.finalize_workers,
                 self._device_q.capacity, self.budget.budget, self.g2_on_device, c.self_verify)
        return self

    def queue_depths(self) -> dict:
        return {"device": len(self._device_q), "finalize": len(self._final_q), "capacity": self._device_q.capacity}

    def alive(self, kind: str | None = None) -> int:
        return self.workers.alive(kind)

    def all_alive(self) -> bool:
        return self.workers.all_alive()

    def join_workers(self, timeout: float) -> bool:
        return self.workers.join(timeout)

    def _shut_down(self) -> list[str]:
        return self.workers.running()

    # ------------------------------------------------------------------ API

    def _queue(self, job: Job, parts: list, reload_ms: float) -> None:
        est = estimate(job.key.key, from_inputs=parts[0][1] is not None)
        if est.total > self.budget.budget:
            raise TooLarge(f"a partition of key {job.key.id!r} needs about {est.total / 2**20:.1f} MiB, more than "
                           f"the whole memory budget ({self.budget.budget / 2**20:.1f} MiB): it could never run")
        job.partitions = [Partition(job, i, witness=w, inputs=inp, est=est) for i, (w, inp) in enumerate(parts)]
        if reload_ms:
            job.partitions[0].timings["key_load"] = reload_ms
        self.book.add(job)

    def status(self) -> EngineStatus:
        return engine_status(self, self.queue_depths())

    def key_status(self, lk) -> KeyStatus:
        return key_status(lk, self.devices)

    # ------------------------------------------------------------------ the stages' work

    def _synthesize(self, part: Partition, timer) -> None:
        job, lk = part.job, part.job.key
        if self.config.debug_delay_s:
            job.done.wait(self.config.debug_delay_s)  # wakes early when the job is cancelled
        witness = part.witness
        if witness is None:
            with timer.phase("witness"):
                witness, part.witness_source = calculate_with_source(lk.require_wasm(), part.inputs,
                                                                     frame=self._witness_frame)
            with self._lock:
                self.acct.count(f"witness_{part.witness_source}")
        part.witness = None
        if part.witness_source not in NATIVE_SOURCES:
            part.inputs = None  # kept for a native witness: its proof's self-check falls back on them
        part.synth = synthesize(lk.key, witness, timer, self.config.threads,
                                witness_name=f"witness of job {job.id} partition {part.index}",
                                sparse=self.sparse_on_host or any(b.host_spmv(lk.key) for b in self.devices))

    def _gather(self, d: int):
        """Companions for a device stage on device d: queued partitions of the same key, up to the backend's
        batch for it (a streamed key's chunks then cross PCIe once for all). While the job has partitions
        still in synthesis the stage waits for them up to BATCH_LINGER_S, so a partitioned job goes as one
        batch; a lone proof never waits."""
        backend = self.devices[d]

        def gather(part: Partition) -> list:
            lk = part.job.key
            part.device_taken = True
            limit = backend.batch_limit(lk.key) - 1
            if limit <= 0:
                return []
            match = lambda p: p.job.key is lk  # noqa: E731
            got = self._device_q.take_matching(match, limit)
            deadline = time.monotonic() + BATCH_LINGER_S
            # it waits only for partitions already admitted (in synthesis: a queued one may wait for its lane's
            # slot, which this one holds), and never while work of a higher rank waits for the device
            while len(got) < limit and time.monotonic() < deadline and not self._stopping.is_set() and \
                    not self._device_q.ahead_of(part.job.rank) and \
                    any(p.state == RUNNING and not p.device_taken and not p.exited
                        for p in part.job.partitions if p is not part and p not in got):
                time.sleep(0.005)
                got += self._device_q.take_matching(match, limit - len(got))
            for p in got:
                p.device_taken = True
            return got

        return gather

    def _witness_frame(self, nbytes: int):
        """Where a native replay writes a witness from inputs (witness.protocol.FrameAllocator): page-locked memory
        where a GPU proves here and the frame is at most PINNED_FRAME_MAX, else None (the replay's own memory)."""
        host_buffer = self._host_buffer()
        return host_buffer(nbytes) if host_buffer is not None and nbytes <= PINNED_FRAME_MAX else None

    def witness_buffer(self, lane: str):
        """ProvingEngine.witness_buffer: page-locked memory for a lane above priority 0 where a GPU proves here."""
        return self._host_buffer() if self.lane(lane).priority > 0 else None

    def _host_buffer(self):
        """The first GPU's page-locked memory maker (GpuDevice.host_buffer), or None where no GPU proves here."""
        return next((b.gpu.host_buffer for b in self.devices if b.gpu is not None), None)

    def _warm_witness_buffer(self, lk) -> None:
        """Page-locked memory for one witness of a newly loaded key, made and given back to the pinned pool, which
        keeps it: the first urgent job's witness is read into it instead of waiting for it to be made (on an H200
        host ~25 ms of admission for a 2^20 witness, ~330 ms for 2^24)."""
        for name, use in self.book.lanes.use.items():
            buffer = self.witness_buffer(name) if use.lane.priority > 0 else None
            if buffer is not None:
                buffer(wtns_size(int(lk.meta["n_vars"])))
                return

    def _device_work(self, d: int, nested: bool = False, alongside: bool = False):
        """The device stage's work on device d. nested: run at another stage's yield point (engine/preempt.py), on
        that stage's thread and slot (no slot of its own, no yield points of its own). alongside: the lane
        worker's, begun at once beside the running stages, which it holds at their yield points (no slot, no
        yield points of its own), or, where it does not fit beside them, waiting for a slot as any stage."""
        backend, gate, preemption = self.devices[d], self._device_gates[d], self.preemption[d]

        def work(parts: list, timers: list) -> None:
            synths = []
            for part in parts:
                synths.append(part.synth)
                part.synth = None
            seat, hold = None, None
            if nested:
                timers[0].record("device_wait", 0.0)
            elif alongside and (hold := preemption.begin_alongside(parts)) is not None:
                timers[0].record("device_wait", 0.0)
            else:
                with timers[0].phase("device_wait"):
                    seat = gate.acquire(parts)
            for t in timers[1:]:
                t.record("device_wait", timers[0].ms["device_wait"])
            # a stage on a lent slot yields to no one: the stage that lent it waits for it
            preemptible = self._yields and seat is not None and not seat.lent
            if preemptible:
                preemption.wait_to_begin(parts, timers)  # while a higher lane's stage runs at a yield point
            yield_point = preemption.yield_point(parts, timers) if preemptible else None
            try:
                with self._lock:
                    self.acct.device_held(d)
                try:
                    key = parts[0].job.key
                    self.residency.ensure(d, key, timers[0])
                    # a lane above priority 0: its kernels first where SMs come free (Backend.urgent)
                    with backend.urgent() if parts[0].job.lane_priority > 0 else contextlib.nullcontext():
                        if len(parts) == 1:
                            sums = [backend.device_stage(key.key, synths[0], timers[0], self.config.threads,
                                                         with_g2=self.g2_on_device, yield_point=yield_point)]
                        else:
                            sums = backend.device_stage_batch(key.key, synths, timers, self.config.threads,
                                                              with_g2=self.g2_on_device, yield_point=yield_point)
                finally:
                    with self._lock:
                        self.acct.device_freed(d)
            finally:
                let_go = time.time()
                for t in timers:
                    t.let_go = let_go
                if yield_point is not None:
                    yield_point.close()  # a higher lane's stage holds the device until here
                if seat is not None:
                    gate.release(seat)
                if hold is not None:
                    preemption.end_alongside(hold)
            for part, synth, s in zip(parts, synths, sums):
                part.sums = s
                part.w = synth.witness
                with self.book.cv:  # a, b, c and H are gone: give their bytes back
                    self.book.release_locked(part, part.est.buffers)

        return work

    def _lane_worker(self, d: int) -> stages.Stage:
        """The device stage of device d's lane worker: partitions of lanes above priority 0 only, one at a time."""
        return stages.Stage("device", lambda: self._device_q.get_matching(lambda p: p.job.lane_priority > 0,
                                                                          self._stopping),
                            None, self._hand_on(self._final_q), queue_phase="device_queue", wait_phase="device_wait",
                            work_batch=self._device_work(d, alongside=True))

    def _nested_stage(self, d: int) -> stages.Stage:
        """The device stage as run at a yield point of device d (run_nested)."""
        return stages.Stage("device", lambda: None, None, self._hand_on(self._final_q), queue_phase="device_queue",
                            wait_phase="device_wait", work_batch=self._device_work(d, nested=True))

    def run_nested(self, d: int, parts: list, worker: str) -> int:
        """Partitions taken from the device queue at a yield point of a stage on device d: their device stage, on
        the paused stage's thread (engine/preempt.py), then on to finalize. Returns how many ran (not dropped)."""
        now = time.monotonic()
        batch = []
        for p in parts:
            p.device_taken = True
            p.timings["device_queue"] = (now - p.t_ready) * 1000
            if not self.dropped(p):
                batch.append(p)
        if batch:
            stages.run_batch(self._nested[d], batch, worker, self)
        return len(batch)

    def _finalize(self, part: Partition, timer) -> None:
        job, lk = part.job, part.job.key
        proof = finalize(lk.key, part.w, part.sums, timer, self.config.threads)
        if job.batch_verify:  # verified with the job's other proofs, by the last partition assembled
            part.result = proof
            with self._lock:
                job.n_finalized += 1
                last = job.n_finalized == len(job.partitions)
            if last:
                self._batch_verify(job, timer)
        elif self.config.self_verify:
            with timer.phase("verify"):
                ok = verify_with_key(lk.vk_points, proof.public, proof.proof)
            if not ok:
                proof, ok = self._wasm_witness_proof(part, timer) or (proof, ok)
            if not ok:
                self._self_verify_failed(job, [part])
        if self.keys.spoiled(lk):  # the key's file changed while this job read it: fail() says so
            raise stages.StageFailed("the key changed on disk")
        if not job.batch_verify:
            part.result = proof

    def _batch_verify(self, job: Job, timer) -> None:
        """Every proof of the job, assembled, verified as one batch (verifier.batch: one random linear
        combination of their equations; bisection names the bad ones). A bad one gets what a proof verified on
        its own gets: the native-witness safety net, then the job's failure naming its partition."""
        parts = job.partitions
        with timer.phase("verify"):
            bad = verify_batch(job.key.vk, [(p.result.public, p.result.proof) for p in parts],
                               threads=self.config.threads).bad
        failed = []
        for p in (parts[i] for i in bad):
            retried = self._wasm_witness_proof(p, timer)
            if retried is not None:
                proof, ok = retried
                if ok:  # into the Proof object the partition already carries (its worker may be completing it)
                    p.result.proof, p.result.public = proof.proof, proof.public
                    continue
            failed.append(p)
        if failed:
            self._self_verify_failed(job, failed)
        for p in parts:  # kept for the safety net only: the finished job need not hold them
            p.inputs = None

    def _self_verify_failed(self, job: Job, parts: list) -> None:
        """Count and log proofs that failed self-verification, and fail their job (an InputError: the request's fault)."""
        with self._lock:
            for _ in parts:
                self.acct.count("self_verify_failed")
        names = ", ".join(str(p.index) for p in parts)
        how = f" (batch-verified with the job's {len(job.partitions)} proof(s))" if job.batch_verify else ""
        # the witness passed the cheap checks but does not satisfy the constraints (a witness for another circuit
        # of the same size, a changed value), or the key is damaged: the request's fault first of all, so
        # INVALID_ARGUMENT for the client, not an internal error
        log.warning("job %s partition(s) %s: self-verification failed%s: the proof does not verify against the "
                    "key's vk; not returned", job.id, names, how)
        where = f"partition{'s' if len(parts) > 1 else ''} {names}" if len(job.partitions) > 1 else ""
        raise stages.PartitionsFailed(f"self-verification failed{how}: the proof did not verify against the key's "
                                      "verification key, so the witness does not satisfy the circuit's constraints "
                                      "(or the key is damaged); not returned", where)

    def _wasm_witness_proof(self, part: Partition, timer):
        """The safety net of native witnesses (witness.wasm_safety_net, the CLI's too): one whose proof failed
        self-verification is recomputed on the wasm engine and proved again, on the CPU, outside the pipeline
        (it should never happen: it is counted, and logged as the bug it would be). (proof, verified), or None
        for a witness the native engine did not make (nothing to fall back on)."""
        lk = part.job.key

        def report() -> None:
            with self._lock:
                self.acct.count("witness_failed")
            log.error("job %s partition %d: the proof of a native witness failed self-verification; recomputing "
                      "the witness on the wasm engine (please report this with the circuit)", part.job.id, part.index)

        def attempt(witness):
            part.inputs = None
            proof = prove(lk.key, witness, threads=self.config.threads, timer=timer,
                          witness_name=f"witness of job {part.job.id} partition {part.index}")
            return proof, verify_with_key(lk.vk_points, proof.public, proof.proof)

        if part.witness_source not in NATIVE_SOURCES:
            return None
        return wasm_safety_net(lk.require_wasm(), part.inputs, part.witness_source, attempt, report=report,
                               timed=lambda: timer.phase("witness_wasm"))

    def _hand_on(self, q: StageQueue, left_synthesis: bool = False):
        def put(part: Partition) -> None:
            if self.dropped(part) or not q.put(part, self._stopping):
                self.dropped(part)
            if left_synthesis:  # its synthesis worker is free for the next partition (engine/lanes.py)
                self.book.left_synthesis(part)

        return put

    def _complete(self, part: Partition) -> None:
        job = part.job
        part.timings["total"] = (time.monotonic() - job.submitted) * 1000
        part.result.timings = dict(part.timings)
        log.info("partition done job=%s part=%d/%d key=%s priority=%d %s", job.id, part.index + 1,
                 len(job.partitions), job.key.id, job.priority,
                 " ".join(f"{k}_ms={v:.1f}" for k, v in ordered(part.timings)))
        self.book.complete(part)

    # ------------------------------------------------------------------ bookkeeping (the worker loop calls these)

    def dropped(self, part: Partition) -> bool:
        return self.book.dropped(part, self._stopping)

    def fail(self, part: Partition, error: str, kind: str, where: str = "") -> None:
        why = self.keys.spoiled(part.job.key)
        if why:  # what the job read from a key file changed under it: that, not its symptom, is the job's error
            error, kind, where = (f"{why}; this job read it, so it failed without a result; the key is reloaded "
                                  f"from its path at its next job"), KeyChanged.kind, ""
        self.book.fail(part, error, kind, where)
