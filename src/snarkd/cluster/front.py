"""The cluster front: the engine contract (engine/contract.py) over engine actors on Ray, so the daemon's gRPC
service, health, status and metrics run on it unchanged.

    submit ─► parse + check the witness headers against the front's copy of the key (a bad request fails
              here, before anything crosses the network)
          ─► wait for room in the witness budget ─► ray.put each partition's Witness (one copy into the
              front node's object store; actors on that node map it, others receive it once)
          ─► the admission queue (priority, then submission order)
    dispatcher ─► each queued task to the ready actor that holds its key, has room, and has the least
              outstanding work ─► actor.prove(...) ─► a Ray future
    reply  ─► proof: the job's partition, once (book.proved) | its own failure: the job fails |
              the actor died: the task is queued again for another actor, up to max_attempts

Partitions of one job are tasks of their own, so they spread over actors.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, replace
from functools import partial

import psutil
import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from snarkd.cluster import connect as rayconn
from snarkd.cluster.actor import ProveError
from snarkd.cluster.book import Book, Task
from snarkd.cluster.keys import ClusterKeyStore, spec_of
from snarkd.cluster.members import POLL, Members
from snarkd.cluster.replies import Replies
from snarkd.cluster.router import READY, choose, returned
from snarkd.cluster.status import front_key_status, front_status
from snarkd.config import Config, EngineConfig
from snarkd.engine import Job, Partition
from snarkd.engine.contract import EngineBase
from snarkd.engine.lanes import Lanes
from snarkd.engine.status import EngineStatus, KeyStatus
from snarkd.engine.errors import Cancelled, NotFound, Unavailable
from snarkd.errors import DaemonError, SnarkdError

log = logging.getLogger("snarkd")
ADMIT_WAIT = 300.0  # seconds submit waits for room in the witness budget before UNAVAILABLE
LOST = (ActorDiedError, ActorUnavailableError, RayActorError)
ELSEWHERE = (NotFound.kind, Unavailable.kind)  # an actor's refusal at submit: the partition runs on another


def actor_error(exc: ProveError) -> SnarkdError:
    """The error a prove call that failed on a live actor stands for: the (kind, message) that crossed the
    boundary, rebuilt into the class of its kind (snarkd/errors.py). A cancel inside the actor's engine is not
    the client's: the job fails with an internal error naming it."""
    err = exc.error()
    return SnarkdError(f"{exc.message} (inside the actor)") if err.kind == Cancelled.kind else err


def witness_budget(value) -> int:
    """[cluster] witness_budget: bytes; "auto" = a quarter of the memory available now."""
    return int(psutil.virtual_memory().available * 0.25) if value == "auto" else int(value)


class ClusterEngine(EngineBase):
    what = "the cluster front"

    def __init__(self, config: Config, keys: ClusterKeyStore | None = None):
        super().__init__()
        keys = keys if keys is not None else ClusterKeyStore(config.keys.param_cache, config.keys.wasm_cache)
        self.cfg, self.settings = config, config.cluster
        self.keys = keys
        # every actor's engine: this config's engine settings, on the GPU Ray gives the actor
        self.config = replace(EngineConfig.from_config(config), devices=())
        self.devices: list = []  # ProvingEngine.devices: the front proves on none (its actors do, on their own GPUs)
        self.actor_settings = asdict(self.config)
        self.book = Book(witness_budget(self.settings.witness_budget), self.settings.max_attempts, keys,
                         self._notify, max_active=self.config.max_queued_jobs)
        self.budget = self.book.budget
        self.book.eta.stages = lambda: {"actor": self._lanes()}  # the completion model's one stage (engine/eta.py)
        self.book.finish_past_deadline = self.config.finish_past_deadline
        # lanes order the front's queue and bound its weight; shares of slots and memory are each actor's own
        self.book.lanes, self.book.max_weight = Lanes(self.config.lanes), self.config.max_queued_weight
        self.book.self_verify = self.config.self_verify  # the actors' engines run with the front's settings
        self.members: Members | None = None
        self.replies = Replies()
        self.ray_info: dict = {}
        self._threads: list[threading.Thread] = []
        keys.on_load, keys.on_unload = self._key_loaded, self._key_unloaded

    def _lanes(self) -> int:
        """Partitions served at once, for the completion model: the ready actors (read under the book's lock)."""
        m = self.members
        return max(1, sum(a.state == READY for a in m.actors.values())) if m else 1

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "ClusterEngine":
        try:
            return self._start()
        except BaseException:
            self.stop(0.0)
            raise

    def _start(self) -> "ClusterEngine":
        s = self.settings
        self.ray_info = rayconn.connect(s.address)
        self.members = Members(s, self.actor_settings, self.cfg.daemon.log_level, self.book.cv, self.replies)
        for lk in self.keys.list():  # preloaded before start: every actor loads them before it is ready
            self.members.specs[lk.id] = spec_of(lk)
        for name, loop in (("cluster-monitor", self._monitor), ("cluster-dispatch", self._dispatch),
                           ("cluster-replies", partial(self.replies.run, self._stopping))):
            t = threading.Thread(target=loop, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        self._started, self.t_start = True, time.monotonic()
        deadline = time.monotonic() + s.ready_timeout
        with self.book.cv:
            while len([a for a in self.members.actors.values() if a.state == READY]) < s.min_actors:
                if self._force.is_set():
                    raise DaemonError("stopped while waiting for engine actors")
                if time.monotonic() >= deadline:
                    actors = {a.name: a.state + (f" ({a.error})" if a.error else "")
                              for a in self.members.actors.values()}
                    raise DaemonError(f"[cluster] min_actors = {s.min_actors}: not that many engine actors were "
                                      f"ready within ready_timeout ({s.ready_timeout:g}s); nodes alive: "
                                      f"{sum(bool(n.get('Alive')) for n in self.members.nodes.values())}, "
                                      f"actors: {actors or 'none'}")
                self.book.cv.wait(0.2)
        log.info("cluster front started address=%s actors_ready=%d witness_budget=%d", s.address,
                 len(self.members.ready()), self.budget.budget)
        return self

    def _monitor(self) -> None:
        while not self._stopping.is_set():
            try:
                self.members.poll()
            except Exception:  # noqa: BLE001 - the monitor must outlive a failed poll (GCS restarting)
                log.exception("cluster monitor: poll failed")
            self._stopping.wait(POLL)

    def alive(self) -> int:
        return sum(t.is_alive() for t in self._threads)

    def all_alive(self) -> bool:
        return self.alive() == len(self._threads) == 3

    def _shut_down(self) -> list[str]:
        # no thread of ours may touch Ray once it is shut down (its core worker then ends the process)
        self.join_workers(5.0)
        if self.members is not None:
            self.members.stop()
        rayconn.disconnect()
        return [t.name for t in self._threads if t.is_alive()]

    def join_workers(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    # ------------------------------------------------------------------ keys

    def _key_loaded(self, lk) -> None:
        if self.members is None:  # preload, before start: start hands it to every actor
            return
        self.members.distribute(spec_of(lk), self.settings.ready_timeout)

    def _key_unloaded(self, key_id: str) -> None:
        if self.members is not None:
            self.members.drop_key(key_id)

    # ------------------------------------------------------------------ API

    def _queue(self, job: Job, parts: list, reload_ms: float) -> None:
        job.partitions = [Partition(job, i) for i in range(len(parts))]
        sizes = [int(w.values.nbytes) if w is not None else len(str(inp)) for w, inp in parts]
        self.book.reserve(sum(sizes), time.monotonic() + ADMIT_WAIT, self._stopping)
        try:
            # one copy into the object store; the request's buffers (or the mapped file) are free after this
            tasks = [Task(p, witness_ref=ray.put(w) if w is not None else None, inputs=inp, nbytes=n,
                          units=int(job.key.key.domain_size))
                     for p, (w, inp), n in zip(job.partitions, parts, sizes)]
            self.book.add(job, tasks)
        except BaseException:
            self.book.unreserve(sum(sizes))
            raise

    def _cancelled(self, running: list[Task]) -> None:
        for t in running:  # best effort: the actor's engine drops it at its next stage boundary
            a = self.members.actors.get(t.actor) if self.members else None
            if a is not None and a.handle is not None:
                a.handle.cancel.remote(t.name)

    def status(self) -> EngineStatus:
        """The front now, plus its cluster section (cluster/status.py)."""
        return front_status(self)

    def key_status(self, lk) -> KeyStatus:
        return front_key_status(self, lk)

    # ------------------------------------------------------------------ dispatch and replies

    def _choose(self, task: Task):
        return choose(self.members.actors.values(), task.key_id, task.units)

    def _room(self) -> bool:
        return any(a.state == READY and a.outstanding < a.capacity for a in self.members.actors.values())

    def _dispatch(self) -> None:
        while not self._stopping.is_set():
            batch = self.book.take(self._choose, self._room)
            for task, actor in batch:
                self._send(task, actor)
            if not batch:
                with self.book.cv:
                    self.book.cv.wait(0.05)

    def _send(self, task: Task, actor) -> None:
        attempt = task.attempts
        try:
            job = task.job  # its lane, and what is left of its deadline (judged here already: not again there)
            left = max(0.001, job.deadline - time.monotonic()) if job.deadline else None
            ref = actor.handle.prove.remote(task.key_id, task.name, task.witness_ref, task.inputs, job.priority,
                                            job.lane, left)
        except Exception as exc:  # noqa: BLE001 - the handle is unusable: like a death
            self.replies.call(self._reply, task, actor, attempt, None, exc)
            return
        self.replies.when_done(ref, partial(self._on_future, task, actor, attempt))

    def _on_future(self, task: Task, actor, attempt: int, fut) -> None:
        exc = fut.exception()
        self._reply(task, actor, attempt, None if exc else fut.result(), exc)

    def _reply(self, task: Task, actor, attempt: int, result, exc) -> None:
        with self.book.cv:
            returned(actor, task.units)
            if exc is None:
                actor.completed_one(time.monotonic())
            self.book.cv.notify_all()
        try:
            if exc is None:
                self.book.proved(task, attempt, result)
            elif isinstance(exc, ProveError) and (err := actor_error(exc)).kind in ELSEWHERE:
                # the actor cannot take it now (key unloaded there, engine stopping): another one may
                if err.kind == NotFound.kind:
                    with self.book.cv:
                        actor.keys.pop(task.key_id, None)
                self.book.lost(task, attempt, actor.name, str(err))
            elif isinstance(exc, ProveError):
                with self.book.cv:
                    actor.failed += 1
                self.book.failed(task, attempt, err.kind, str(err))
            elif isinstance(exc, LOST) or not isinstance(exc, RayTaskError):
                with self.book.cv:
                    actor.lost += 1
                self.members.mark_dead(actor, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                self.book.lost(task, attempt, actor.name, f"{actor.name} died ({type(exc).__name__})")
            else:  # a bug inside the actor's method: the job fails, the actor lives on
                log.error("task %s on %s failed: %s", task.name, actor.name, exc)
                with self.book.cv:
                    actor.failed += 1
                self.book.failed(task, attempt, "internal", f"internal error on {actor.name}: {exc}")
        except Exception:  # noqa: BLE001 - one bad reply must not stop the others
            log.exception("cluster front: handling the reply of %s failed", task.name)
