#!/usr/bin/env python3
"""The cluster front's own cost per job, for the scaling model (docs/cluster.md, "Scaling out").

    python bench/cluster_front.py [--out DIR]     # starts Ray: run it on an isolated machine, or in
                                                   # `unshare --net` (tests/cluster/netns.py brings lo up)

  1. a 2^10 chain key (bench/make_chain_keys.py), a front with [cluster] address = "local" (a private
     Ray instance: one node, one engine actor), started by `snarkd start`
  2. the front idle for IDLE seconds: its fixed CPU rate (monitor, background statuses)
  3. COUNT small proofs at j in flight through the front (`snarkd bench`'s runner): the front's CPU per
     job minus the fixed rate = the per-job cost that does not grow with the witness
  4. ray.put of Witness objects of 2, 8 and 32 MiB (the front's one copy of a witness into the object
     store), timed in a driver joined to the same Ray: the per-byte cost

Writes OUT/cluster-front-cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.bench.runner import run_bench  # noqa: E402
from snarkd.daemon.client import Client  # noqa: E402
from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402
from snarkd.formats.wtns import Witness  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def engine(c: Client) -> dict:
    return json.loads(c.status()["engine_json"])


def threads_cpu(pid: int) -> dict:
    """CPU seconds per thread name of the front (Linux: /proc/PID/task/*/comm and stat), largest first."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return dict(sorted(((k, round(v, 2)) for k, v in out.items()), key=lambda kv: -kv[1])[:12])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--j", type=int, default=16)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--reps", type=int, default=10, help="ray.put timings per size")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    a = ap.parse_args()
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAY_USAGE_STATS_ENABLED": "0"}
    work = Path(tempfile.mkdtemp(prefix="snarkd-front-"))
    subprocess.run([sys.executable, str(REPO / "bench" / "make_chain_keys.py"), "--power", "10", "--curves", "bn128",
                    "--no-check", "--out", str(work)], check=True, capture_output=True, env=env)
    kd = work / "chain10-bn128"
    addr = f"127.0.0.1:{free_port()}"
    cfg = work / "front.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "{addr}"', f'pid_file = "{work}/front.pid"', f'log_file = "{work}/front.log"',
        'journal = "off"',
        "[transport]", f'witness_spool = "{work}/spool"', "[synthesis]", "workers = 1", "threads = 1",
        "[gpus]", "workers_per_device = 1", "[pipeline]", "self_verify = true",
        "[cluster]", 'address = "local"', "[keys.preload]", f'k = "{kd / "circuit.zkey"}"']) + "\n")
    snarkd = [sys.executable, "-m", "snarkd"]
    r = subprocess.run([*snarkd, "start", "--config", str(cfg)], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise SystemExit(f"snarkd start failed: {r.stdout}{r.stderr}")
    res = {"benchmark": "the cluster front's cost per job (bench/cluster_front.py)",
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": os.cpu_count(),
           "machine": "see README: 2-core development VM, shared", "settings": vars(a)}
    try:
        with Client(addr, timeout=600) as c:
            run_bench(addr, "k", witness=str(kd / "witness.wtns"), count=32, inflight=a.j, progress=False)
            s0, t0 = engine(c), time.monotonic()
            time.sleep(a.idle)
            s1, t1 = engine(c), time.monotonic()
            idle_rate = (s1["cpu_s"] - s0["cpu_s"]) / (t1 - t0)
            run = run_bench(addr, "k", witness=str(kd / "witness.wtns"), count=a.count, inflight=a.j, progress=False)
            s2 = engine(c)
            res["front_threads_cpu_s"] = threads_cpu(c.status()["pid"])
            wall = run["t_end"] - run["t_start"]
            ok = sum(j["state"] == "COMPLETED" for j in run["jobs"])
            cpu = s2["cpu_s"] - s1["cpu_s"]
            res["idle_cpu_cores"] = round(idle_rate, 4)
            res["jobs"] = {"completed": ok, "wall_s": round(wall, 3), "proofs_per_s": round(ok / wall, 2),
                           "witness_bytes": (kd / "witness.wtns").stat().st_size,
                           "front_cpu_s": round(cpu, 3),
                           "front_cpu_ms_per_job": round(1e3 * cpu / ok, 3),
                           "front_cpu_ms_per_job_less_idle": round(1e3 * (cpu - idle_rate * wall) / ok, 3),
                           "transport": run.get("transport")}
            log(json.dumps(res["jobs"]))
            gcs = s2["cluster"]["gcs"]
        import ray

        ray.init(address=gcs, include_dashboard=False, log_to_driver=False)
        puts = {}
        for mib in (2, 8, 32):
            n = mib * 2**20 // 32
            w = Witness(1, np.random.default_rng(1).integers(0, 2**63, size=(n, 4), dtype=np.uint64))
            ms = []
            for _ in range(a.reps):
                t = time.perf_counter()
                ref = ray.put(w)
                ms.append((time.perf_counter() - t) * 1e3)
                del ref
            puts[f"{mib}MiB"] = {"median_ms": round(statistics.median(ms), 3), "min_ms": round(min(ms), 3),
                                 "GB_per_s": round(mib * 2**20 / 1e9 / (statistics.median(ms) / 1e3), 2)}
            log(f"ray.put {mib} MiB: {puts[f'{mib}MiB']}")
        res["ray_put"] = puts
        ray.shutdown()
    finally:
        r = subprocess.run([*snarkd, "stop", "--config", str(cfg)], env=env, capture_output=True, text=True,
                           timeout=180)
        log(r.stdout.strip() or r.stderr.strip())
    (out_dir / "cluster-front-cost.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
