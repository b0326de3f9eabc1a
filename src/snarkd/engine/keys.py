"""Resident proving keys by id, each with its verification key and (lazily) a witness calculator.

A key unloaded while jobs still use it is closed when the last of them leaves the
pipeline (the memory map must outlive every worker that reads it).

The key budget ([keys] max_resident, host_budget): once more keys are mapped than
it allows, the least recently used *idle* key (no job queued or running on it) is
evicted: its map is closed, its device arrays dropped (the `on_evict` hooks), and
its entry stays, with its path, so the next job for it reloads it (`checkout`,
which reports the reload's milliseconds for the job's `key_load` phase). A key in
use is never evicted: with every key busy the store runs over budget and says so.

A key whose file changes under its mapping (`cp other.zkey key.zkey`, a truncation:
the key directories are the operator's) is *spoiled*: the native guard
(native/mapguard_module.cpp) turns reads past a shrunk end into zeros instead of
SIGBUS, and `spoiled(lk)` (a fstat of the mapped file, at each checkout and before
a job's result leaves) says so. The jobs that held it fail naming the file, new
jobs are refused until those have ended, and then the key is dropped like an
evicted one and reloaded from its path (refused while the file is not a valid key).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from snarkd.config.sections import ENGINE_DEFAULTS
from snarkd.engine.errors import AlreadyExists, KeyChanged, NotFound
from snarkd.engine.paths import PathRule
from snarkd.engine.status import KeyStatus
from snarkd.errors import InputError
from snarkd.formats.zkey import vk_json
from snarkd.prover import ProvingKey
from snarkd.verifier.groth16 import read_key

log = logging.getLogger("snarkd")
DEFAULT_WASM_CACHE = ENGINE_DEFAULTS["wasm_cache"]  # [keys] wasm_cache, declared (no environment: entry points pass it)


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


def _is_file(p: Path, key_id: str) -> bool:
    try:
        return p.is_file()
    except OSError as exc:  # a name too long, a loop of symlinks, ...
        raise InputError(f"key {key_id!r}: cannot use {str(p)[:300]}: {exc.strerror}") from None


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
    wasm_cache: object = "off"  # [keys] wasm_cache: a directory, or "off" (set by its KeyStore)
    last_used: float = 0.0  # Unix time a job last took or left it (0: never used)
    loaded_at: float = field(default_factory=time.time)
    evictions: int = 0
    reloads: int = 0
    meta: dict = field(default_factory=dict)  # curve, bytes, n_vars, ...: kept while the key is evicted
    spoiled: str = ""  # why its mapped file cannot be trusted any more ("" while sound): see KeyStore.spoiled
    wasm_limits: tuple = (None, 0)  # ([limits] wasm_memory bytes, wasm_fuel)
    witness_engine: str = ENGINE_DEFAULTS["witness_engine"]  # [witness] engine
    witness_compiled: str = ENGINE_DEFAULTS["witness_compiled"]  # [witness] compiled
    _vk: dict | None = field(default=None, repr=False)
    _vk_points: object = field(default=None, repr=False)  # verifier.KeyPoints of _vk
    _calc: object = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _reload_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        if self.key is not None and not self.meta:
            self.describe(self.key)

    def describe(self, k) -> None:
        """meta from a (re)loaded ProvingKey; after a reload of a file that changed, its vk is read again."""
        self.meta = {"curve": k.curve.name, "bytes": int(k.nbytes), "n_vars": int(k.n_vars),
                     "n_public": int(k.n_public), "domain_size": int(k.domain_size)}
        self._vk = self._vk_points = None

    @property
    def resident(self) -> bool:
        """Mapped on the host now (False once evicted, until its next job reloads it)."""
        return self.key is not None

    @property
    def lru_stamp(self) -> float:
        """When the key was last loaded or used: the least recent goes first."""
        return max(self.last_used, self.loaded_at)

    @property
    def nbytes(self) -> int:
        return self.meta.get("bytes", 0)

    def status(self, devices: list | None = None) -> KeyStatus:
        """The key's status record; devices: where its arrays are resident (engine.status.key_status)."""
        return KeyStatus(id=self.id, path=self.path, **self.meta, preloaded=self.preloaded, load_ms=self.load_ms,
                         proofs=self.proofs, resident=self.resident, last_used=self.last_used, jobs=self.users,
                         evictions=self.evictions, reloads=self.reloads, devices=list(devices or ()))

    @property
    def vk(self) -> dict:
        """The verification key (snarkjs JSON) for self-verification, without
        vk_alphabeta_12 (a pairing that verification does not read)."""
        with self._lock:
            return self._vk_locked()

    @property
    def vk_points(self):
        """`vk` read once by the verifier (verifier.groth16.read_key), for the self-check of every proof: read from
        its JSON per proof, a SHA-256 key's 257 IC points took ~20% of the daemon's GIL-held time at j = 32."""
        with self._lock:
            if self._vk_points is None:
                self._vk_points = read_key(self._vk_locked())
            return self._vk_points

    def _vk_locked(self) -> dict:
        """`vk`, made on first use (the caller holds _lock)."""
        if self._vk is None:
            self._vk = vk_json(self.key.zkey, alphabeta=False)
        return self._vk

    def require_wasm(self):
        """The key's witness calculator (built once, thread-safe) on the [witness] engine, for jobs
        given inputs; InputError when the key has no circuit .wasm (or, engine "native", when no native
        program can be built for it)."""
        with self._lock:
            if self._calc is None:
                if not self.wasm:
                    raise InputError(f"key {self.id!r} has no circuit .wasm (none found beside {self.path}); "
                                     "load it with a wasm path to prove from inputs")
                from snarkd.witness import make_calculator  # lazy: needed by inputs jobs only

                key_id = self.id
                # one wasm instance per synthesis worker at most: their memory is bounded, not per job
                self._calc = make_calculator(
                    self.wasm, self.witness_engine, max_instances=self.max_instances or None, cache=self.wasm_cache,
                    compiled=self.witness_compiled,
                    max_memory=self.wasm_limits[0], fuel=self.wasm_limits[1],
                    on_fallback=lambda msg: log.warning("key %s: %s", key_id, msg))
            return self._calc


class KeyStore:
    """Keys by id. Thread-safe."""

    def __init__(self, param_cache: str = ".", wasm_cache: str = DEFAULT_WASM_CACHE, rule: PathRule | None = None):
        self.param_cache = Path(param_cache)
        # the rule for paths of load(), except preloaded keys from the config (the daemon and the cluster front:
        # ClientPaths.from_config(config).keys, engine/paths.py); None (embedded use): any path
        self.rule = rule
        self.wasm_cache = wasm_cache
        self.max_instances = 0  # per key's witness calculator; set by the engine
        self.wasm_limits = (None, 0)  # (memory bytes, fuel) per witness calculation; set by the engine
        self.witness_engine = ENGINE_DEFAULTS["witness_engine"]  # [witness] engine; set by the engine
        self.witness_compiled = ENGINE_DEFAULTS["witness_compiled"]  # [witness] compiled; set by the engine
        self.preparers: list = []  # called with each key once loaded (the engine prepares what its first job would)
        self._keys: dict[str, LoadedKey] = {}
        self._lock = threading.Lock()
        self.max_resident = 0  # keys mapped at once (0: no limit); set by the engine ([keys] max_resident)
        self.host_budget = 0  # bytes of mapped keys (0: no limit) ([keys] host_budget)
        self.evictions = 0
        self.reloads = 0
        self.on_evict: list = []  # callables (LoadedKey, ProvingKey) run after a key is evicted

    def resolve(self, path: str) -> Path:
        p = Path(os.path.expanduser(str(path)))
        return p if p.is_absolute() else self.param_cache / p

    def load(self, key_id: str, path: str, preloaded: bool = False, wasm: str = "") -> LoadedKey:
        if not key_id:
            raise InputError("key id is empty")
        with self._lock:
            if key_id in self._keys:
                raise AlreadyExists(f"key {key_id!r} is already loaded (from {self._keys[key_id].path}); unload it first")
        confined = self.rule is not None and not preloaded
        p = self.rule.resolve(path, f"key {key_id!r} path") if confined else self.resolve(path)
        if wasm:  # both paths pass the rule before either is looked at
            wp = self.rule.resolve(wasm, f"key {key_id!r} wasm path") if confined else self.resolve(wasm)
        if not _is_file(p, key_id):
            raise InputError(f"key {key_id!r}: no such file {p}")
        if wasm:
            if not _is_file(wp, key_id):
                raise InputError(f"key {key_id!r}: no such circuit .wasm {wp}")
        else:
            wp = find_wasm(p)
            if wp is not None and confined:  # beside the key, but maybe a symlink out
                wp = self.rule.resolve(wp, f"key {key_id!r} circuit .wasm found beside it")
        log.info("key loading id=%s path=%s", key_id, p)
        t0 = time.perf_counter()
        key = ProvingKey.load(p)
        ms = (time.perf_counter() - t0) * 1000
        lk = LoadedKey(key_id, str(p), key, ms, preloaded, wasm=str(wp) if wp else "", max_instances=self.max_instances,
                       wasm_cache=self.wasm_cache, wasm_limits=self.wasm_limits, witness_engine=self.witness_engine,
                       witness_compiled=self.witness_compiled)
        if lk.wasm and self.witness_engine != "wasm":
            try:  # the native witness program, at load (its build time is logged): not on the first job
                lk.require_wasm()
            except BaseException:
                key.close()
                raise
        with self._lock:
            if key_id in self._keys:  # lost a race with a concurrent load
                key.close()
                raise AlreadyExists(f"key {key_id!r} is already loaded")
            self._keys[key_id] = lk
        log.info("key loaded id=%s curve=%s bytes=%d n_vars=%d domain=%d wasm=%s ms=%.1f",
                 key_id, key.curve.name, key.nbytes, key.n_vars, key.domain_size, lk.wasm or "-", ms)
        self.enforce_budget(keep=lk)
        for prepare in self.preparers:
            try:
                prepare(lk)
            except Exception:  # noqa: BLE001 - a preparation that fails leaves the first job to pay for it
                log.exception("key %s: preparing for its first job failed", key_id)
        return lk

    def get(self, key_id: str) -> LoadedKey:
        """The loaded key `key_id` (without taking a reference: for looking at it only)."""
        with self._lock:
            lk = self._keys.get(key_id)
        if lk is None:
            raise NotFound(f"no key with id {key_id!r} is loaded (loaded: {', '.join(sorted(self._keys)) or 'none'})")
        return lk

    def acquire(self, key_id: str) -> LoadedKey:
        return self.checkout(key_id)[0]

    def release(self, lk: LoadedKey, proved: int = 0) -> None:
        with self._lock:
            lk.users -= 1
            lk.proofs += int(proved)
            lk.last_used = time.time()
            idle = lk.users == 0
            close = lk.unloaded and idle and lk.key is not None
            dropped, why = None, lk.spoiled
            if idle and why and not close:  # the last job that read the bad mapping has left
                dropped, lk.key, lk.spoiled = lk.key, None, ""
        if close:
            lk.key.close()
        elif dropped is not None:
            self._close_mapping(lk, dropped)
            log.info("key dropped id=%s (changed on disk); its next job reloads it from %s", lk.id, lk.path)
        elif idle and not lk.unloaded:
            self.enforce_budget()  # an over-budget store waits for keys to go idle

    # -- keys whose file changed under them ------------------------------------------------

    def spoiled(self, lk: LoadedKey) -> str:
        """Why what jobs read from `lk`'s mapped files cannot be trusted, "" while they are sound: a file rewritten
        or truncated in place (ProvingKey.changed: a fstat, and the guard's count of reads past a shrunk end).
        Found once, the key is marked (logged as a warning) until it is dropped and reloaded."""
        with self._lock:
            key, known = lk.key, lk.spoiled
        if known or key is None:
            return known
        why = key.changed()
        if not why:
            return ""
        with self._lock:
            if lk.key is not key or lk.spoiled:
                return lk.spoiled
            lk.spoiled = f"key {lk.id!r} changed on disk while loaded: {why}"
            users = lk.users
        log.warning("%s; the %d job(s) holding it fail, new jobs wait for them to end, then it is reloaded from "
                    "%s", lk.spoiled, users, lk.path)
        return lk.spoiled

    def _close_mapping(self, lk: LoadedKey, key) -> None:
        """Close a key's mapping that no job holds (its device arrays dropped first, by the on_evict hooks)."""
        for hook in self.on_evict:
            try:
                hook(lk, key)
            except Exception:  # noqa: BLE001 - a device that cannot drop arrays must not keep the key mapped
                log.exception("key %s: evict hook failed", lk.id)
        key.close()

    # -- the key budget: LRU eviction of idle keys, reload on demand -----------------------

    def configure(self, max_resident: int = 0, host_budget: int = 0) -> None:
        self.max_resident, self.host_budget = int(max_resident or 0), int(host_budget or 0)

    def checkout(self, key_id: str) -> tuple[LoadedKey, float]:
        """The key for a new job (counted as in use until `release`), reloaded from its
        path if it was evicted; returns (key, milliseconds spent reloading it, 0 if none)."""
        lk = self.get(key_id)
        bad = self.spoiled(lk)  # a fstat: a file changed under its mapping is found here
        with self._lock:
            if self._keys.get(key_id) is not lk:
                raise NotFound(f"key {key_id!r} was unloaded just now")
            if lk.spoiled and lk.users > 0:
                raise KeyChanged(f"{lk.spoiled}; it is reloaded from its path once the {lk.users} job(s) that read "
                                 f"it have ended: retry then")
            lk.users += 1  # in use from here on: never evicted while we reload it
            lk.last_used = time.time()
            if lk.key is not None and not lk.spoiled:
                return lk, 0.0
            dropped, lk.key = (lk.key, None) if lk.spoiled else (None, lk.key)
            lk.spoiled = ""
        if dropped is not None:  # nobody reads the bad mapping any more: drop it as an eviction would
            self._close_mapping(lk, dropped)
        try:
            ms = self._reload(lk, "changed on disk" if bad else "was evicted")
        except BaseException:
            self.release(lk)
            raise
        if ms:
            self.enforce_budget(keep=lk)
        return lk, ms

    def _reload(self, lk: LoadedKey, cause: str = "was evicted") -> float:
        with lk._reload_lock:  # concurrent jobs for one evicted key: one reload
            if lk.key is not None:
                return 0.0
            log.info("key reloading id=%s path=%s (%s)", lk.id, lk.path, cause)
            t0 = time.perf_counter()
            try:
                key = ProvingKey.load(lk.path)
            except InputError as exc:
                raise InputError(f"key {lk.id!r} {cause} and cannot be reloaded: {exc}") from None
            except OSError as exc:
                raise InputError(f"key {lk.id!r} {cause} and cannot be reloaded from {lk.path}: "
                                 f"{exc.strerror or exc}") from None
            ms = (time.perf_counter() - t0) * 1000
            with self._lock:
                lk.key, lk.load_ms, lk.loaded_at = key, ms, time.time()
                lk.describe(key)  # the file may hold another key now (the operator replaced it)
                lk.reloads += 1
                self.reloads += 1
        log.info("key reloaded id=%s ms=%.1f", lk.id, ms)
        return ms

    def over_budget_locked(self) -> bool:
        mapped = [k for k in self._keys.values() if k.key is not None]
        return bool((self.max_resident and len(mapped) > self.max_resident)
                    or (self.host_budget and sum(k.nbytes for k in mapped) > self.host_budget))

    def enforce_budget(self, keep: LoadedKey | None = None) -> list[LoadedKey]:
        """Evict least recently used idle keys until the store fits its budget; returns them."""
        evicted: list[tuple[LoadedKey, object]] = []
        with self._lock:
            while self.over_budget_locked():
                idle = [k for k in self._keys.values() if k.key is not None and k.users == 0 and k is not keep]
                if not idle:
                    mapped = [k for k in self._keys.values() if k.key is not None]
                    log.warning("key budget exceeded: %d key(s), %d bytes mapped (max_resident %s, host_budget %s), "
                                "none idle to evict", len(mapped), sum(k.nbytes for k in mapped),
                                self.max_resident or "off", self.host_budget or "off")
                    break
                victim = min(idle, key=lambda k: k.lru_stamp)
                evicted.append((victim, victim.key))
                victim.key = None
                victim.evictions += 1
                self.evictions += 1
            mapped = [k for k in self._keys.values() if k.key is not None]
        for lk, key in evicted:
            self._close_mapping(lk, key)
            idle_s = time.time() - lk.last_used if lk.last_used else 0.0
            log.info("key evicted id=%s bytes=%d idle_s=%.1f (least recently used; %d key(s), %d bytes stay mapped; "
                     "its next job reloads it from %s)", lk.id, lk.nbytes, idle_s, len(mapped),
                     sum(k.nbytes for k in mapped), lk.path)
        return [lk for lk, _ in evicted]

    def unload(self, key_id: str) -> LoadedKey:
        with self._lock:
            lk = self._keys.pop(key_id, None)
            if lk is None:
                raise NotFound(f"no key with id {key_id!r} is loaded")
            lk.unloaded = True
            users = lk.users
            close = users == 0 and lk.key is not None
        if close:
            lk.key.close()
        log.info("key unloaded id=%s%s", key_id, f" (closes after {users} job(s))" if users else "")
        return lk

    def list(self) -> list[LoadedKey]:
        with self._lock:
            return list(self._keys.values())

    def resident_bytes(self) -> int:
        return sum(lk.nbytes for lk in self.list() if lk.resident)

    def close_all(self) -> None:
        with self._lock:
            keys, self._keys = list(self._keys.values()), {}
        for lk in keys:
            lk.unloaded = True
            if lk.users == 0 and lk.key is not None:
                lk.key.close()
