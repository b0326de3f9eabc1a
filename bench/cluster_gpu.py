#!/usr/bin/env python3
"""Scaling through the cluster front: one Ray node (one GPU) against two, on one host with two GPUs.

    python bench/cluster_gpu.py --key-dir DIR [--j 32] [--count 384] [--reps 2] [--out DIR]

DIR holds circuit.zkey and witness.wtns (bench/make_chain_keys.py --power 20 --curves bn128 makes them).

  1. `ray start --head` with CUDA_VISIBLE_DEVICES=0 (one GPU, --num-cpus = half the cores)
  2. `snarkd start` with [cluster] address = "auto": the front, one engine actor on that GPU, the key
     loaded by path
  3. warm-up, then `snarkd bench`'s runner (run_bench) through the front: COUNT proofs at j in flight,
     every proof verified by the client too; REPS runs                                    -> "1 node"
  4. `ray start --address HEAD` with CUDA_VISIBLE_DEVICES=1: a second node; the front gives it an actor
     by itself once it joins, and routes to it once the key is resident there
  5. warm-up, REPS runs                                                                    -> "2 nodes"
  6. `snarkd stop`, `ray stop`

Per run: s/proof, proofs/s, latency, per-actor kernel-busy (from each actor's own GPU clock, read
before and after with the background status settled), the front's CPU per proof and peak RSS, the
witness bytes that crossed to actors. Writes OUT/cluster-gpu.json, a sample proof of each setup
(OUT/sample-{1,2}node-{proof,public}.json, one of them proved on the second node) and OUT/vk.json for
`snarkjs groth16 verify`, and the tail of the front's log (OUT/front.log).
Runs are sequential (a node cannot leave and come back within one front), not alternated. The front runs
without its job journal ([daemon] journal = "off"): a synced SQLite row per job is a cost of any daemon
(one front or one single daemon alike) that this run does not measure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.bench.runner import run_bench  # noqa: E402
from snarkd.daemon.client import Client  # noqa: E402
from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402
from snarkd.formats.zkey import read_zkey, vk_json  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def ray_env(gpu: str) -> dict:
    # actors import this tree's snarkd: Ray's workers inherit the environment of `ray start`
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "CUDA_VISIBLE_DEVICES": gpu, "RAY_USAGE_STATS_ENABLED": "0",
           # that machine's MemTotal starts small and grows with use: Ray's OOM monitor would misread it
           "RAY_memory_monitor_refresh_ms": "0",
           # an isolated machine: no token to copy between the nodes of one host
           "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")}
    return env


def ray_cli() -> list[str]:
    """The `ray` command of this Python (its console script, else the module)."""
    exe = Path(sys.executable).with_name("ray")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ray.scripts.scripts"]


def ray(*args, gpu: str = "", timeout: float = 180) -> subprocess.CompletedProcess:
    r = subprocess.run([*ray_cli(), *args], capture_output=True, text=True, timeout=timeout, env=ray_env(gpu))
    log(f"ray {' '.join(args[:2])}: rc={r.returncode} {(r.stdout + r.stderr).strip().splitlines()[-1:] }")
    if r.returncode:
        raise SystemExit(f"ray {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return r


def engine_status(c: Client) -> dict:
    return json.loads(c.status()["engine_json"])


def settled_status(c: Client) -> dict:
    """The front's status once the actors' background statuses are fresh (they refresh every second)."""
    time.sleep(1.6)
    return engine_status(c)


def wait_actors(c: Client, n: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = engine_status(c)
        if st["cluster"]["actors_ready"] >= n:
            return st
        time.sleep(0.5)
    raise SystemExit(f"only {engine_status(c)['cluster']['actors_ready']} of {n} actors ready after {timeout}s: "
                     f"{json.dumps(engine_status(c)['cluster']['actors'])[:2000]}")


def measure(a, c: Client, addr: str, wtns: Path, vk: dict, label: str, out_dir: Path, rep: int) -> dict:
    s0 = settled_status(c)
    with tempfile.TemporaryDirectory() as proofs:
        run = run_bench(addr, "k", witness=str(wtns), count=a.count, inflight=a.j, progress=False, vk=vk,
                        proofs_dir=proofs)
        ok = [jb for jb in run["jobs"] if jb["state"] == "COMPLETED"]
        if rep == 0 and ok:  # a sample for snarkjs: on two nodes, one proved by the second actor
            pick = ok[0]
            if label == "2 nodes":
                later = [jb for jb in ok if any(s["worker"].split("/", 1)[0] == a.second_actor
                                                for p in jb["partitions"] for s in p["spans"])]
                pick = later[0] if later else pick
            tag = label.split()[0]
            for f in ("proof", "public"):
                shutil.copy(Path(proofs, f"{f}-{pick['i']}-0.json"), out_dir / f"sample-{tag}node-{f}.json")
    s1 = settled_status(c)
    wall = run["t_end"] - run["t_start"]
    k0 = {d["name"]: d.get("kernel_busy_s") or 0.0 for d in s0["devices"]}
    lat = sorted(jb["end"] - jb["start"] for jb in ok)
    per_actor = {}
    for jb in ok:
        for p in jb["partitions"]:
            names = {s["worker"].split("/", 1)[0] for s in p["spans"]}
            for n in names:
                per_actor[n] = per_actor.get(n, 0) + 1
    res = {
        "label": label, "rep": rep, "j": a.j, "proofs": len(ok), "failed": [jb["error"] for jb in run["jobs"]
                                                                         if jb["state"] != "COMPLETED"],
        "verified_by_client": run.get("verified"), "wall_s": round(wall, 4),
        "s_per_proof": round(wall / len(ok), 5) if ok else None,
        "proofs_per_s": round(len(ok) / wall, 3) if wall > 0 else None,
        "latency_ms": {"p50": round(statistics.median(lat) * 1e3, 1),
                       "p95": round(lat[int(0.95 * (len(lat) - 1))] * 1e3, 1)} if lat else {},
        "kernel_busy": {d["name"]: round(((d.get("kernel_busy_s") or 0.0) - k0.get(d["name"], 0.0)) / wall, 4)
                        for d in s1["devices"]},
        "proofs_per_actor": per_actor,
        "front_cpu_ms_per_proof": round((s1["cpu_s"] - s0["cpu_s"]) * 1e3 / max(1, len(ok)), 3),
        "front_cpu_cores": round((s1["cpu_s"] - s0["cpu_s"]) / wall, 3),
        "front_rss_mib": round(s1["memory"]["rss"] / 2**20, 1),
        "witness_budget_peak_mib": round(s1["memory"]["peak"] / 2**20, 1),
        "phase_median_ms": {k: round(v, 2) for k, v in run["summary"]["phase_median_ms"].items()},
        "transport": run.get("transport", ""),
        "retried": s1["jobs"]["retried"] - s0["jobs"]["retried"],
    }
    log(json.dumps(res))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--key-dir", required=True)
    ap.add_argument("--j", type=int, default=32)
    ap.add_argument("--count", type=int, default=384, help="proofs per run")
    ap.add_argument("--reps", type=int, default=2, help="runs per setup")
    ap.add_argument("--warm", type=int, default=64)
    ap.add_argument("--gpus", default="0,1", help="CUDA_VISIBLE_DEVICES of the first and the second node")
    ap.add_argument("--synthesis", type=int, default=16)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--wpd", type=int, default=2)
    ap.add_argument("--fin", type=int, default=4)
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    a = ap.parse_args()
    kd, out_dir = Path(a.key_dir), Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    zkey, wtns = kd / "circuit.zkey", kd / "witness.wtns"
    z = read_zkey(zkey)
    vk = vk_json(z, alphabeta=False)
    (out_dir / "vk.json").write_text(json.dumps(vk))
    cores = os.cpu_count() or 2
    res = {"benchmark": "GPU proofs through the cluster front: 1 Ray node vs 2 (bench/cluster_gpu.py)",
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": cores,
           "key": {"path": str(zkey), "domain_size": z.domain_size, "n_vars": z.n_vars, "curve": z.curve.name,
                   "witness_bytes": wtns.stat().st_size},
           "settings": {"j": a.j, "count": a.count, "reps": a.reps, "synthesis_workers": a.synthesis,
                        "threads": a.threads, "workers_per_device": a.wpd, "finalize_workers": a.fin},
           "runs": []}
    z.close()
    gpu_a, gpu_b = a.gpus.split(",")
    node_cpus = str(max(2, cores // 2))
    work = Path(tempfile.mkdtemp(prefix="snarkd-cluster-"))
    port = free_port()
    addr = f"127.0.0.1:{port}"
    cfg = work / "front.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "{addr}"', f'pid_file = "{work}/front.pid"', f'log_file = "{work}/front.log"',
        'journal = "off"',
        "[transport]", f'witness_spool = "{work}/spool"',
        "[synthesis]", f"workers = {a.synthesis}", f"threads = {a.threads}",
        "[gpus]", f"workers_per_device = {a.wpd}",
        "[memory]", 'budget = "48GiB"',
        "[pipeline]", f"finalize_workers = {a.fin}",
        "[cluster]", 'address = "auto"', f"actor_cpus = {max(1, int(node_cpus) // 2)}", 'key_placement = "path"',
        'witness_budget = "8GiB"', 'ready_timeout = "300s"',
        "[keys.preload]", f'k = "{zkey}"']) + "\n")
    snarkd = [sys.executable, "-m", "snarkd"]
    env = ray_env("")  # the front itself uses no GPU
    started = False
    try:
        ray("start", "--head", "--num-gpus", "1", "--num-cpus", node_cpus, "--include-dashboard=false",
            "--disable-usage-stats", gpu=gpu_a)
        t0 = time.monotonic()
        r = subprocess.run([*snarkd, "start", "--config", str(cfg)], env=env, capture_output=True, text=True,
                           timeout=600)
        if r.returncode:
            raise SystemExit(f"snarkd start failed: {r.stdout}{r.stderr}")
        started = True
        res["front_start_s"] = round(time.monotonic() - t0, 2)
        log(r.stdout.strip().splitlines()[0])
        with Client(addr, timeout=600) as c:
            st = wait_actors(c, 1, 300)
            res["gcs"] = st["cluster"]["gcs"]
            log(f"1 actor ready: {[x['name'] for x in st['cluster']['actors']]}; warm-up")
            run_bench(addr, "k", witness=str(wtns), count=a.warm, inflight=a.j, progress=False)
            for rep in range(a.reps):
                res["runs"].append(measure(a, c, addr, wtns, vk, "1 node", out_dir, rep))
            first = {x["name"] for x in engine_status(c)["cluster"]["actors"]}
            t1 = time.monotonic()
            ray("start", "--address", res["gcs"], "--num-gpus", "1", "--num-cpus", node_cpus, gpu=gpu_b)
            st = wait_actors(c, 2, 300)
            res["second_node_ready_s"] = round(time.monotonic() - t1, 2)
            a.second_actor = next(x["name"] for x in st["cluster"]["actors"] if x["name"] not in first)
            log(f"2 actors ready after {res['second_node_ready_s']}s (new: {a.second_actor}); warm-up")
            run_bench(addr, "k", witness=str(wtns), count=a.warm, inflight=a.j, progress=False)
            for rep in range(a.reps):
                res["runs"].append(measure(a, c, addr, wtns, vk, "2 nodes", out_dir, rep))
            res["cluster_status"] = engine_status(c)["cluster"]
    finally:
        if started:
            r = subprocess.run([*snarkd, "stop", "--config", str(cfg)], env=env, capture_output=True, text=True,
                               timeout=180)
            log(r.stdout.strip() or r.stderr.strip())
        subprocess.run([*ray_cli(), "stop", "--force"], capture_output=True, env=env, timeout=120)
        if (work / "front.log").exists():
            lines = (work / "front.log").read_text().splitlines()
            (out_dir / "front.log").write_text("\n".join(lines[:60] + ["..."] + lines[-200:]) + "\n")
        med = {}
        for label in ("1 node", "2 nodes"):
            v = [r["s_per_proof"] for r in res["runs"] if r["label"] == label and r["s_per_proof"]]
            if v:
                med[label] = statistics.median(v)
        res["median_s_per_proof"] = med
        if len(med) == 2:
            res["speedup_2_over_1"] = round(med["1 node"] / med["2 nodes"], 3)
        (out_dir / "cluster-gpu.json").write_text(json.dumps(res, indent=1))
    print(f"{'setup':8} {'rep':>3} {'s/proof':>8} {'proofs/s':>8} {'p50 ms':>7} {'front ms/proof':>14}  kernel-busy")
    for r in res["runs"]:
        print(f"{r['label']:8} {r['rep']:3d} {r['s_per_proof'] or 0:8.4f} {r['proofs_per_s'] or 0:8.2f} "
              f"{r['latency_ms'].get('p50', 0):7.1f} {r['front_cpu_ms_per_proof']:14.2f}  {r['kernel_busy']}")
    print(f"speedup 2 nodes / 1 node: {res.get('speedup_2_over_1')}")
    return 0 if all(not r["failed"] and r["verified_by_client"] == r["proofs"] for r in res["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
