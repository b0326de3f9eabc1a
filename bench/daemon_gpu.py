#!/usr/bin/env python3
"""A GPU proof through the real daemon against the in-process engine, side by side, in one run.

    python bench/daemon_gpu.py --key-dir DIR [--devices 0] [--j 1,4,16,32] [--count 96] [--out DIR]
                               [--gpu-budget 12GiB] [--partitions 10]

DIR holds circuit.zkey and witness.wtns (bench/make_chain_keys.py --power 20 --curves bn128 makes them).
For each j (jobs kept in flight): the in-process engine (the yardstick: no gRPC, no transport), then the
daemon started with `snarkd start` and driven by `snarkd bench`'s runner over gRPC (the witness sent the way
the client picks: by reference on this host). Both use the same engine settings. Every proof is
self-verified by the engine; one per run is kept for `snarkjs groth16 verify`.
Per run: s/proof, latency (p50, p95), the engine's phases, lock-busy and kernel-busy per device.
Writes OUT/daemon-gpu.json and OUT/sample-proof.json, OUT/sample-public.json, OUT/vk.json.

--urgent-every S (lanes): the daemon gets two lanes, `urgent` (priority 10, share --urgent-share) and `bulk`, and
runs instead: urgent jobs alone at j = 1 (the idle latency), then for each j > 1 bulk jobs alone and bulk jobs
with one urgent job every S seconds beside them (`snarkd bench --urgent-lane`). Reported: the urgent jobs'
p50/p99 against the idle p50, bulk proofs/s with and without them (OUT/daemon-lanes.json). --urgent-client
thread,process repeats each mixed run with the urgent jobs sent from a thread of the bulk client's process and from
a client process of their own (runner.run_bench's urgent_process).
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
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.bench.report import lane_summary  # noqa: E402
from snarkd.bench.runner import run_bench  # noqa: E402
from snarkd.config import EngineConfig  # noqa: E402
from snarkd.daemon.client import Client  # noqa: E402
from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402
from snarkd.engine import Engine  # noqa: E402
from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.formats.zkey import read_zkey, vk_json  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def engine_settings(a) -> dict:
    return dict(synthesis_workers=a.synthesis, threads=a.threads, devices=tuple(a.devices), workers_per_device=a.wpd,
                finalize_workers=a.fin, memory_budget="96GiB", self_verify=True, gpu_memory_budget=a.gpu_budget,
                **a.engine_setting)


def engine_setting(text: str) -> tuple:
    """--engine-setting FIELD=VALUE: an EngineConfig field and a JSON value (A/B of a setting in one call)."""
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: expected FIELD=VALUE (VALUE in JSON)")
    try:
        return name.strip(), json.loads(value)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: VALUE is not JSON ({e})") from None


def kernel_busy(devs: list) -> dict:
    return {d["name"]: d.get("kernel_busy_s") for d in devs}


def run_in_process(a, zkey: Path, wtns: Path) -> list[dict]:
    eng = Engine(EngineConfig(**engine_settings(a)))
    eng.keys.load("k", str(zkey))
    eng.start()
    w = read_wtns(wtns)
    out = []
    try:
        def drive(count: int, j: int) -> list:
            done, inflight, i = [], [], 0
            while i < count or inflight:
                while i < count and len(inflight) < j:
                    inflight.append((time.monotonic(), eng.submit("k", witnesses=[w] * a.partitions)))
                    i += 1
                inflight[0][1].done.wait(600)
                now = time.monotonic()
                for t0, job in [x for x in inflight if x[1].done.is_set()]:
                    # its own end (Job.finished), not when the head of the line was seen done: at j > 1 a job
                    # that finished before the head otherwise counts the head's wait too
                    done.append(((job.finished or now) - t0, job))
                inflight = [x for x in inflight if not x[1].done.is_set()]
            return done

        drive(a.warm, max(a.j))  # key upload, tables, modules, domains, pools
        for j in a.j:
            st0, t0 = asdict(eng.status()), time.monotonic()
            done = drive(a.count if j > 1 else a.count_j1, j)
            wall = time.monotonic() - t0
            st1 = asdict(eng.status())
            bad = [job.error for _, job in done if job.state != "COMPLETED"]
            out.append(summary("engine", j, wall, [lat for lat, _ in done], [job.partitions[0].timings for _, job in done],
                               st0["devices"], st1["devices"], bad, partitions=a.partitions))
            log(json.dumps(out[-1]))
    finally:
        eng.stop(10)
        eng.join_workers(20)
    return out


def summary(kind: str, j: int, wall: float, lat: list, timings: list, d0: list, d1: list, failed: list,
            transport: str = "", partitions: int = 1) -> dict:
    n = len(lat)
    k0, k1 = kernel_busy(d0), kernel_busy(d1)
    b0 = {d["name"]: d["busy_s"] for d in d0}
    phases = {}
    for t in timings:
        for k, v in t.items():
            phases.setdefault(k, []).append(v)
    return {
        "kind": kind, "j": j, "proofs": n, "failed": failed, "wall_s": round(wall, 4),
        "s_per_proof": round(wall / (n * partitions), 5) if n else None, "partitions_per_job": partitions,
        "latency_ms": {"p50": round(statistics.median(lat) * 1e3, 1), "p95": round(sorted(lat)[int(0.95 * (n - 1))] * 1e3, 1)}
        if n else {},
        "lock_busy": {d["name"]: round((d["busy_s"] - b0[d["name"]]) / wall, 4) for d in d1},
        "kernel_busy": {k: round((v - (k0.get(k) or 0)) / wall, 4) for k, v in k1.items() if v is not None},
        "phase_median_ms": {k: round(statistics.median(v), 2) for k, v in phases.items()},
        "transport": transport,
    }


LANES = ["[scheduler.lanes.urgent]", "priority = 10", "share = {share}", "[scheduler.lanes.bulk]", "priority = 0"]


def gc_pauses(addr: str) -> dict:
    """The daemon's garbage-collection pauses so far, by generation: count, seconds, and how many took over 10 ms."""
    with Client(addr, timeout=30) as c:
        m = c.metrics()["values"]
    out = {}
    for g in "012":
        count = m.get(f'snarkd_gc_pause_seconds_count{{generation="{g}"}}', 0.0)
        out[g] = {"count": count, "seconds": m.get(f'snarkd_gc_pause_seconds_sum{{generation="{g}"}}', 0.0),
                  "over_10ms": count - m.get(f'snarkd_gc_pause_seconds_bucket{{generation="{g}",le="0.01"}}', 0.0)}
    return out


def gc_delta(before: dict, after: dict) -> dict:
    return {g: {k: round(after[g][k] - before[g][k], 4) for k in after[g]} for g in after}


def lane_runs(a, addr: str, wtns: Path, vk: dict) -> list[dict]:
    """Urgent jobs alone (j = 1), then per j > 1: bulk alone, bulk with urgent jobs every a.urgent_every s."""
    def lane_stats(run: dict, lane: str) -> dict:
        """`snarkd bench`'s per-lane summary (report.lane_summary) in ms, with the lane's rate and phase medians."""
        summary = lane_summary(run["jobs"]).get(lane, {"jobs": 0, "completed": 0, "deadline_missed": 0, "latency_s": {}})
        ok = [jb for jb in run["jobs"] if jb.get("lane", "default") == lane and jb["state"] == "COMPLETED"]
        wall = run["t_end"] - run["t_start"]
        phases: dict = {}
        for jb in ok:
            for k, v in {**jb["partitions"][0]["timings"], "admission": jb["timings"].get("admission", 0.0)}.items():
                phases.setdefault(k, []).append(v)
        slowest = sorted(ok, key=lambda jb: jb["end"] - jb["start"])[-5:]  # where a tail's time went
        return {"jobs": summary["jobs"], "completed": summary["completed"],
                "proofs_per_s": round(len(ok) / wall, 2) if wall else None,
                "phase_median_ms": {k: round(statistics.median(v), 2) for k, v in sorted(phases.items())},
                "slowest": [{"latency_ms": round((jb["end"] - jb["start"]) * 1e3, 1),
                             "sent_s": round(jb["start"] - min(j["start"] for j in ok), 3),  # into the run
                             "admission_ms": round(jb["timings"].get("admission", 0.0), 2),
                             "phase_ms": {k: round(v, 2) for k, v in sorted(jb["partitions"][0]["timings"].items())}}
                            for jb in slowest],
                "latency_ms": {q: round(v * 1e3, 1) for q, v in summary["latency_s"].items()},
                "deadline_missed": summary["deadline_missed"]}

    out = []
    idle = run_bench(addr, "k", witness=str(wtns), count=a.count_j1, inflight=1, progress=False, vk=vk, lane="urgent")
    base = lane_stats(idle, "urgent")
    out.append({"kind": "lanes", "run": "urgent alone", "j": 1, "urgent": base, "verified_by_client": idle.get("verified")})
    log(json.dumps(out[-1]))
    for j, client in [(j, c) for j in a.j if j > 1 for c in a.urgent_client]:
        alone = run_bench(addr, "k", witness=str(wtns), count=a.count, inflight=j, progress=False, vk=vk, lane="bulk")
        gc0 = gc_pauses(addr)
        mixed = run_bench(addr, "k", witness=str(wtns), count=a.count, inflight=j, progress=False, vk=vk, lane="bulk",
                          urgent_lane="urgent", urgent_every=a.urgent_every, urgent_process=client == "process")
        b0, b1, u = lane_stats(alone, "bulk"), lane_stats(mixed, "bulk"), lane_stats(mixed, "urgent")
        idle50 = base["latency_ms"]["p50"]
        out.append({"kind": "lanes", "run": f"bulk j={j} + urgent every {a.urgent_every} s", "j": j,
                    "urgent_client": client, "bulk_alone": b0, "bulk_with_urgent": b1, "urgent": u,
                    "urgent_p50_over_idle_p50": round(u["latency_ms"]["p50"] / idle50, 3) if u["completed"] else None,
                    "urgent_p99_over_idle_p99": round(u["latency_ms"]["p99"] / base["latency_ms"]["p99"], 3)
                    if u["completed"] else None,
                    "urgent_p99_over_idle_p50": round(u["latency_ms"]["p99"] / idle50, 3) if u["completed"] else None,
                    "bulk_throughput_ratio": round(b1["proofs_per_s"] / b0["proofs_per_s"], 3),
                    # every proof the device made beside the urgent lane (bulk + urgent) against bulk alone
                    "all_proofs_throughput_ratio": round((b1["proofs_per_s"] + u["proofs_per_s"]) / b0["proofs_per_s"], 3),
                    "urgent_dropped": mixed["summary"].get("urgent_dropped", 0),
                    "gc_pauses_mixed": gc_delta(gc0, gc_pauses(addr)),  # daemon/gcpause.py: every thread stopped
                    "verified_by_client": [alone.get("verified"), mixed.get("verified")],
                    "failed": [jb["error"] for r in (alone, mixed) for jb in r["jobs"] if jb["state"] != "COMPLETED"]})
        log(json.dumps(out[-1]))
    return out


def run_daemon(a, zkey: Path, wtns: Path, work: Path, out_dir: Path) -> list[dict]:
    e = engine_settings(a)
    port = free_port()
    cfg = work / "snarkd.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "127.0.0.1:{port}"', f'pid_file = "{work}/snarkd.pid"', f'log_file = "{work}/snarkd.log"',
        # the journal keeps every unfinished job's witnesses: j jobs of 10 partitions of a 2^24 key are 5 GiB each
        f"spool_max = {2 * wtns.stat().st_size * a.partitions * max(max(a.j), a.warm) + (1 << 30)}",
        *a.daemon_setting,
        "[transport]", f'witness_spool = "{work}/spool"',
        "[synthesis]", f"workers = {e['synthesis_workers']}", f"threads = {e['threads']}",
        "[gpus]", f"devices = {list(e['devices'])}", f"workers_per_device = {e['workers_per_device']}",
        f'memory_budget = "{e["gpu_memory_budget"]}"',
        "[memory]", f'budget = "{e["memory_budget"]}"',
        "[pipeline]", f"finalize_workers = {e['finalize_workers']}",
        *([line.format(share=a.urgent_share) for line in LANES] if a.urgent_every else []),
        "[keys.preload]", f'k = "{zkey}"']) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    snarkd = [sys.executable, "-m", "snarkd"]
    r = subprocess.run([*snarkd, "start", "--config", str(cfg)], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise SystemExit(f"snarkd start failed: {r.stdout}{r.stderr}")
    log(r.stdout.strip().splitlines()[0])
    addr = f"127.0.0.1:{port}"
    vk = json.loads((out_dir / "vk.json").read_text())
    out = []
    try:
        run_bench(addr, "k", witness=str(wtns), count=a.warm, inflight=max(a.j), progress=False, partitions=a.partitions)
        if a.urgent_every:
            return lane_runs(a, addr, wtns, vk)
        for j, transport in [(j, t) for j in a.j for t in (a.transports if j == 1 else a.transports[:1])]:
            with tempfile.TemporaryDirectory() as proofs:
                run = run_bench(addr, "k", witness=str(wtns), count=a.count if j > 1 else a.count_j1, inflight=j,
                                progress=False, vk=vk, proofs_dir=proofs, transport=transport, partitions=a.partitions)
                if j == a.j[0]:
                    for f in ("proof", "public"):
                        (out_dir / f"sample-{f}.json").write_text(Path(proofs, f"{f}-0-0.json").read_text())
            ok = [jb for jb in run["jobs"] if jb["state"] == "COMPLETED"]
            s = summary("daemon", j, run["t_end"] - run["t_start"], [jb["end"] - jb["start"] for jb in ok],
                        [{**jb["partitions"][0]["timings"], "admission": jb["timings"].get("admission", 0.0)}
                         for jb in ok], run["daemon_before"]["engine"]["devices"],
                        run["daemon_after"]["engine"]["devices"],
                        [jb["error"] for jb in run["jobs"] if jb["state"] != "COMPLETED"], run.get("transport", ""),
                        a.partitions)
            s["verified_by_client"] = run.get("verified")
            # what the client waited for beyond the daemon's admission and the engine's job: gRPC both ways, the
            # reply's assembly, the client's own work
            outside = [(jb["end"] - jb["start"]) * 1e3 - jb["timings"].get("admission", 0.0) - jb["timings"]["total"]
                       for jb in ok]
            s["outside_ms_p50"] = round(statistics.median(outside), 2) if outside else None
            s["daemon_cpu_cores"] = run["summary"].get("daemon_cpu_cores")
            s["in_flight_max"] = run["summary"]["in_flight_max"]  # the client's most jobs at once: j, never more
            out.append(s)
            log(json.dumps(s))
    finally:
        r = subprocess.run([*snarkd, "stop", "--config", str(cfg)], env=env, capture_output=True, text=True, timeout=120)
        log(r.stdout.strip() or r.stderr.strip())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--key-dir", required=True)
    ap.add_argument("--devices", default="0")
    ap.add_argument("--gpu-budget", default="auto", help="[gpus] memory_budget (12GiB: a 2^24 key streams its bases)")
    ap.add_argument("--partitions", type=int, default=1, help="partitions per job")
    ap.add_argument("--j", default="1,4,16,32")
    ap.add_argument("--count", type=int, default=96, help="proofs per run (j > 1)")
    ap.add_argument("--count-j1", type=int, default=24, help="proofs of the j = 1 run")
    ap.add_argument("--warm", type=int, default=16)
    ap.add_argument("--synthesis", type=int, default=16)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--wpd", type=int, default=2)
    ap.add_argument("--fin", type=int, default=4)
    ap.add_argument("--transports", default="auto",
                    help="witness transports of the daemon's j = 1 runs, comma-separated (the first one for j > 1)")
    ap.add_argument("--only", choices=("both", "engine", "daemon"), default="both")
    ap.add_argument("--daemon-setting", action="append", default=[], metavar="LINE",
                    help='a line added to the daemon\'s [daemon] table, e.g. \'switch_interval = "5ms"\' (A/B of a setting)')
    ap.add_argument("--engine-setting", action="append", default=[], type=engine_setting, metavar="FIELD=VALUE",
                    help="an EngineConfig field for the in-process engine, VALUE in JSON, e.g. preempt=false or "
                    "'lanes={\"urgent\": {\"priority\": 10}}' (the in-process engine only: the daemon runs as configured)")
    ap.add_argument("--urgent-every", type=float, default=0.0, metavar="S",
                    help="lanes: urgent jobs every S seconds beside bulk ones (daemon only; see above)")
    ap.add_argument("--urgent-share", type=float, default=0.1, help="the urgent lane's share of slots and memory")
    ap.add_argument("--urgent-client", default="thread",
                    help="where the urgent jobs come from, comma-separated for one mixed run each: thread (a thread "
                    "of the bulk jobs' client process) or process (a client process of their own)")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    a = ap.parse_args()
    a.engine_setting = dict(a.engine_setting)
    a.devices = [int(x) for x in a.devices.split(",") if x.strip()]
    a.j = [int(x) for x in a.j.split(",")]
    a.transports = [x.strip() for x in a.transports.split(",") if x.strip()]
    a.urgent_client = [x.strip() for x in a.urgent_client.split(",") if x.strip()]
    if not a.urgent_client or set(a.urgent_client) - {"thread", "process"}:
        ap.error("--urgent-client: thread, process, or both comma-separated")
    kd, out_dir = Path(a.key_dir), Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    zkey, wtns = kd / "circuit.zkey", kd / "witness.wtns"
    z = read_zkey(zkey)
    (out_dir / "vk.json").write_text(json.dumps(vk_json(z, alphabeta=False)))
    res = {"benchmark": "GPU proofs through the daemon (gRPC) vs the in-process engine (bench/daemon_gpu.py)",
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": os.cpu_count(),
           "key": {"path": str(zkey), "domain_size": z.domain_size, "n_vars": z.n_vars, "curve": z.curve.name},
           "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in engine_settings(a).items()}, "runs": []}
    z.close()
    if a.urgent_every:
        a.only = "daemon"
        res["benchmark"] = "urgent and bulk lanes through the daemon (bench/daemon_gpu.py --urgent-every)"
    if a.only in ("both", "engine"):
        res["runs"] += run_in_process(a, zkey, wtns)
    if a.only in ("both", "daemon"):
        with tempfile.TemporaryDirectory() as work:
            res["runs"] += run_daemon(a, zkey, wtns, Path(work), out_dir)
    (out_dir / ("daemon-lanes.json" if a.urgent_every else "daemon-gpu.json")).write_text(json.dumps(res, indent=1))
    if a.urgent_every:
        return 0 if all(not r.get("failed") for r in res["runs"]) else 1
    print(f"{'kind':7} {'j':>3} {'s/proof':>8} {'p50 ms':>7} {'p95 ms':>7}  lock-busy  kernel-busy  transport")
    for r in res["runs"]:
        print(f"{r['kind']:7} {r['j']:3d} {r['s_per_proof'] or 0:8.4f} {r['latency_ms'].get('p50', 0):7.1f} "
              f"{r['latency_ms'].get('p95', 0):7.1f}  {r['lock_busy']}  {r['kernel_busy']}  {r['transport']}")
    return 0 if all(not r["failed"] for r in res["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
