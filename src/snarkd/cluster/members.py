"""Nodes and engine actors: who is there, who is ready, who died.

A monitor thread polls Ray's node table. Every live node gets its engine actors ([cluster]
actors_per_node: one per GPU, or one on a node without GPUs), each pinned to its node
(NodeAffinitySchedulingStrategy) and never restarted by Ray (max_restarts = 0): the front makes a new one
itself, so that it first loads the keys. An actor's life:

    starting   created; its engine is coming up (ready() not back yet)
    loading    the keys loaded at the front are being made resident on it, once each
    ready      it takes work (for the keys it holds)
    dead       its process or node died, or it could not start; its tasks went back to the queue

A node that joins later gets actors the same way and takes work once they are ready. Every
second each ready actor's status is fetched in the background, so a status view never waits for one.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import partial

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from snarkd.cluster.actor import CONTROL, PROVE, EngineActor
from snarkd.cluster.keys import KeySpec, Shipper, load_on, missing_path
from snarkd.cluster.router import DEAD, LOADING, READY, STARTING, ActorRecord
from snarkd.errors import InputError

log = logging.getLogger("snarkd")
POLL = 0.5
STATUS_EVERY = 1.0
RETRY_NODE_AFTER = 10.0  # a node whose actor could not start is tried again after this long
KEEP_DEAD = 32


class Members:
    def __init__(self, settings, engine_settings: dict, log_level: str, lock: threading.Condition, replies):
        self.s = settings  # the [cluster] section
        self.engine_settings = engine_settings
        self.log_level = log_level
        self.lock = lock  # the book's condition: one lock for the front's state
        self.replies = replies  # snarkd.cluster.replies.Replies: where actor replies are handled
        self.actors: dict[str, ActorRecord] = {}
        self.nodes: dict[str, dict] = {}
        self.specs: dict[str, KeySpec] = {}  # key id -> spec: every key the front holds
        self.shipper = Shipper()
        self._retry_at: dict[str, float] = {}
        self._seq = 0
        self._status_pending: set[str] = set()
        # the prove group has a thread per task the front may send; status and keys never wait behind it
        self.actor_class = ray.remote(concurrency_groups={CONTROL: 4, PROVE: self.capacity()})(EngineActor)

    # -- the monitor --------------------------------------------------------------------------

    def poll(self) -> None:
        nodes = {n["NodeID"]: n for n in ray.nodes()}
        now = time.monotonic()
        with self.lock:
            self.nodes = nodes
            gone = [a for a in self.actors.values() if a.state != DEAD and not nodes.get(a.node_id, {}).get("Alive")]
        for a in gone:
            self.mark_dead(a, "its node left the cluster")
        for nid, n in nodes.items():
            if not n.get("Alive") or self._retry_at.get(nid, 0) > now:
                continue
            want, gpus = self.wanted(n.get("Resources", {}))
            with self.lock:
                have = sum(a.node_id == nid and a.state != DEAD for a in self.actors.values())
            for _ in range(max(0, want - have)):
                self.spawn(n, gpus)
        self.refresh_status(now)

    def wanted(self, resources: dict) -> tuple[int, int]:
        """(actors for a node with these resources, GPUs each)."""
        gpus, cpus = int(resources.get("GPU", 0)), float(resources.get("CPU", 0))
        n = self.s.actors_per_node or (gpus or 1)
        if self.s.actor_cpus:
            n = min(n, int(cpus // self.s.actor_cpus))
        return n, (1 if gpus >= n > 0 else 0)

    def capacity(self) -> int:
        """Tasks one actor holds at once: enough to keep its synthesis and device workers busy."""
        e = self.engine_settings
        return self.s.actor_inflight or 2 * (e["synthesis_workers"] + e["workers_per_device"])

    def spawn(self, node: dict, gpus: int) -> None:
        nid = node["NodeID"]
        with self.lock:
            self._seq += 1
            name = f"a{self._seq}@{node.get('NodeManagerAddress') or nid[:12]}"  # no "/": spans are ACTOR/worker
            cap = self.capacity()
            rec = self.actors[name] = ActorRecord(name, nid, capacity=cap)
        try:
            rec.handle = self.actor_class.options(
                num_cpus=self.s.actor_cpus, num_gpus=gpus, max_restarts=0, max_task_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(nid, soft=False),
            ).remote(name, self.engine_settings, self.s.key_cache, self.log_level)
            ref = rec.handle.ready.remote()
        except Exception as exc:  # noqa: BLE001 - Ray refused to create it
            self._retry_at[nid] = time.monotonic() + RETRY_NODE_AFTER
            self.mark_dead(rec, f"could not be created: {exc}")
            return
        log.info("engine actor starting name=%s node=%s gpus=%d cpus=%d inflight=%d", name, nid[:12], gpus,
                 self.s.actor_cpus, cap)
        self.replies.when_done(ref, partial(self._on_ready, rec))

    def _on_ready(self, rec: ActorRecord, fut) -> None:
        try:
            info = fut.result()
        except Exception as exc:  # noqa: BLE001
            self._retry_at[rec.node_id] = time.monotonic() + RETRY_NODE_AFTER
            self.mark_dead(rec, f"did not start: {exc}")
            return
        with self.lock:
            if rec.state == DEAD:
                return
            rec.info, rec.state = info, LOADING
            specs = list(self.specs.values())
        log.info("engine actor up name=%s pid=%s devices=%s gpu_ids=%s; loading %d key(s)", rec.name,
                 info.get("pid"), ",".join(info.get("devices", [])), ",".join(info.get("gpu_ids", [])) or "-",
                 len(specs))
        waiting = {s.key_id for s in specs}
        if not waiting:
            self._set_ready(rec)
        for spec in specs:
            self.load(rec, spec, on_done=partial(self._initial_loaded, rec, waiting))

    def _initial_loaded(self, rec: ActorRecord, waiting: set, key_id: str) -> None:
        with self.lock:
            waiting.discard(key_id)
            last = not waiting
        if last:
            self._set_ready(rec)

    def _set_ready(self, rec: ActorRecord) -> None:
        with self.lock:
            if rec.state != LOADING:
                return
            rec.state, rec.ready_at = READY, time.monotonic()
            self.lock.notify_all()
        log.info("engine actor ready name=%s keys=%s%s", rec.name, ",".join(sorted(rec.keys)) or "-",
                 f" key_errors={rec.key_errors}" if rec.key_errors else "")

    # -- keys -------------------------------------------------------------------------------

    def load(self, rec: ActorRecord, spec: KeySpec, on_done=None, placement: str | None = None) -> None:
        """Make `spec` resident on `rec` (asynchronously); on_done(key_id) when it loaded or failed."""
        placement = placement or ("ship" if self.s.key_placement == "ship" else "path")
        try:
            ref = load_on(rec.handle, spec, placement, self.shipper)
        except Exception as exc:  # noqa: BLE001 - the actor is gone
            self._key_result(rec, spec, None, exc, on_done)
            return

        def done(fut):
            exc = fut.exception()
            if exc is not None and placement == "path" and self.s.key_placement == "auto" and missing_path(exc):
                log.info("key %s is not at %s on %s: shipping it", spec.key_id, spec.path, rec.name)
                self.load(rec, spec, on_done, placement="ship")
                return
            self._key_result(rec, spec, None if exc else fut.result(), exc, on_done)

        self.replies.when_done(ref, done)

    def _key_result(self, rec: ActorRecord, spec: KeySpec, info, exc, on_done) -> None:
        with self.lock:
            if self.specs.get(spec.key_id) is not spec:  # unloaded (or replaced) meanwhile
                info = None
            elif info is not None:
                rec.keys[spec.key_id] = info
                rec.key_errors.pop(spec.key_id, None)
            else:
                rec.key_errors[spec.key_id] = str(exc)
            self.lock.notify_all()
        if info is not None:
            log.info("key resident id=%s actor=%s%s", spec.key_id, rec.name,
                     " (shipped)" if info.get("shipped") else "")
        elif exc is not None:
            log.warning("key %s could not be loaded on %s: %s", spec.key_id, rec.name, exc)
        if on_done is not None:
            on_done(spec.key_id)

    def distribute(self, spec: KeySpec, timeout: float) -> None:
        """A key loaded at the front: make it resident on every live actor; wait for them. InputError when
        actors exist and none could load it."""
        with self.lock:
            self.specs[spec.key_id] = spec
            targets = [a for a in self.actors.values() if a.state in (LOADING, READY)]
        left = {a.name for a in targets}
        for a in targets:
            self.load(a, spec, on_done=partial(self._distributed, left, a.name))
        deadline = time.monotonic() + timeout
        with self.lock:
            while left and time.monotonic() < deadline:
                self.lock.wait(min(0.2, deadline - time.monotonic()))
            loaded = [a.name for a in targets if spec.key_id in a.keys]
            errors = {a.name: a.key_errors[spec.key_id] for a in targets if spec.key_id in a.key_errors}
        if targets and not loaded:
            with self.lock:
                self.specs.pop(spec.key_id, None)
            why = "; ".join(f"{n}: {e}" for n, e in errors.items()) or f"no answer within {timeout:g}s"
            raise InputError(f"key {spec.key_id!r} could not be made resident on any engine actor: {why}")

    def _distributed(self, left: set, name: str, key_id: str) -> None:
        with self.lock:
            left.discard(name)
            self.lock.notify_all()

    def drop_key(self, key_id: str) -> None:
        with self.lock:
            spec = self.specs.pop(key_id, None)
            holders = [a for a in self.actors.values() if key_id in a.keys or key_id in a.key_errors]
            for a in holders:
                a.keys.pop(key_id, None)
                a.key_errors.pop(key_id, None)
        if spec is not None and not any(s.vk_digest == spec.vk_digest for s in self.specs.values()):
            self.shipper.drop(spec)
        for a in holders:
            if a.state != DEAD:
                a.handle.unload_key.remote(key_id)

    # -- status and endings -----------------------------------------------------------------

    def refresh_status(self, now: float) -> None:
        with self.lock:
            due = [a for a in self.actors.values() if a.state == READY and a.name not in self._status_pending
                   and now - a.status.get("_at", 0.0) >= STATUS_EVERY]
            self._status_pending.update(a.name for a in due)
        for a in due:
            try:
                ref = a.handle.status.remote()
            except Exception:  # noqa: BLE001
                self._status_pending.discard(a.name)
                continue
            self.replies.when_done(ref, partial(self._on_status, a))

    def _on_status(self, rec: ActorRecord, fut) -> None:
        exc = fut.exception()
        with self.lock:
            self._status_pending.discard(rec.name)
            if exc is None:
                rec.status = {**fut.result(), "_at": time.monotonic()}

    def mark_dead(self, rec: ActorRecord, why: str) -> None:
        with self.lock:
            if rec.state == DEAD:
                return
            rec.state, rec.error = DEAD, why
            dead = [a for a in self.actors.values() if a.state == DEAD]
            for old in dead[: max(0, len(dead) - KEEP_DEAD)]:
                del self.actors[old.name]
            self.lock.notify_all()
        log.warning("engine actor dead name=%s: %s", rec.name, why)
        if rec.handle is not None:
            try:
                ray.kill(rec.handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass

    def stop(self, drain_timeout: float = 0.0) -> None:
        with self.lock:
            live = [a for a in self.actors.values() if a.state != DEAD]
        for a in live:
            try:
                ray.kill(a.handle, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
            a.state, a.error = DEAD, "stopped with the front"

    def ready(self) -> list[ActorRecord]:
        with self.lock:
            return [a for a in self.actors.values() if a.state == READY]
