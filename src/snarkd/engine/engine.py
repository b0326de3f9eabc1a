"""The pipelined proving engine: a plain object (start, submit, await_, cancel, status, stop).

    submit ──► pending (priority heap) ──admit when the memory budget fits──►
      synthesis workers (CPU: witness calculation from inputs, check, A·w, B·w)
        ──► device queue (bounded, by priority) ──►
      device workers, workers_per_device per device, pinned; the device lock is
      held for the device work only (NTTs, H, the G1 MSMs; the G2 MSM too when
      g2_on_device); a/b/c are freed and their budget released right after
        ──► finalize queue (bounded) ──►
      finalize workers (CPU: G2 MSM, blinding, assembly, self-verification)
        ──► the job completes when all its partitions have

A job is one key and one or more partitions (witnesses, or inputs JSON when the
key has its circuit .wasm). Each partition carries its phase timings (ms) and
wall-clock spans per stage and worker, and is logged as one structured line.
Cancellation ends a job at once; its queued partitions are dropped and running
ones leave at the next stage boundary. The gRPC service wraps this object; it
has no gRPC in it, so it can run inside another host process (a Ray actor).

    eng = Engine(EngineConfig(synthesis_workers=2))
    eng.keys.load("chain", "chain.zkey")
    eng.start()
    job = eng.submit("chain", open("w.wtns", "rb").read())
    eng.await_(job.id).result.proof
    eng.stop()
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import asdict, dataclass

import psutil

from snarkd.engine.devices import Device, device_stage_kwargs, pin_thread, resolve_devices
from snarkd.engine.errors import AlreadyExists, NotFound, TooLarge, Unavailable
from snarkd.engine.jobs import CANCELLED, COMPLETED, ENDED, FAILED, QUEUED, RUNNING, Job, Partition, SpanTimer
from snarkd.engine.keys import KeyStore
from snarkd.engine.memory import MemoryBudget, estimate, rss
from snarkd.errors import InputError
from snarkd.prover import device_stage, finalize, synthesize

log = logging.getLogger("snarkd")

KEEP_FINISHED = 1024  # finished jobs remembered for await_
POLL = 0.2


@dataclass
class EngineConfig:
    synthesis_workers: int = 2
    threads: int = 0  # native threads per stage call (0 = all cores)
    devices: tuple = ()  # [gpus] devices (empty = auto: all GPUs, else the CPU)
    workers_per_device: int = 2
    msm_tables: str = "auto"  # [gpus] msm_tables: window tables for resident keys (auto | on | off)
    finalize_workers: int = 1
    queue_depth: int = 0  # capacity of the device and finalize queues (0 = device workers)
    memory_budget: int | str = "auto"
    g2_on_device: bool | str = "auto"  # G2 MSM in the device stage (else on CPU in finalize); auto: when all devices are GPUs
    self_verify: bool = True
    debug_delay_s: float = 0.0  # testing: stall each partition's synthesis this long

    @classmethod
    def from_config(cls, cfg) -> "EngineConfig":
        """From a validated snarkd.daemon.config.Config."""
        p = cfg.pipeline
        return cls(synthesis_workers=cfg.synthesis.workers, threads=cfg.synthesis.threads,
                   devices=tuple(cfg.gpus.devices), workers_per_device=cfg.gpus.workers_per_device,
                   msm_tables=cfg.gpus.msm_tables, finalize_workers=p.finalize_workers, queue_depth=p.queue_depth, memory_budget=cfg.memory.budget,
                   g2_on_device=p.g2_on_device, self_verify=p.self_verify,
                   debug_delay_s=float(os.environ.get("SNARKD_DEBUG_PROVE_DELAY_MS", "0") or 0) / 1000)


class _Stage:
    """A bounded priority queue between two stages."""

    def __init__(self, name: str, maxsize: int):
        self.name = name
        self.q: queue.PriorityQueue = queue.PriorityQueue(maxsize)

    def put(self, part: Partition, stopping: threading.Event) -> bool:
        item = (-part.job.priority, part.job.seq, part.index, part)
        while not stopping.is_set():
            try:
                self.q.put(item, timeout=POLL)
                return True
            except queue.Full:
                continue
        return False

    def get(self, stopping: threading.Event) -> Partition | None:
        while not stopping.is_set():
            try:
                return self.q.get(timeout=POLL)[3]
            except queue.Empty:
                continue
        return None

    def __len__(self) -> int:
        return self.q.qsize()


class Engine:
    def __init__(self, config: EngineConfig | None = None, keys: KeyStore | None = None):
        self.config = c = config or EngineConfig()
        self.keys = keys or KeyStore()
        self.keys.max_instances = c.synthesis_workers
        self.devices: list[Device] = resolve_devices(c.devices, c.msm_tables)
        # GPU backends compute A·w and B·w on the device (resident CSR): synthesis
        # then only checks the witness, which keeps the CPU side ahead of the GPUs
        self._sparse_on_host = any(d.backend is None for d in self.devices)
        self.g2_on_device = c.g2_on_device is True or (c.g2_on_device == "auto" and not self._sparse_on_host)
        self.budget = MemoryBudget(c.memory_budget)
        n_dev_workers = len(self.devices) * c.workers_per_device
        depth = c.queue_depth or max(1, n_dev_workers)
        self._device_q = _Stage("device", depth)
        self._final_q = _Stage("finalize", depth)
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._pending: list = []  # heap of (-priority, seq, index, Partition)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._device_locks = [threading.Lock() for _ in self.devices]
        self._busy = [0.0 for _ in self.devices]  # device-held seconds, per device
        self._busy_since: list[float | None] = [None for _ in self.devices]
        self._threads: dict[str, list[threading.Thread]] = {"synthesis": [], "device": [], "finalize": []}
        self._stopping = threading.Event()
        self._force = threading.Event()
        self._accepting = True
        self._started = False
        self._seq = itertools.count(1)
        self.in_flight = 0  # partitions admitted and not yet out of the pipeline
        self.counters = {"completed": 0, "failed": 0, "cancelled": 0, "submitted": 0, "rejected": 0,
                         "partitions_completed": 0, "self_verify_failed": 0}
        self.phase_ms: dict[str, float] = {}
        self.observers: list = []  # objects with on_partition(part) / on_job(job)
        self.t_start = time.monotonic()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "Engine":
        c = self.config
        for i in range(c.synthesis_workers):
            self._spawn("synthesis", f"synth-{i}", self._synthesis_worker)
        for d, dev in enumerate(self.devices):
            kwargs = device_stage_kwargs(dev)
            for k in range(c.workers_per_device):
                self._spawn("device", f"{dev.name}/w{k}", self._device_worker, d, kwargs)
        for i in range(c.finalize_workers):
            self._spawn("finalize", f"final-{i}", self._finalize_worker)
        self._started = True
        self.t_start = time.monotonic()
        log.info("engine started synthesis_workers=%d devices=%s workers_per_device=%d finalize_workers=%d "
                 "queue_depth=%d memory_budget=%d g2_on_device=%s self_verify=%s",
                 c.synthesis_workers, ",".join(d.name for d in self.devices), c.workers_per_device,
                 c.finalize_workers, self._device_q.q.maxsize, self.budget.budget, self.g2_on_device, c.self_verify)
        return self

    def _spawn(self, kind: str, name: str, target, *args) -> None:
        t = threading.Thread(target=target, args=(name, *args), name=name, daemon=True)
        t.start()
        self._threads[kind].append(t)

    @property
    def accepting(self) -> bool:
        return self._accepting and not self._stopping.is_set()

    @accepting.setter
    def accepting(self, value: bool) -> None:
        self._accepting = bool(value)

    def alive(self, kind: str | None = None) -> int:
        kinds = [kind] if kind else list(self._threads)
        return sum(t.is_alive() for k in kinds for t in self._threads[k])

    @property
    def workers_alive(self) -> int:
        """Synthesis workers alive (the daemon's `workers`)."""
        return self.alive("synthesis")

    def expected_workers(self) -> dict:
        c = self.config
        return {"synthesis": c.synthesis_workers, "device": len(self.devices) * c.workers_per_device,
                "finalize": c.finalize_workers}

    def all_alive(self) -> bool:
        return all(self.alive(k) == n for k, n in self.expected_workers().items())

    def stop(self, drain_timeout: float = 0.0) -> dict:
        """Take no new work; let running jobs finish up to drain_timeout; cancel the rest; stop the workers."""
        self._accepting = False
        deadline = time.monotonic() + drain_timeout
        with self._cv:
            while self._active_locked() and time.monotonic() < deadline and not self._force.is_set():
                self._cv.wait(min(POLL, max(0.0, deadline - time.monotonic())))
            left = [j for j in self._jobs.values() if j.state not in ENDED]
            for j in left:
                self._end_locked(j, CANCELLED, "cancelled: the daemon shut down before the job finished "
                                               f"(drain_timeout {drain_timeout:g}s)", "cancelled")
            self._stopping.set()
            self._cv.notify_all()
        return {"cancelled": len(left), "running_threads": [t.name for ts in self._threads.values() for t in ts
                                                           if t.is_alive()]}

    shutdown = stop  # the daemon's name for it

    def force(self) -> None:
        """End a drain now (a second SIGTERM)."""
        self._force.set()
        with self._cv:
            self._cv.notify_all()

    def join_workers(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for ts in self._threads.values():
            for t in ts:
                t.join(max(0.0, deadline - time.monotonic()))
        return self.alive() == 0

    def _active_locked(self) -> bool:
        return any(j.state not in ENDED for j in self._jobs.values())

    # ------------------------------------------------------------------ API

    def submit(self, key_id: str, witness=None, job_id: str = "", *, witnesses=None, inputs=None,
               priority: int = 0) -> Job:
        """Queue a job. witness / witnesses: .wtns bytes or parsed Witness objects (one per partition);
        inputs: input.json dicts or JSON texts (one per partition; needs the key's .wasm).
        Bad requests raise InputError here, before any work is queued."""
        if not self.accepting:
            raise Unavailable("the engine is not accepting new proofs (it is shutting down)")
        lk = self.keys.acquire(key_id)
        try:
            parts = self._parse_partitions(lk, witness, witnesses, inputs)
            job_id = job_id or f"{next(self._seq)}-{uuid.uuid4().hex[:12]}"
            job = Job(job_id, lk, priority=int(priority))
            from_inputs = parts[0][1] is not None
            est = estimate(lk.key, from_inputs)
            if est.total > self.budget.budget:
                raise TooLarge(f"a partition of key {key_id!r} needs about {est.total / 2**20:.1f} MiB, more than "
                               f"the whole memory budget ({self.budget.budget / 2**20:.1f} MiB): it could never run")
            job.partitions = [Partition(job, i, witness=w, inputs=inp, est=est) for i, (w, inp) in enumerate(parts)]
            with self._cv:
                if job_id in self._jobs:
                    raise AlreadyExists(f"job id {job_id!r} is already in use")
                job.seq = next(self._seq)
                self._jobs[job_id] = job
                self.counters["submitted"] += 1
                now = time.monotonic()
                for p in job.partitions:
                    p.t_ready = now
                    heapq.heappush(self._pending, (-job.priority, job.seq, p.index, p))
                self._trim_locked()
                self._cv.notify_all()
        except BaseException:
            self.counters["rejected"] += 1
            self.keys.release(lk)
            raise
        log.debug("job queued id=%s key=%s partitions=%d priority=%d", job_id, key_id, len(parts), job.priority)
        return job

    def _parse_partitions(self, lk, witness, witnesses, inputs) -> list[tuple]:
        from snarkd.formats.wtns import Witness, check_witness, parse_wtns

        given = [x for x in (witness is not None and witness != b"", bool(witnesses), bool(inputs)) if x]
        if len(given) > 1:
            raise InputError("give one witness, a list of witnesses, or inputs, not several")
        if inputs:
            out = []
            for i, obj in enumerate(inputs):
                if isinstance(obj, (str, bytes)):
                    try:
                        obj = json.loads(obj)
                    except (ValueError, UnicodeDecodeError) as exc:
                        raise InputError(f"inputs of partition {i} for key {lk.id!r}: not valid JSON: {exc}") from None
                if not isinstance(obj, dict):
                    raise InputError(f"inputs of partition {i} for key {lk.id!r}: expected a JSON object")
                out.append((None, obj))
            lk.calculator  # noqa: B018 - fails now (InputError) when the key has no .wasm
            return out
        items = list(witnesses) if witnesses else [witness]
        out = []
        for i, data in enumerate(items):
            part = f" (partition {i})" if len(items) > 1 else ""
            if isinstance(data, Witness):
                w = data
                name = f"witness{part} for key {lk.id!r}"
            else:
                data = bytes(data or b"")
                name = f"witness{part} ({len(data)} bytes) for key {lk.id!r}"
                if not data:
                    raise InputError(f"{name}: empty witness")
                try:
                    w = parse_wtns(data, name)
                except InputError:
                    raise
                except Exception as exc:  # a parser that trips on garbage is still the request's fault
                    raise InputError(f"{name}: not a valid .wtns file ({exc})") from None
            check_witness(w, lk.key.zkey, name)
            out.append((w, None))
        return out

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"no job with id {job_id!r} (finished jobs are kept for the last {KEEP_FINISHED})")
        return job

    def await_(self, job_id: str, timeout: float | None = None) -> Job:
        job = self.get(job_id)
        job.done.wait(timeout)
        return job

    def cancel(self, job_id: str, why: str = "cancelled by request") -> tuple[str, bool]:
        job = self.get(job_id)
        with self._cv:
            if job.state in ENDED:
                return job.state, False
            self._end_locked(job, CANCELLED, why, "cancelled")
            return job.state, True

    def stats(self) -> dict:
        """Job counts and counters (the daemon's Status/Metrics)."""
        with self._lock:
            queued = sum(j.state == QUEUED for j in self._jobs.values())
            running = sum(j.state == RUNNING for j in self._jobs.values())
            return {"queued": queued, "running": running, **self.counters, "phase_ms": dict(self.phase_ms)}

    def status(self) -> dict:
        """Everything about the engine now, as plain data (for /status and embedding hosts)."""
        now = time.monotonic()
        with self._lock:
            jobs = {"queued": sum(j.state == QUEUED for j in self._jobs.values()),
                    "running": sum(j.state == RUNNING for j in self._jobs.values()), **self.counters}
            busy = [b + (now - s if s is not None else 0.0) for b, s in zip(self._busy, self._busy_since)]
            mem = self.budget.snapshot()
            pending = len(self._pending)
            in_flight = self.in_flight
        up = max(1e-9, now - self.t_start)
        cpu = psutil.Process().cpu_times()
        return {
            "accepting": self.accepting, "started": self._started, "uptime_s": up,
            "jobs": jobs,
            "queues": {"pending": pending, "device": len(self._device_q), "finalize": len(self._final_q),
                       "capacity": self._device_q.q.maxsize},
            "partitions_in_flight": in_flight,
            "cpu_s": cpu.user + cpu.system,  # the whole process's CPU time (the bench: cores used = d cpu_s / wall)
            "memory": {**mem, "rss": rss(), "keys": self.keys.resident_bytes()},
            "devices": [{"name": d.name, "index": d.index, "busy_s": b, "busy_fraction": b / up,
                         "workers": self.config.workers_per_device} for d, b in zip(self.devices, busy)],
            "workers": {k: {"expected": n, "alive": self.alive(k)} for k, n in self.expected_workers().items()},
            "config": {**{k: v for k, v in asdict(self.config).items() if k != "debug_delay_s"},
                       "g2_on_device": self.g2_on_device},  # as resolved ("auto" -> where it runs)
            "phase_ms": dict(self.phase_ms),
        }

    def device_busy_seconds(self) -> dict[str, float]:
        now = time.monotonic()
        with self._lock:
            return {d.name: b + (now - s if s is not None else 0.0)
                    for d, b, s in zip(self.devices, self._busy, self._busy_since)}

    # ------------------------------------------------------------------ bookkeeping (under the lock)

    def _trim_locked(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.state in ENDED]
        for k in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[k]

    def _end_locked(self, job: Job, state: str, error: str = "", kind: str = "") -> None:
        if job.state in ENDED:
            return
        job.state, job.error, job.error_kind = state, error, kind
        job.finished = time.monotonic()
        self.counters[{COMPLETED: "completed", FAILED: "failed", CANCELLED: "cancelled"}[state]] += 1
        if state != COMPLETED:
            # drop its queued partitions now; running ones leave at their next stage boundary
            mine = [e for e in self._pending if e[3].job is job]
            if mine:
                self._pending = [e for e in self._pending if e[3].job is not job]
                heapq.heapify(self._pending)
                for e in mine:
                    self._exit_locked(e[3])
        job.done.set()
        if state != COMPLETED or log.isEnabledFor(logging.INFO):
            log.info("job %s id=%s key=%s partitions=%d priority=%d ms=%.1f%s", state.lower(), job.id, job.key.id,
                     len(job.partitions), job.priority, (job.finished - job.submitted) * 1000,
                     f" error={error}" if error else "")
        self._maybe_release_locked(job)
        for o in self.observers:
            try:
                o.on_job(job)
            except Exception:  # noqa: BLE001 - metrics must never break proving
                log.exception("observer failed")
        self._cv.notify_all()

    def _exit_locked(self, part: Partition) -> None:
        """The partition leaves the pipeline: its memory goes back to the budget."""
        if part.exited:
            return
        part.exited = True
        if part.reserved:
            self.budget.release(part.reserved)
            part.reserved = 0
        if part.state == RUNNING:
            self.in_flight -= 1
        part.drop_buffers()
        self._maybe_release_locked(part.job)
        self._cv.notify_all()

    def _maybe_release_locked(self, job: Job) -> None:
        if job.released or job.state not in ENDED or not all(p.exited for p in job.partitions):
            return
        job.released = True
        # KeyStore has its own lock, never taken around ours: no lock-order cycle
        self.keys.release(job.key, proved=job.n_done if job.state == COMPLETED else 0)

    def _release_locked(self, part: Partition, nbytes: int) -> None:
        nbytes = min(nbytes, part.reserved)
        part.reserved -= nbytes
        self.budget.release(nbytes)
        self._cv.notify_all()

    def _drop_if_ended(self, part: Partition) -> bool:
        with self._cv:
            if part.job.state in ENDED or self._stopping.is_set():
                self._exit_locked(part)
                return True
        return False

    def _fail(self, part: Partition, error: str, kind: str) -> None:
        with self._cv:
            self._end_locked(part.job, FAILED, f"partition {part.index}: {error}" if len(part.job.partitions) > 1
                             else error, kind)
            self._exit_locked(part)

    # ------------------------------------------------------------------ stages

    def _admit(self) -> Partition | None:
        """The highest-priority pending partition, once its bytes fit the budget (reserved here)."""
        with self._cv:
            waited = False
            while True:
                if self._stopping.is_set():
                    return None
                if self._pending:
                    part = self._pending[0][3]
                    if self.budget.fits(part.est.total):
                        heapq.heappop(self._pending)
                        self.budget.reserve(part.est.total)
                        part.reserved = part.est.total
                        part.state = RUNNING
                        self.in_flight += 1
                        job = part.job
                        now = time.monotonic()
                        part.timings["queue_wait"] = (now - part.t_ready) * 1000
                        if job.state == QUEUED:
                            job.state, job.started = RUNNING, now
                        return part
                    if not waited:
                        self.budget.waits += 1
                        waited = True
                        log.debug("partition %s/%d waits for memory: needs %d, %d of %d in use", part.job.id,
                                  part.index, part.est.total, self.budget.used, self.budget.budget)
                self._cv.wait(POLL)

    def _synthesis_worker(self, name: str) -> None:
        threads = self.config.threads
        while True:
            part = self._admit()
            if part is None:
                return
            job, lk = part.job, part.job.key
            timer = SpanTimer(name)
            t0 = time.time()
            try:
                if self.config.debug_delay_s:
                    job.done.wait(self.config.debug_delay_s)  # wakes early when the job is cancelled
                if self._drop_if_ended(part):
                    continue
                witness = part.witness
                if witness is None:
                    with timer.phase("witness"):
                        witness = lk.calculator.calculate(part.inputs)
                part.witness = part.inputs = None
                synth = synthesize(lk.key, witness, timer, threads,
                                   witness_name=f"witness of job {job.id} partition {part.index}",
                                   sparse=self._sparse_on_host)
                del witness
            except InputError as exc:
                self._fail(part, str(exc), "input")
                continue
            except Exception as exc:  # noqa: BLE001
                log.exception("job %s partition %d: synthesis failed", job.id, part.index)
                self._fail(part, f"internal error in synthesis: {exc!r}", "internal")
                continue
            part.synth = synth
            part.timings.update(timer.ms)
            part.spans.extend(timer.spans)
            t1 = time.time()
            part.timings["synthesis"] = (t1 - t0) * 1000
            part.span("synthesis", name, t0, t1)
            part.t_ready = time.monotonic()
            if self._drop_if_ended(part) or not self._device_q.put(part, self._stopping):
                self._drop_if_ended(part)
                continue

    def _device_worker(self, name: str, d: int, kwargs: dict) -> None:
        threads, with_g2 = self.config.threads, self.g2_on_device
        lock = self._device_locks[d]
        pin_thread(self.devices[d])  # every worker stays on its device index for its whole life
        while True:
            part = self._device_q.get(self._stopping)
            if part is None:
                return
            part.timings["device_queue"] = (time.monotonic() - part.t_ready) * 1000
            if self._drop_if_ended(part):
                continue
            lk = part.job.key
            timer = SpanTimer(name)
            tw = time.time()
            try:
                with lock:
                    t0 = time.time()
                    with self._lock:
                        self._busy_since[d] = time.monotonic()
                    try:
                        synth = part.synth
                        part.synth = None
                        sums = device_stage(lk.key, synth, timer, threads, with_g2=with_g2, **kwargs)
                    finally:
                        with self._lock:
                            self._busy[d] += time.monotonic() - self._busy_since[d]
                            self._busy_since[d] = None
                        t1 = time.time()
                part.w = synth.witness
                del synth
            except Exception as exc:  # noqa: BLE001
                log.exception("job %s partition %d: device stage failed", part.job.id, part.index)
                self._fail(part, f"internal error in the device stage: {exc!r}", "internal")
                continue
            part.sums = sums
            part.timings.update(timer.ms)
            part.spans.extend(timer.spans)
            part.timings["device_wait"] = (t0 - tw) * 1000
            part.timings["device"] = (t1 - t0) * 1000
            part.span("device", name, t0, t1)
            with self._cv:  # a, b, c and H are gone: give their bytes back
                self._release_locked(part, part.est.buffers)
            part.t_ready = time.monotonic()
            if self._drop_if_ended(part) or not self._final_q.put(part, self._stopping):
                self._drop_if_ended(part)
                continue

    def _finalize_worker(self, name: str) -> None:
        threads = self.config.threads
        while True:
            part = self._final_q.get(self._stopping)
            if part is None:
                return
            part.timings["finalize_queue"] = (time.monotonic() - part.t_ready) * 1000
            if self._drop_if_ended(part):
                continue
            job, lk = part.job, part.job.key
            timer = SpanTimer(name)
            t0 = time.time()
            try:
                proof = finalize(lk.key, part.w, part.sums, timer, threads)
                ok = True
                if self.config.self_verify:
                    from snarkd.verifier import verify

                    with timer.phase("verify"):
                        ok = verify(lk.vk, proof.public, proof.proof)
            except Exception as exc:  # noqa: BLE001
                log.exception("job %s partition %d: finalize failed", job.id, part.index)
                self._fail(part, f"internal error in finalize: {exc!r}", "internal")
                continue
            t1 = time.time()
            part.timings.update({k: v for k, v in timer.ms.items()})
            part.spans.extend(timer.spans)
            part.timings["finalize"] = (t1 - t0) * 1000
            part.span("finalize", name, t0, t1)
            part.timings["total"] = (time.monotonic() - job.submitted) * 1000
            if not ok:
                with self._lock:
                    self.counters["self_verify_failed"] += 1
                log.error("job %s partition %d: self-verification FAILED: the proof does not verify against the "
                          "key's vk; it is not returned", job.id, part.index)
                self._fail(part, "self-verification failed: the proof did not verify against the key's "
                                 "verification key (not returned)", "internal")
                continue
            proof.timings = dict(part.timings)
            part.result = proof
            self._log_partition(part, name)
            with self._cv:
                if job.state in ENDED:  # cancelled meanwhile: the result is dropped
                    self._exit_locked(part)
                    continue
                part.state = COMPLETED
                self.in_flight -= 1
                job.n_done += 1
                self.counters["partitions_completed"] += 1
                for k, v in part.timings.items():
                    self.phase_ms[k] = self.phase_ms.get(k, 0.0) + float(v)
                for o in self.observers:
                    try:
                        o.on_partition(part)
                    except Exception:  # noqa: BLE001
                        log.exception("observer failed")
                part.exited = True
                if part.reserved:
                    self._release_locked(part, part.reserved)
                part.sums = part.w = part.synth = None
                if job.n_done == len(job.partitions):
                    self._end_locked(job, COMPLETED)
                self._maybe_release_locked(job)

    def _log_partition(self, part: Partition, worker: str) -> None:
        t = part.timings
        fields = " ".join(f"{k}_ms={t[k]:.1f}" for k in ("queue_wait", "witness", "synthesis", "spmv", "device_wait",
                                                          "ntt", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2",
                                                          "device", "verify", "finalize", "total") if k in t)
        log.info("partition done job=%s part=%d/%d key=%s priority=%d %s", part.job.id, part.index + 1,
                 len(part.job.partitions), part.job.key.id, part.job.priority, fields)
