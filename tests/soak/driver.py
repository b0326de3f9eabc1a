"""The soak with faults: jobs over both curves, a bad request every tenth, a SIGTERM and a kill -9
with restarts between, then a steady run for RSS and descriptors. Used by tests/soak/test_soak.py
(short, in CI) and bench/soak.py (long).

    fault phase   `jobs` jobs, 16 in flight, curve and key alternating, job i proving the chain
                  witness with k = K0 + i (public = [out, k], so a proof names its witness).
                  Every tenth request is bad (garbage, truncated, another curve's witness, an
                  unknown key) and must be refused at once. When a quarter of the jobs are
                  accepted the daemon gets SIGTERM (drain_timeout 1s: the rest of the running
                  jobs stay journaled), and is started again; at 60% it gets kill -9 and is
                  started again. Clients retry through the outages with the same job id (an
                  ALREADY_EXISTS on retry means the first try was accepted).
    check         every accepted job: exactly one journal row, COMPLETED; its proof verifies
                  (native pairing, and snarkjs when asked) against its curve's key and its
                  public k is its own; every result a client saw for a job is the same proof.
    steady phase  `steady` proofs without faults: daemon RSS after a warm-up and at the end,
                  and its open descriptors.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from snarkd.curves.params import curve_by_name  # noqa: E402
from snarkd.daemon.client import Client, RemoteDaemonError, RemoteInputError  # noqa: E402
from snarkd.formats.zkey import read_zkey, vk_json  # noqa: E402
from snarkd.setup import groth16_setup as gs  # noqa: E402
from snarkd.setup.chain_circuit import chain_r1cs_bytes, chain_witness, wtns_bytes  # noqa: E402
from snarkd.verifier import verify  # noqa: E402

CURVES = {"bn": "bn128", "bls": "bls12381"}
K0, X = 1000, 5
INFLIGHT = 16


def make_keys(d: Path, n: int) -> dict:
    """A chain key of n constraints per curve (snarkd setup), its vk, and a witness maker."""
    keys = {}
    for kid, cname in CURVES.items():
        curve = curve_by_name(cname)
        r1cs, zkey = d / f"{kid}.r1cs", d / f"{kid}.zkey"
        if not zkey.exists():
            r1cs.write_bytes(chain_r1cs_bytes(n, curve))
            gs.setup(r1cs, zkey, None, seed=gs.parse_seed("50a4"), progress=False)
        z = read_zkey(zkey)
        try:
            vk = vk_json(z, alphabeta=False)
        finally:
            z.close() if hasattr(z, "close") else None
        keys[kid] = {"zkey": zkey, "vk": vk, "curve": curve, "n": n}
    return keys


def witness(keys: dict, kid: str, k: int) -> bytes:
    key = keys[kid]
    return wtns_bytes(chain_witness(key["n"], key["curve"], k, X), key["curve"])


class Daemon:
    """One daemon config, started and signalled as an operator would (snarkd start / kill)."""

    def __init__(self, d: Path, keys: dict, port: int):
        self.dir, self.addr = d, f"127.0.0.1:{port}"
        self.pid_file = d / "run" / "snarkd.pid"
        self.journal = d / "run" / "snarkd.jobs.db"
        self.config = d / "snarkd.toml"
        self.config.write_text("\n".join([
            "[daemon]", f'listen = "{self.addr}"', f'pid_file = "{self.pid_file}"', f'log_file = "{d / "snarkd.log"}"',
            'drain_timeout = "1s"', "[synthesis]", "workers = 2", "threads = 1", "[limits]",
            "max_queued_per_client = 64", "[keys.preload]", *[f'{k} = "{v["zkey"]}"' for k, v in keys.items()]]) + "\n")
        self.pid: int | None = None
        self.starts = 0

    def cli(self, *args, timeout=300) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
        return subprocess.run([sys.executable, "-m", "snarkd", *args, "--config", str(self.config)],
                              capture_output=True, text=True, timeout=timeout, env=env)

    def start(self) -> None:
        r = self.cli("start")
        if r.returncode != 0:
            raise RuntimeError(f"snarkd start failed: {r.stdout}{r.stderr}")
        self.pid = int(r.stdout.split("pid ", 1)[1].split(",", 1)[0])
        self.starts += 1

    def signal(self, sig: int) -> None:
        os.kill(self.pid, sig)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if psutil.Process(self.pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"daemon pid {self.pid} did not exit after {signal.Signals(sig).name}")

    def stop(self) -> None:
        r = self.cli("stop")
        if r.returncode != 0:
            raise RuntimeError(f"snarkd stop failed: {r.stdout}{r.stderr}")

    def log(self) -> str:
        p = self.dir / "snarkd.log"
        return p.read_text() if p.exists() else ""


def _bad_request(keys: dict, rng: random.Random, i: int):
    """(key id, witness bytes) that the daemon must refuse at submit."""
    kid = "bn" if i % 2 == 0 else "bls"
    good = witness(keys, kid, K0 + i)
    return rng.choice([
        (kid, b"garbage" * rng.randint(1, 50)),
        (kid, good[: rng.randint(1, len(good) - 1)]),
        (kid, witness(keys, "bls" if kid == "bn" else "bn", K0 + i)),  # the other curve's witness
        ("no-such-key", good),
    ])


def run_faults(daemon: Daemon, keys: dict, jobs: int, seed: int = 7, log=print) -> dict:
    rng = random.Random(seed)
    accepted: dict[str, dict] = {}  # job id -> {"kid", "k"}
    seen: dict[str, set] = {}  # job id -> every proof a client received (as JSON text)
    rejected, lock = 0, threading.Lock()
    outage = threading.Event()  # set while the daemon is down on purpose
    up = threading.Event()
    up.set()
    fault_at = {"sigterm": max(1, jobs // 4), "kill9": max(2, (jobs * 3) // 5)}
    fault_at["sigterm"] += rng.randint(0, max(1, jobs // 10))  # "a random moment"
    fault_at["kill9"] += rng.randint(0, max(1, jobs // 10))
    faults_done: list[str] = []

    def retrying(fn):
        deadline = time.monotonic() + 300
        while True:
            up.wait(120)
            try:
                return fn()
            except RemoteDaemonError as exc:  # down, draining, or the job runs again after a restart
                if time.monotonic() > deadline:
                    raise
                if exc.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                                    grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                time.sleep(0.2)

    def one(i: int) -> None:
        nonlocal rejected
        with Client(daemon.addr, timeout=120) as c:
            if i % 10 == 9:  # a bad request every tenth
                kid, data = _bad_request(keys, random.Random(f"{seed}:{i}"), i)
                try:
                    retrying(lambda: c.submit(kid, data, job_id=f"bad-{i}"))
                except RemoteInputError as exc:
                    if exc.code == grpc.StatusCode.ALREADY_EXISTS:
                        # the daemon died between journaling this request and refusing it; the restart
                        # re-ran it from the journal and recorded the refusal: the id's outcome is FAILED
                        r = retrying(lambda: c.await_(f"bad-{i}"))
                        assert r.state == "FAILED", (i, r)
                    else:
                        assert exc.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND), exc
                    with lock:
                        rejected += 1
                    return
                raise AssertionError(f"bad request {i} was accepted")
            kid = "bn" if i % 2 == 0 else "bls"
            job_id, k = f"soak-{i}", K0 + i
            data = witness(keys, kid, k)

            def submit():
                try:
                    if i % 3 == 0:  # a synchronous Prove: its result comes with the reply
                        r = c.prove(kid, data, job_id=job_id)
                        with lock:
                            seen.setdefault(job_id, set()).add(json.dumps(r.proof, sort_keys=True))
                    else:
                        c.submit(kid, data, job_id=job_id)
                except RemoteInputError as exc:
                    if exc.code != grpc.StatusCode.ALREADY_EXISTS:  # a retry of an accepted request
                        raise
            with lock:
                accepted[job_id] = {"kid": kid, "k": k}  # before the call: a lost reply may still be accepted
            retrying(submit)
            n_acc = len(accepted)
            for name in ("sigterm", "kill9"):
                with lock:
                    due = n_acc >= fault_at[name] and name not in faults_done and not outage.is_set()
                    if due:
                        faults_done.append(name)
                        outage.set()
                        up.clear()
                if due:
                    sig = signal.SIGTERM if name == "sigterm" else signal.SIGKILL
                    log(f"soak: {name} at {n_acc} accepted jobs (pid {daemon.pid})")
                    daemon.signal(sig)
                    time.sleep(rng.uniform(0.1, 1.0))
                    daemon.start()
                    log(f"soak: restarted (pid {daemon.pid})")
                    outage.clear()
                    up.set()
            r = retrying(lambda: c.await_(job_id))
            assert r.state == "COMPLETED", (job_id, r.state, r.error)
            with lock:
                seen.setdefault(job_id, set()).add(json.dumps(r.reply.proof, sort_keys=True))

    t0 = time.monotonic()
    with ThreadPoolExecutor(INFLIGHT) as pool:
        for f in [pool.submit(one, i) for i in range(jobs)]:
            f.result()
    took = time.monotonic() - t0
    return {"accepted": accepted, "seen": seen, "rejected": rejected, "faults": faults_done, "seconds": took}


def check(daemon: Daemon, keys: dict, fault: dict, snarkjs_verify=None) -> dict:
    """Every accepted job: one COMPLETED journal row, a proof that verifies, its own k."""
    accepted = fault["accepted"]
    deadline = time.monotonic() + 15  # the journal records endings from a writer thread: a moment behind Await
    while True:
        db = sqlite3.connect(f"file:{daemon.journal}?mode=ro", uri=True)
        rows = {r[0]: r[1:] for r in db.execute("SELECT id, state, runs FROM jobs")}
        db.close()
        if all(rows.get(j, ("",))[0] == "COMPLETED" for j in accepted) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    lost = [j for j in accepted if j not in rows or rows[j][0] != "COMPLETED"]
    strays = [j for j in rows if j not in accepted and not (j.startswith("bad-") and rows[j][0] == "FAILED")]
    mixed, invalid, duplicated = [], [], []
    with Client(daemon.addr, timeout=120) as c:
        for job_id, meta in accepted.items():
            r = c.await_(job_id)
            if r.state != "COMPLETED":
                continue
            proof, public = r.reply.proof, r.reply.public
            if not verify(keys[meta["kid"]]["vk"], public, proof):
                invalid.append(job_id)
            if public[1] != str(meta["k"]):
                mixed.append(job_id)
            if snarkjs_verify is not None and not snarkjs_verify(meta["kid"], proof, public):
                invalid.append(job_id)
            if len(fault["seen"].get(job_id, set()) | {json.dumps(proof, sort_keys=True)}) > 1:
                duplicated.append(job_id)
    reruns = sum(1 for j in accepted if j in rows and rows[j][1] > 1)
    return {"jobs": len(accepted), "rejected": fault["rejected"], "faults": fault["faults"], "lost": lost,
            "strays": strays, "mixed_up": mixed, "invalid": invalid, "duplicated": duplicated,
            "rerun_after_restart": reruns, "fault_seconds": round(fault["seconds"], 1)}


def run_steady(daemon: Daemon, keys: dict, proofs: int, warmup: int) -> dict:
    """proofs without faults, INFLIGHT at a time; RSS after warm-up and at the end; descriptors."""
    proc = psutil.Process(daemon.pid)
    data = {kid: witness(keys, kid, K0 - 1) for kid in keys}
    vk_ok = []

    def one(i: int) -> None:
        kid = "bn" if i % 2 == 0 else "bls"
        with Client(daemon.addr, timeout=120) as c:
            r = c.prove(kid, data[kid])
        if i % 50 == 0:
            vk_ok.append(verify(keys[kid]["vk"], r.public, r.proof))

    with ThreadPoolExecutor(INFLIGHT) as pool:
        list(pool.map(one, range(warmup)))
        rss0, fds0 = proc.memory_info().rss, proc.num_fds()
        t0 = time.monotonic()
        samples = []
        for start in range(0, proofs, 100):
            list(pool.map(one, range(start, min(proofs, start + 100))))
            samples.append(round(proc.memory_info().rss / 2**20, 1))
        took = time.monotonic() - t0
    time.sleep(0.5)
    rss1, fds1 = proc.memory_info().rss, proc.num_fds()
    return {"proofs": proofs, "warmup": warmup, "seconds": round(took, 1), "s_per_proof": round(took / proofs, 4),
            "rss_after_warmup_mib": round(rss0 / 2**20, 1), "rss_end_mib": round(rss1 / 2**20, 1),
            "rss_growth_mib": round((rss1 - rss0) / 2**20, 1), "rss_per_100_mib": samples,
            "fds_after_warmup": fds0, "fds_end": fds1, "verified_samples": sum(vk_ok), "all_verified": all(vk_ok)}


def soak(workdir: Path, port: int, jobs: int, steady: int, n: int = 30, warmup: int = 100, snarkjs_verify=None,
         log=print) -> dict:
    keys = make_keys(workdir, n)
    daemon = Daemon(workdir, keys, port)
    daemon.start()
    try:
        fault = run_faults(daemon, keys, jobs, log=log)
        out = check(daemon, keys, fault, snarkjs_verify)
        out["steady"] = run_steady(daemon, keys, steady, warmup) if steady else None
        out["starts"] = daemon.starts
        out["log_errors"] = [ln for ln in daemon.log().splitlines() if " ERROR " in ln][:20]
    finally:
        try:
            daemon.stop()
        except Exception:  # noqa: BLE001
            if daemon.pid:
                try:
                    os.kill(daemon.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    out["constraints"] = n
    return out
