"""The Aggregate RPC's work: SnarkPack aggregates of proofs the daemon made or was given, off the gRPC threads.

    agg = Aggregator.from_config(cfg, paths.keys)
    future = agg.start(key_id, vk, proofs, agg.srs_path(request.srs_path))   # Busy past max_concurrent
    future.result().json                                                     # as `snarkd aggregate` writes it

In the caller's thread (cheap): n checked (a power of two from 2) and the SRS path resolved (a client's under
[keys] param_cache / allowed_dirs by the keys' PathRule; none given: [aggregate] srs, the operator's). Then on
one of [aggregate] max_concurrent worker threads (one more call is refused, not queued): the SRS, kept mapped
and checked for the next calls (the srs_resident most recently used; read again once its file changed); the
proofs batch-verified against the key's vk (verifier.batch, bisected to name the bad ones: an aggregate must
never cover an invalid proof, and a failing aggregate could not say which one it is); the aggregate
(aggregate.prover: the MSMs and pair products on the native core, which releases the GIL, so every other call
goes on meanwhile; the Miller loops on the daemon's first GPU by [aggregate] backend, their device memory
reserved under its budget beside the proofs'); its JSON, verified as read back (aggregate.files.check_json,
~26 ms at n = 8,192) before it is returned: one that does not verify is never returned (SrsChanged when the SRS's
content changed meanwhile, else AggregateNotVerified, INTERNAL). An SRS is checked for consistency when read
(aggregate/srs.read_srs) and read again when its content changes (a body hash, not only its mtime). A call whose client went away still finishes; its result is dropped.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from snarkd.aggregate import proof_format, prover
from snarkd.aggregate.files import AggregateNotVerified, check_json
from snarkd.aggregate.srs import AggregationSRS, read_srs, read_srs_max_n
from snarkd.aggregate.statement import read_proofs, read_vk
from snarkd.config.settings import declared
from snarkd.engine.errors import Busy, KeyChanged
from snarkd.engine.paths import PathRule
from snarkd.errors import DaemonError, InputError
from snarkd.prover.chooser import choose
from snarkd.verifier.batch import verify_batch

log = logging.getLogger("snarkd")
NAMED = 20  # bad proofs named in a refusal (the count is always given)


class SrsChanged(KeyChanged):
    """The SRS file changed on disk while an aggregation read it (ABORTED, as for a key): retry."""


@dataclass
class Item:
    """One proof to aggregate: snarkjs's public list and proof object, and how messages name it."""

    public: list
    proof: dict
    name: str  # "job 'j' partition 0", "proofs[3]"


@dataclass
class Aggregated:
    json: str  # the aggregate file's text, exactly as `snarkd aggregate` writes it
    n: int
    dev: bool  # made with a development SRS
    timings: dict = field(default_factory=dict)  # ms: srs_load, check, aggregate, total


def check_count(n: int) -> None:
    if n < 2 or n & (n - 1):
        raise InputError(f"{n} proof(s) given; SnarkPack aggregates a power of two, at least 2 (job_ids' "
                         "partitions or proofs)")


class Aggregator:
    """observe(result, seconds, n): each call's outcome ("completed", "rejected", "failed"), for the metrics."""

    def __init__(self, max_concurrent: int = declared("aggregate.max_concurrent"),
                 threads: int = declared("aggregate.threads"), srs_resident: int = declared("aggregate.srs_resident"),
                 default_srs: str | None = None, rule: PathRule | None = None, observe=None, gpu=None):
        self.max_concurrent, self.threads, self.srs_resident = max_concurrent, threads, srs_resident
        self.gpu = gpu  # a GpuDevice for the Miller loops ([aggregate] backend), or None
        self.default_srs, self.rule = default_srs, rule
        self.observe = observe or (lambda result, seconds, n: None)
        self._pool = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="aggregate")
        self._lock = threading.Lock()
        self._running = 0
        self._srs: OrderedDict[str, AggregationSRS] = OrderedDict()  # resolved path -> mapped SRS, LRU last

    @classmethod
    def from_config(cls, cfg, rule: PathRule | None, observe=None, devices=()) -> "Aggregator":
        """devices: the backends the engine proves on (ProvingEngine.devices); [aggregate] backend chooses as a proof's
        backend does (prover/chooser.py) among their GPUs, and takes the first."""
        a = cfg.aggregate
        gpus = [d.gpu for d in devices if d.gpu is not None]
        gpu = gpus[0] if gpus and choose(a.backend, gpus=len(gpus))[0] == "cuda" else None
        if a.backend == "cuda" and gpu is None:
            raise DaemonError("[aggregate] backend = \"cuda\", but this daemon proves on no GPU ([gpus] devices; "
                              "set [aggregate] backend = \"auto\" or \"cpu\" to aggregate on the CPU)")
        log.info("aggregation: Miller loops on %s ([aggregate] backend = %s)",
                 f"cuda:{gpu.index}" if gpu is not None else "the CPU", a.backend)
        return cls(a.max_concurrent, a.threads, a.srs_resident, a.srs, rule, observe, gpu)

    @property
    def running(self) -> int:
        return self._running

    def resident_srs(self) -> list[str]:
        with self._lock:
            return list(self._srs)

    def srs_path(self, path: str) -> Path:
        """The SRS file a call names (confined by the keys' rule), else [aggregate] srs."""
        if path:
            return self.rule.resolve(path, "srs_path") if self.rule is not None else Path(path)
        if self.default_srs is None:
            raise InputError("srs_path: none given, and this daemon has no [aggregate] srs to use instead")
        return Path(self.default_srs)

    def check_size(self, n: int, srs_path: Path) -> None:
        """InputError unless n proofs (a power of two from 2) fit the SRS at srs_path: its header only, read
        before a proof is parsed (a call cannot make the daemon parse more proofs than it could aggregate)."""
        check_count(n)
        name = str(srs_path)
        with self._lock:
            srs = self._srs.get(name)
        try:
            max_n = srs.max_n if srs is not None else read_srs_max_n(srs_path)
        except InputError as exc:
            raise InputError(f"srs_path: {exc}") from None
        if n > max_n:
            raise InputError(f"srs_path: {srs_path}: {n} proofs given, but this SRS serves powers of two from 2 to {max_n}")

    def start(self, key_id: str, vk: dict, items: list[Item], srs_path: Path) -> Future:
        """The aggregation of `items` under key `key_id`'s vk (snarkjs JSON), on a worker thread: its Future
        (an Aggregated, or the InputError / SrsChanged that refused it). Busy when max_concurrent run already."""
        check_count(len(items))
        with self._lock:
            if self._running >= self.max_concurrent:
                raise Busy(f"{self._running} aggregation(s) are running, the most [aggregate] max_concurrent "
                           f"({self.max_concurrent}) allows; retry when one finishes")
            self._running += 1
        try:
            future = self._pool.submit(self._run, key_id, vk, items, srs_path)
        except BaseException:  # the pool is shut down (the daemon stops)
            self._done()
            raise
        future.add_done_callback(lambda f: self._done() if f.cancelled() else None)  # else _run counted it down
        return future

    def _done(self) -> None:
        with self._lock:
            self._running -= 1

    def _run(self, key_id: str, vk: dict, items: list[Item], srs_path: Path) -> Aggregated:
        t0 = time.perf_counter()
        result = "failed"
        try:
            out = self._aggregate(key_id, vk, items, srs_path)
            result = "completed"
            out.timings["total"] = (time.perf_counter() - t0) * 1000
            log.info("aggregated n=%d key=%s srs=%s%s %s", out.n, key_id, srs_path, " (development SRS)" if out.dev
                     else "", " ".join(f"{k}_ms={v:.1f}" for k, v in out.timings.items()))
            return out
        except InputError as exc:
            result = "rejected"
            log.info("Aggregate rejected: %s", exc)
            raise
        except SrsChanged as exc:
            log.warning("Aggregate failed: %s", exc)
            raise
        except Exception:
            log.exception("aggregation of %d proofs of key %s failed", len(items), key_id)
            raise
        finally:
            self._done()
            self.observe(result, time.perf_counter() - t0, len(items))

    def _aggregate(self, key_id: str, vk_json: dict, items: list[Item], srs_path: Path) -> Aggregated:
        timings = {}
        t = time.perf_counter()
        srs = self._load_srs(srs_path)
        timings["srs_load"] = (time.perf_counter() - t) * 1000
        vk = read_vk(vk_json, f"key {key_id!r}")
        if srs.curve is not vk.curve:
            raise InputError(f"srs_path: {srs_path} is an SRS of {srs.curve.name}, but key {key_id!r} is of "
                             f"{vk.curve.name}")
        try:
            key = srs.specialize(len(items))  # also checks the powers n uses, once per SRS and prefix
        except InputError as exc:
            if len(items) <= srs.max_n:  # n fits: its powers are bad, so the file is not kept resident
                self._forget(srs_path)
            raise InputError(f"srs_path: {exc}") from None
        t = time.perf_counter()
        self._check(key_id, vk_json, items)
        public, a, b, c = read_proofs(vk, ((it.public, it.proof, f"{it.name} public", f"{it.name} proof")
                                           for it in items))
        timings["check"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        agg = prover.aggregate(key, vk, public, a, b, c, threads=self.threads, gpu=self.gpu)
        text = json.dumps(proof_format.to_json(agg, srs.id, srs.dev, vk.digest, public))
        timings["aggregate"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        ok, bad = check_json(srs, vk, json.loads(text), "the aggregate", str(srs_path), self.threads)
        timings["verify"] = (time.perf_counter() - t) * 1000
        why = srs.changed()
        if why:
            self._forget(srs_path)
            raise SrsChanged(f"srs_path: {srs_path} changed on disk while it was read ({why}); no aggregate "
                             "returned: retry")
        if not ok:
            self._forget(srs_path)
            raise AggregateNotVerified(f"{bad} (key {key_id!r}, srs_path {srs_path}): nothing returned")
        return Aggregated(text, agg.n, srs.dev, timings)

    def _check(self, key_id: str, vk: dict, items: list[Item]) -> None:
        """Every proof verifies against the key's vk, or the call is refused naming the ones that do not."""
        res = verify_batch(vk, [(it.public, it.proof) for it in items],
                           names=[(f"{it.name} public", f"{it.name} proof") for it in items],
                           vk_name=f"key {key_id!r}", threads=self.threads)
        if res.bad:
            named = ", ".join(items[i].name for i in res.bad[:NAMED]) + (", ..." if len(res.bad) > NAMED else "")
            raise InputError(f"{len(res.bad)} of the {len(items)} proofs do not verify against key {key_id!r}'s "
                             f"verification key, so nothing is aggregated: {named}")

    def _load_srs(self, path: Path) -> AggregationSRS:
        """The SRS at `path`: the resident one while its file is unchanged, else read (and checked) now."""
        name = str(path)
        with self._lock:
            srs = self._srs.get(name)
            if srs is not None:
                self._srs.move_to_end(name)
        if srs is not None and not srs.changed():
            return srs
        if srs is not None:
            log.info("aggregation SRS %s changed on disk (%s): reading it again", name, srs.changed())
            self._forget(path)
        try:
            srs = read_srs(path)
        except InputError as exc:
            raise InputError(f"srs_path: {exc}") from None
        with self._lock:
            self._srs[name] = srs
            self._srs.move_to_end(name)
            while len(self._srs) > self.srs_resident:
                old, _ = self._srs.popitem(last=False)
                log.info("aggregation SRS %s no longer kept resident ([aggregate] srs_resident %d)", old,
                         self.srs_resident)
        log.info("aggregation SRS %s loaded: %s, max_n %d%s", name, srs.curve.name, srs.max_n,
                 " (development SRS: NOT SECURE FOR PRODUCTION)" if srs.dev else "")
        return srs

    def _forget(self, path: Path) -> None:
        with self._lock:
            self._srs.pop(str(path), None)

    def close(self, timeout: float = 0.0) -> bool:
        """Take no more work; wait up to timeout for the running aggregations. Whether none is left."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + timeout
        while self._running and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._running == 0
