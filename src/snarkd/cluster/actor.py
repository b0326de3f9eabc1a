"""The engine actor: one embedded Engine in a Ray actor process, on one GPU (or one node's CPUs).

The front creates one per GPU (`num_gpus=1`: Ray sets CUDA_VISIBLE_DEVICES, so the engine's "every GPU"
is that one) or one per node without GPUs. Each is its own process with its own interpreter, so the
engines of a host do not share a GIL.

    ready()                            where it runs: node, pid, devices
    load_key(key_id, spec, shipped)    make a key resident, once: from a path on this node, or from bytes
                                       that came through the object store (written to the node's key cache)
    prove(key_id, task_id, witness)    one partition; `witness` is a Witness from the object store (its values a
                                       read-only view of shared memory on the front's node) or None with `inputs`
    cancel(task_id), status(), stop()

A failure the partition caused (a bad witness) or the engine's verdict (self-verification) comes back as a
ProveError: the (kind, message) of its error (snarkd/errors.py), picklable, which the front rebuilds into the
same error class (ProveError.error()); anything that kills the process comes back to the front as Ray's
actor error, and the front runs the partition elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import ray

from snarkd.atomic import atomic_write_bytes
from snarkd.config import EngineConfig
from snarkd.engine import COMPLETED, Engine, KeyStore, NotFound, Unavailable
from snarkd.errors import InputError, MismatchError, SnarkdError, rebuild
from snarkd.native import apply_huge_pages, apply_ifma

log = logging.getLogger("snarkd")
CONTROL = "control"  # the concurrency group of the small calls: never stuck behind proofs
PROVE = "prove"


class KeyAbsent(InputError):
    """A path-mode key whose file is not on the actor's node (auto placement then ships it)."""

    kind = "key_absent"
    meaning = "cluster: a key's file is not on an actor's node (`key_placement = \"path\"` needs it on every node)"


class KeyDiffers(MismatchError):
    """A path-mode key whose file on the actor's node is another key than the front's (never proved with)."""

    kind = "key_differs"
    meaning = "cluster: a key's path holds another key on an actor's node (never proved with)"


class ProveError(Exception):
    """An error of the model (snarkd/errors.py) crossing the actor boundary: only its kind and message travel
    (picklable, no traceback or frames); error() rebuilds it on the front as the class of its kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(kind, message)
        self.kind, self.message = kind, message

    @classmethod
    def of(cls, exc: SnarkdError) -> ProveError:
        return cls(*exc.wire())

    def error(self) -> SnarkdError:
        return rebuild(self.kind, self.message)

    def __str__(self) -> str:
        return self.message


def vk_digest(lk) -> str:
    """A key's identity across nodes: the hash of its verification key (different setups never share one)."""
    return hashlib.sha256(json.dumps(lk.vk, sort_keys=True).encode()).hexdigest()[:32]


def default_key_cache() -> str:
    return str(Path(tempfile.gettempdir()) / f"snarkd-keys-{os.getuid()}")


class EngineActor:
    def __init__(self, name: str, engine_settings: dict, key_cache: str = "", log_level: str = "info"):
        logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                            format=f"%(asctime)s %(levelname)s [{name}] %(message)s")
        self.name = name
        self.key_cache = Path(key_cache or default_key_cache())
        config = EngineConfig(**engine_settings)
        apply_ifma(config.ifma)  # this process's [cpu] ifma: the front's config (an actor is an entry point)
        apply_huge_pages(config.huge_pages)  # and [cpu] huge_pages, likewise
        self.keys = KeyStore("/", config.wasm_cache)
        self.engine = Engine(config, self.keys).start()
        self.started = time.time()

    # -- control ------------------------------------------------------------------------------

    @ray.method(concurrency_group=CONTROL)
    def ready(self) -> dict:
        ctx = ray.get_runtime_context()
        return {"name": self.name, "node_id": ctx.get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
                "gpu_ids": [str(g) for g in ray.get_gpu_ids()], "devices": [d.name for d in self.engine.devices],
                "synthesis_workers": self.engine.config.synthesis_workers,
                "device_workers": len(self.engine.devices) * self.engine.config.workers_per_device}

    @ray.method(concurrency_group=CONTROL)
    def load_key(self, key_id: str, spec: dict, shipped=None) -> dict:
        """Load `key_id` as `spec` describes it (path, size, vk digest, wasm). `shipped`: the key file's bytes
        (and wasm bytes) from the object store, when the front sent them. The loaded key must have the front's
        vk digest: a different file at the same path on this node is refused, never proved with."""
        try:
            self.keys.unload(key_id)  # a reload (the front's key changed under the same id)
        except NotFound:
            pass
        if shipped is None:
            path, wasm = spec["path"], spec.get("wasm", "")
            if not Path(path).is_file():
                raise ProveError.of(KeyAbsent(f"{self.name}: key {key_id!r}: no file {path} on this node "
                                               "([cluster] key_placement = \"path\" needs it on every node)"))
            if wasm and not Path(wasm).is_file():
                wasm = ""
        else:
            path, wasm = self._write_shipped(spec, shipped)
        try:
            lk = self.keys.load(key_id, path, wasm=wasm)
        except SnarkdError as exc:
            raise ProveError(InputError.kind, f"{self.name}: key {key_id!r}: {exc}") from None
        digest = vk_digest(lk)
        if digest != spec["vk_digest"]:
            self.keys.unload(key_id)
            raise ProveError.of(KeyDiffers(f"{self.name}: key {key_id!r}: {path} on this node is another key "
                                           "than the front's (its verification key differs)"))
        return {**asdict(lk.status()), "vk_digest": digest, "shipped": shipped is not None}

    def _write_shipped(self, spec: dict, shipped) -> tuple[str, str]:
        """The shipped key (and wasm) as files in the node's key cache, named by digest: written once per node,
        atomically, and shared by the actors of the node."""
        zkey_bytes, wasm_bytes = shipped
        self.key_cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        stem = self.key_cache / f"{spec['vk_digest']}-{spec['size']}"
        path = stem.with_suffix(".zkey")
        if not (path.is_file() and path.stat().st_size == spec["size"]):
            atomic_write_bytes(path, memoryview(zkey_bytes))
        wasm = ""
        if wasm_bytes is not None:
            wp = stem.with_suffix(".wasm")
            if not (wp.is_file() and wp.stat().st_size == len(wasm_bytes)):
                atomic_write_bytes(wp, memoryview(wasm_bytes))
            wasm = str(wp)
        return str(path), wasm

    @ray.method(concurrency_group=CONTROL)
    def unload_key(self, key_id: str) -> bool:
        try:
            self.keys.unload(key_id)
            return True
        except NotFound:
            return False

    @ray.method(concurrency_group=CONTROL)
    def cancel(self, task_id: str) -> bool:
        try:
            return self.engine.cancel(task_id, "cancelled by the cluster front")[1]
        except NotFound:
            return False

    @ray.method(concurrency_group=CONTROL)
    def status(self) -> dict:
        """Its engine's status record and its keys' (KeyStatus, with their devices), as the front renders them."""
        return {"name": self.name, "pid": os.getpid(), "uptime_s": time.time() - self.started,
                "keys": [self.engine.key_status(lk) for lk in self.keys.list()], "engine": self.engine.status()}

    @ray.method(concurrency_group=CONTROL)
    def stop(self, drain_timeout: float = 0.0) -> dict:
        out = self.engine.stop(drain_timeout)
        self.engine.join_workers(1.0)
        return asdict(out)

    # -- work ---------------------------------------------------------------------------------

    @ray.method(concurrency_group=PROVE)
    def prove(self, key_id: str, task_id: str, witness=None, inputs=None, priority: int = 0, lane: str = "",
              deadline_s: float | None = None) -> dict:
        """One partition, as a one-partition job of this actor's engine, in the front's job's lane and by what
        is left of its deadline (the front judged the estimate: only expiry applies here); its proof, public
        signals, phase timings and spans (worker names prefixed with this actor's name)."""
        try:
            job = self.engine.submit(key_id, job_id=task_id, priority=priority, lane=lane, deadline_s=deadline_s,
                                     admit_by_estimate=False,
                                     witnesses=[witness] if witness is not None else None,
                                     inputs=[inputs] if inputs is not None else None)
        except (InputError, NotFound) as exc:  # NotFound: the key is not (or no longer) here: the front routes elsewhere
            raise ProveError.of(exc) from None
        except SnarkdError as exc:  # this engine cannot take it now (busy, stopping): another actor may
            raise ProveError(Unavailable.kind, str(exc)) from None
        job.done.wait()
        if job.state != COMPLETED:
            raise ProveError(job.error_kind or SnarkdError.kind, job.error)
        part = job.partitions[0]
        return {"proof": part.result.proof, "public": list(part.result.public), "timings": dict(part.timings),
                "spans": [{**s, "worker": f"{self.name}/{s['worker']}"} for s in part.spans]}
