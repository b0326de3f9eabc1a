"""Resident proving keys by id, each with its verification key and (lazily) a witness calculator.

A key unloaded while jobs still use it is closed when the last of them leaves the
pipeline (the memory map must outlive every worker that reads it).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from snarkd.engine.errors import AlreadyExists, NotFound
from snarkd.errors import InputError
from snarkd.formats.zkey import vk_json
from snarkd.prover import ProvingKey

log = logging.getLogger("snarkd")


def find_wasm(zkey_path: str | os.PathLike) -> Path | None:
    """The circuit .wasm beside a .zkey, by circom's and snarkd's naming conventions."""
    z = Path(zkey_path)
    d, stem = z.parent, z.stem
    for cand in (d / f"{stem}.wasm", d / f"{stem}_js" / f"{stem}.wasm", d / "circuit_js" / "circuit.wasm",
                 d / "circuit.wasm"):
        if cand.is_file():
            return cand
    found = sorted(d.glob("*_js/*.wasm")) + sorted(d.glob("*.wasm"))
    return found[0] if len(found) == 1 else None


@dataclass
class LoadedKey:
    id: str
    path: str
    key: object  # snarkd.prover.ProvingKey
    load_ms: float
    preloaded: bool = False
    wasm: str = ""  # circuit .wasm for jobs given inputs ("" = none found)
    proofs: int = 0
    users: int = 0
    unloaded: bool = False
    max_instances: int = 0  # witness-calculator instances (the engine's synthesis workers)
    wasm_cache: object = True  # [keys] wasm_cache: a directory, "off", or True (the default)
    _vk: dict | None = field(default=None, repr=False)
    _calc: object = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def info(self) -> dict:
        k = self.key
        return {
            "id": self.id, "path": self.path, "curve": k.curve.name, "bytes": int(k.nbytes),
            "n_vars": int(k.n_vars), "n_public": int(k.n_public), "domain_size": int(k.domain_size),
            "preloaded": self.preloaded, "load_ms": self.load_ms, "proofs": self.proofs,
        }

    @property
    def vk(self) -> dict:
        """The verification key (snarkjs JSON) for self-verification, without
        vk_alphabeta_12 (a pairing that verification does not read)."""
        with self._lock:
            if self._vk is None:
                self._vk = vk_json(self.key.zkey, alphabeta=False)
            return self._vk

    def require_wasm(self):
        """The key's WitnessCalculator (compiled once, thread-safe), for jobs given inputs;
        InputError when the key has no circuit .wasm."""
        with self._lock:
            if self._calc is None:
                if not self.wasm:
                    raise InputError(f"key {self.id!r} has no circuit .wasm (none found beside {self.path}); "
                                     "load it with a wasm path to prove from inputs")
                from snarkd.witness import WitnessCalculator  # lazy: wasmtime is heavy, needed by inputs jobs only

                # one wasm instance per synthesis worker at most: their memory is bounded, not per job
                self._calc = WitnessCalculator(self.wasm, max_instances=self.max_instances or None,
                                               cache=self.wasm_cache)
            return self._calc



class KeyStore:
    """Keys by id. Thread-safe."""

    def __init__(self, param_cache: str = ".", wasm_cache: object = True):
        self.param_cache = Path(param_cache)
        self.wasm_cache = wasm_cache
        self.max_instances = 0  # per key's witness calculator; set by the engine
        self._keys: dict[str, LoadedKey] = {}
        self._lock = threading.Lock()

    def resolve(self, path: str) -> Path:
        p = Path(os.path.expanduser(str(path)))
        return p if p.is_absolute() else self.param_cache / p

    def load(self, key_id: str, path: str, preloaded: bool = False, wasm: str = "") -> LoadedKey:
        if not key_id:
            raise InputError("key id is empty")
        with self._lock:
            if key_id in self._keys:
                raise AlreadyExists(f"key {key_id!r} is already loaded (from {self._keys[key_id].path}); unload it first")
        p = self.resolve(path)
        if not p.is_file():
            raise InputError(f"key {key_id!r}: no such file {p}")
        if wasm:
            wp = self.resolve(wasm)
            if not wp.is_file():
                raise InputError(f"key {key_id!r}: no such circuit .wasm {wp}")
        else:
            wp = find_wasm(p)
        log.info("key loading id=%s path=%s", key_id, p)
        t0 = time.perf_counter()
        key = ProvingKey.load(p)
        ms = (time.perf_counter() - t0) * 1000
        lk = LoadedKey(key_id, str(p), key, ms, preloaded, wasm=str(wp) if wp else "", max_instances=self.max_instances,
                       wasm_cache=self.wasm_cache)
        with self._lock:
            if key_id in self._keys:  # lost a race with a concurrent load
                key.close()
                raise AlreadyExists(f"key {key_id!r} is already loaded")
            self._keys[key_id] = lk
        log.info("key loaded id=%s curve=%s bytes=%d n_vars=%d domain=%d wasm=%s ms=%.1f",
                 key_id, key.curve.name, key.nbytes, key.n_vars, key.domain_size, lk.wasm or "-", ms)
        return lk

    def get(self, key_id: str) -> LoadedKey:
        """The loaded key `key_id` (without taking a reference: for looking at it only)."""
        with self._lock:
            lk = self._keys.get(key_id)
        if lk is None:
            raise NotFound(f"no key with id {key_id!r} is loaded (loaded: {', '.join(sorted(self._keys)) or 'none'})")
        return lk

    def acquire(self, key_id: str) -> LoadedKey:
        with self._lock:
            lk = self._keys.get(key_id)
            if lk is None:
                known = ", ".join(sorted(self._keys)) or "none"
                raise NotFound(f"no key with id {key_id!r} is loaded (loaded: {known})")
            lk.users += 1
            return lk

    def release(self, lk: LoadedKey, proved: int = 0) -> None:
        with self._lock:
            lk.users -= 1
            lk.proofs += int(proved)
            close = lk.unloaded and lk.users == 0
        if close:
            lk.key.close()

    def unload(self, key_id: str) -> LoadedKey:
        with self._lock:
            lk = self._keys.pop(key_id, None)
            if lk is None:
                raise NotFound(f"no key with id {key_id!r} is loaded")
            lk.unloaded = True
            close = lk.users == 0
        if close:
            lk.key.close()
        log.info("key unloaded id=%s%s", key_id, "" if close else f" (closes after {lk.users} job(s))")
        return lk

    def list(self) -> list[LoadedKey]:
        with self._lock:
            return list(self._keys.values())

    def resident_bytes(self) -> int:
        return sum(int(lk.key.nbytes) for lk in self.list())

    def close_all(self) -> None:
        with self._lock:
            keys, self._keys = list(self._keys.values()), {}
        for lk in keys:
            lk.unloaded = True
            if lk.users == 0:
                lk.key.close()
