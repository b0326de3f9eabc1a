"""Keys at the front, and how they reach the actors: once per actor, never per job.

The front loads each key itself too (memory-mapped, as the single daemon does): it checks witnesses
against it at submit, so a bad request fails before anything crosses the network, and it knows the key's
verification key, whose digest names the key on every node.

    path   the actor loads the same path on its node (a shared or replicated file system); a file
           there with another verification key is refused
    ship   the front puts the key file (and its circuit .wasm) into Ray's object store; each node receives
           it once, its first actor writes it into the node's key cache, the others find it there
    auto   path where the node has the same key, else ship
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np
import ray

from snarkd.cluster.actor import KeyAbsent, KeyDiffers, ProveError, vk_digest
from snarkd.engine import KeyStore, LoadedKey
from snarkd.engine.keys import DEFAULT_WASM_CACHE

log = logging.getLogger("snarkd")


@dataclass(frozen=True)
class KeySpec:
    """What an actor needs to make a key resident."""

    key_id: str
    path: str
    size: int
    vk_digest: str
    wasm: str = ""

    def plain(self) -> dict:
        return {"path": self.path, "size": self.size, "vk_digest": self.vk_digest, "wasm": self.wasm}


def spec_of(lk: LoadedKey) -> KeySpec:
    return KeySpec(lk.id, lk.path, os.path.getsize(lk.path), vk_digest(lk), lk.wasm)


class ClusterKeyStore(KeyStore):
    """The front's KeyStore: a key loaded here (preload or LoadKey) is also made resident on the actors
    (`on_load`, set by the front: it waits for them and raises when none could load it, and then the
    key is unloaded here too). An unloaded key is dropped from the actors (`on_unload`) once the last job
    that holds it has ended, as a single daemon closes it: those jobs' partitions still need the actors'
    copies."""

    def __init__(self, param_cache: str = ".", wasm_cache: str = DEFAULT_WASM_CACHE, rule=None):
        super().__init__(param_cache, wasm_cache, rule=rule)
        self.on_load = None
        self.on_unload = None
        self._unloading: dict[str, LoadedKey] = {}  # unloaded here, still held by jobs

    def load(self, key_id: str, path: str, preloaded: bool = False, wasm: str = "") -> LoadedKey:
        lk = super().load(key_id, path, preloaded=preloaded, wasm=wasm)
        if self.on_load is not None:
            try:
                self.on_load(lk)
            except BaseException:
                super().unload(key_id)
                raise
        return lk

    def unload(self, key_id: str) -> LoadedKey:
        lk = super().unload(key_id)
        with self._lock:
            busy = lk.users > 0
            if busy:
                self._unloading[key_id] = lk  # dropped from the actors when its last job ends
        if not busy:
            self._drop(key_id)
        return lk

    def release(self, lk: LoadedKey, proved: int = 0) -> None:
        super().release(lk, proved)
        with self._lock:
            last = lk.users == 0 and self._unloading.get(lk.id) is lk
            if last:
                del self._unloading[lk.id]
        if last:
            self._drop(lk.id)

    def _drop(self, key_id: str) -> None:
        with self._lock:
            if key_id in self._keys:  # loaded again under its id meanwhile: the actors have the new one
                return
        if self.on_unload is not None:
            self.on_unload(key_id)


class Shipper:
    """The object-store copies of shipped keys: put when an actor first needs one, kept while keys
    are loaded (a node that joins later gets it from there), dropped on unload."""

    def __init__(self):
        self._refs: dict[str, object] = {}

    def ref(self, spec: KeySpec):
        r = self._refs.get(spec.vk_digest)
        if r is None:
            data = np.asarray(np.memmap(spec.path, dtype=np.uint8, mode="r"))
            wasm = np.fromfile(spec.wasm, dtype=np.uint8) if spec.wasm else None
            r = self._refs[spec.vk_digest] = ray.put((data, wasm))
            log.info("key shipped into the object store id=%s bytes=%d wasm=%s", spec.key_id, spec.size,
                     spec.wasm or "-")
        return r

    def drop(self, spec: KeySpec) -> None:
        self._refs.pop(spec.vk_digest, None)


def load_on(actor_handle, spec: KeySpec, placement: str, shipper: Shipper):
    """The load_key call for one actor: an ObjectRef of its key info (ProveError when it cannot)."""
    shipped = shipper.ref(spec) if placement == "ship" else None
    return actor_handle.load_key.remote(spec.key_id, spec.plain(), shipped)


def missing_path(exc: BaseException) -> bool:
    """A path-mode load that failed because the node lacks the file or holds another key there
    (auto placement then ships the key)."""
    return isinstance(exc, ProveError) and exc.kind in (KeyAbsent.kind, KeyDiffers.kind)
