"""The bench client: COUNT jobs against a running daemon, INFLIGHT at a time.

Each job is one Prove call (a witness, or inputs the daemon turns into a
witness), with `partitions` partitions. The run records, per job, the client's
start/end and the daemon's per-partition timings and wall-clock spans; the
daemon's Status before and after gives its version, config fingerprint, peak RSS
and device busy seconds.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import NamedTuple

from tqdm import tqdm

from snarkd.atomic import atomic_write_json
from snarkd.bench.report import summarize
from snarkd.daemon.client import Client, RemoteDeadlineExceeded
from snarkd.errors import SnarkdError
from snarkd.verifier import verify

URGENT_OUTSTANDING = 4  # urgent jobs in flight at most (run_bench's urgent_outstanding; `snarkd bench --urgent-outstanding`)


def _status(client) -> dict:
    st = client.status()
    try:
        st["engine"] = json.loads(st.pop("engine_json", "") or "{}")
    except ValueError:
        st["engine"] = {}
    return st


def _job_kwargs(witness, inputs, partitions: int) -> dict:
    """Client.prove's keyword arguments for one job: a .wtns path (the daemon reads the file), .wtns bytes, or
    inputs (sent as JSON), one per partition."""
    if isinstance(witness, str):
        return {"witness_paths": [witness] * partitions}
    if witness is not None:
        return {"witnesses": [witness] * partitions}
    return {"inputs": [json.dumps(inputs)] * partitions}


def run_bench(addr: str, key: str, *, witness: bytes | str | list | None = None, inputs: dict | list | None = None,
              count: int = 1,
              inflight: int = 1, partitions: int = 1, priority: int = 0, timeout: float = 3600,
              vk: dict | None = None, progress: bool = True, proofs_dir: str | None = None,
              transport: str = "auto", connect: dict | None = None, lane: str = "", deadline: float | None = None,
              urgent_lane: str = "", urgent_every: float = 0.0, urgent_deadline: float | None = None,
              urgent_outstanding: int = URGENT_OUTSTANDING, urgent_process: bool = False) -> dict:
    """Run the bench; returns the run dict (with "summary"). witness: .wtns bytes, or a .wtns file's
    path (the client can then hand the daemon the file itself); inputs: a dict of circuit inputs. Either may
    be a list instead (a pool): job i sends element i % len (distinct statements: bench/daemon_inputs.py's
    --inputs-dir, every job in flight another RSA signature); vk: verify every proof client-side too;
    proofs_dir: write every proof as proof-<job>-<partition>.json / public-<job>-<partition>.json;
    transport: how witnesses travel (snarkd.daemon.client.TRANSPORTS; auto = the fastest available);
    connect: Client keyword arguments (tls_ca, token_file, ...); lane, deadline: the jobs' lane and deadline
    (seconds). urgent_lane with urgent_every: besides the COUNT jobs, one job on that lane every urgent_every
    seconds while they run (its deadline urgent_deadline), so the report compares the lanes' latencies. An
    urgent job's latency counts from its arrival (the tick), not from when a client thread took it; at most
    urgent_outstanding of them are in flight: a tick that finds that many is dropped and counted
    (summary.urgent_dropped), so an urgent rate the daemon cannot keep up with shows as drops, not as a
    client-side queue that grows without bound. urgent_process: the urgent jobs come from a client process of
    their own (its own channel and interpreter), as a deadline-bound requester beside a bulk one would; by
    default they share this process with the bulk jobs' INFLIGHT threads."""
    if (witness is None) == (inputs is None):
        raise ValueError("give a witness or inputs")
    if urgent_outstanding < 1:
        raise ValueError("urgent_outstanding must be at least 1")
    if count < 1 or inflight < 1 or partitions < 1:
        raise ValueError("count, inflight and partitions must be at least 1")
    pool = witness if isinstance(witness, list) else inputs if isinstance(inputs, list) else None
    if pool is not None and not pool:
        raise ValueError("an empty pool of witnesses or inputs")
    if pool is None:
        job_kwargs = [_job_kwargs(witness, inputs, partitions)]
    elif witness is not None:
        job_kwargs = [_job_kwargs(w, None, partitions) for w in pool]
    else:
        job_kwargs = [_job_kwargs(None, x, partitions) for x in pool]
    run = {"format": "snarkd-bench/1", "addr": addr, "key": key, "source": "witness" if witness is not None else "inputs",
           "distinct": len(job_kwargs), "count": count, "inflight": inflight, "partitions": partitions,
           "priority": priority, "lane": lane,
           "deadline": deadline, "urgent_lane": urgent_lane, "urgent_every": urgent_every, "urgent_dropped": 0,
           "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "jobs": []}
    bar = None
    if progress:
        bar = tqdm(total=count, unit="proof", desc=f"bench c={count} j={inflight}", leave=False, dynamic_ncols=True)
    lock = threading.Lock()
    verified = [0]
    with Client(addr, timeout=timeout, transport=transport, **(connect or {})) as client:
        run["daemon_before"] = _status(client)
        if key not in {k["id"] for k in run["daemon_before"].get("keys", [])}:
            raise SnarkdError(f"the daemon at {addr} has no key {key!r} loaded "
                              f"(loaded: {', '.join(k['id'] for k in run['daemon_before'].get('keys', [])) or 'none'})")

        def one(i: int, job_lane: str = lane, job_deadline: float | None = deadline,
                arrived: float | None = None) -> dict:
            rec = _one_job(client, key, i, job_kwargs[i % len(job_kwargs)], priority, job_lane, job_deadline,
                           arrived, vk, proofs_dir)
            with lock:
                verified[0] += rec.pop("verified")
                if bar is not None:
                    bar.update(1)
            return rec

        def urgent(done) -> list:
            if urgent_process:
                recs, dropped = _urgent_from_process(UrgentClient(
                    addr, key, job_kwargs, count, priority, urgent_lane, urgent_every, urgent_deadline,
                    urgent_outstanding, vk, proofs_dir, timeout, transport, connect), done)
                with lock:
                    verified[0] += sum(r.pop("verified") for r in recs)
            else:
                recs, dropped = _urgent_loop(lambda n, arrived: one(count + n, urgent_lane, urgent_deadline, arrived),
                                             urgent_every, urgent_outstanding, done)
            run["urgent_dropped"] += dropped
            return recs

        run["t_start"] = time.time()
        done = _UrgentSignals(urgent_process)
        # exactly `inflight` workers for the COUNT jobs; the urgent lane's loop has a thread of its own (a worker
        # more in this pool let j + 1 jobs run when there was no urgent lane: at j = 1 each job waited for
        # another's device stage, p50 twice the time per proof)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-side") as side_pool, \
                ThreadPoolExecutor(max_workers=inflight, thread_name_prefix="bench") as pool:
            side = side_pool.submit(urgent, done) if urgent_lane and urgent_every > 0 else None
            if side is not None and urgent_process:
                done.ready.wait()  # the urgent client's process is up and connected before the bulk jobs start
            try:
                run["jobs"] = list(pool.map(one, range(count)))
            finally:
                done.set()
            run["jobs"] += side.result() if side is not None else []
        run["t_end"] = time.time()
        run["transport"] = client.last_transport
        run["daemon_after"] = _status(client)
    if bar is not None:
        bar.close()
    if vk is not None:
        run["verified"] = verified[0]
    return summarize(run)


def _one_job(client, key: str, i: int, kwargs: dict, priority: int, lane: str, deadline, arrived, vk,
             proofs_dir) -> dict:
    """Job i through `client`: its record (start, end, state, the daemon's timings and spans) with "verified" (1
    when vk was given and every partition's proof verifies here, else 0)."""
    rec = {"i": i, "start": arrived if arrived is not None else time.time(), "state": "COMPLETED", "error": "",
           "lane": lane or "default", "verified": 0}
    try:
        r = client.prove(key, priority=priority, lane=lane, deadline=deadline, **kwargs)
        rec["end"] = time.time()  # the answer is here: the latency a client sees (its own checks below are not the daemon's)
        rec["job_id"] = r.job_id
        rec["timings"] = r.timings
        rec["partitions"] = [{"index": p.index, "timings": p.timings, "spans": p.spans} for p in r.partitions]
        if proofs_dir:
            for p in r.partitions:
                atomic_write_json(os.path.join(proofs_dir, f"proof-{i}-{p.index}.json"), p.proof)
                atomic_write_json(os.path.join(proofs_dir, f"public-{i}-{p.index}.json"), p.public)
        if vk is not None:
            if all(verify(vk, p.public, p.proof) for p in r.partitions):
                rec["verified"] = 1
            else:
                rec["state"], rec["error"] = "INVALID", "a returned proof does not verify"
    except RemoteDeadlineExceeded as exc:  # refused by its estimate, or expired: a deadline missed
        rec["state"], rec["error"] = "DEADLINE", str(exc)
    except SnarkdError as exc:
        rec["state"], rec["error"] = "FAILED", str(exc)
    rec.setdefault("end", time.time())
    return rec


def _urgent_loop(send, every: float, outstanding: int, done) -> tuple[list, int]:
    """One urgent job every `every` seconds until `done` is set, send(n, arrived) running the n-th on a thread of
    its own (arrived: the tick's time, where its latency starts); an arrival that finds `outstanding` in flight is
    dropped. Returns (the records, the arrivals dropped)."""
    futures, n, dropped = [], 0, 0
    with ThreadPoolExecutor(max_workers=outstanding, thread_name_prefix="bench-urgent") as upool:
        while not done.wait(every):
            if sum(not f.done() for f in futures) >= outstanding:
                dropped += 1  # every urgent thread busy: this arrival is not sent
                continue
            n += 1
            futures.append(upool.submit(send, n, time.time()))
    return [f.result() for f in futures], dropped


class _UrgentSignals:
    """The bulk run's end (set, wait) for the urgent lane's loop, and, with the loop in a process of its own, that
    process's readiness: multiprocessing events (spawn), so they cross into it."""

    def __init__(self, process: bool):
        if process:
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")  # not fork: this process holds gRPC's threads
            self.ctx, self.stop, self.ready = ctx, ctx.Event(), ctx.Event()
        else:
            self.ctx, self.stop, self.ready = None, threading.Event(), threading.Event()

    def set(self) -> None:
        self.stop.set()

    def wait(self, timeout: float) -> bool:
        return self.stop.wait(timeout)


class UrgentClient(NamedTuple):
    """What a client process of the urgent lane's own needs (sent to it pickled): where and what it sends."""
    addr: str
    key: str
    job_kwargs: list  # per job, cycled: the witness or inputs to send
    first: int  # the number of the first urgent job (after the bulk jobs')
    priority: int
    lane: str
    every: float  # seconds between arrivals
    deadline: float | None
    outstanding: int  # arrivals dropped beyond this many in flight
    vk: object
    proofs_dir: object
    timeout: float
    transport: str
    connect: dict | None


def _urgent_from_process(c: UrgentClient, signals) -> tuple[list, int]:
    """The urgent lane's loop (_urgent_loop) in a spawned process with its own Client: its (records, arrivals
    dropped), back through a queue."""
    results = signals.ctx.Queue()
    proc = signals.ctx.Process(target=_urgent_process_main, name="bench-urgent-client", daemon=True,
                               args=(c, signals.stop, signals.ready, results))
    proc.start()
    try:
        while True:  # (records, dropped) or an error text; ready is set by the child once connected
            try:
                got = results.get(timeout=1.0)
                break
            except queue.Empty:
                if not proc.is_alive():
                    got = f"it exited with code {proc.exitcode} before reporting"
                    break
    finally:
        signals.ready.set()  # never leave the bulk run waiting, whatever the child did
        proc.join(timeout=30)
    if isinstance(got, str):
        raise SnarkdError(f"the urgent lane's client process failed: {got}")
    return got


def _urgent_process_main(c: UrgentClient, stop, ready, results) -> None:
    try:
        with Client(c.addr, timeout=c.timeout, transport=c.transport, **(c.connect or {})) as client:
            client.status()  # connected (and the witness spool found) before the first tick
            ready.set()
            send = lambda n, arrived: _one_job(client, c.key, c.first + n,  # noqa: E731
                                               c.job_kwargs[(c.first + n) % len(c.job_kwargs)], c.priority, c.lane,
                                               c.deadline, arrived, c.vk, c.proofs_dir)
            results.put(_urgent_loop(send, c.every, c.outstanding, stop))
    except BaseException as exc:  # reported to the parent, which raises it
        ready.set()
        results.put(f"{type(exc).__name__}: {exc}")
