#!/usr/bin/env python3
"""One large proof in the engine on one GPU, key resident: time per proof, device memory, largest circuit.

    python bench/large_proof.py --key-dir /tmp/keys/chain24-bn128 --out DIR [--n1 3] [--n2 4] [--threads 16]
                                [--define MACRO] [--gpu-budget 12GiB] [--partitions 10] [--tag NAME]

The key directory is make_chain_keys.py's (circuit.zkey, witness.wtns: k = 3, x = 2). The
in-process engine (devices [0], synthesis j = 1, one device worker, g2 on the device,
self-verification on, [gpus] msm_tables = auto: tables set by set while they fit) proves:
a warm-up proof (key upload, window tables, module, NTT domain), then n1 proofs one at a
time (latency) and n2 proofs two in flight (synthesis of the next overlaps the device stage
of the current: s/proof at j = 1), then (--partitions N) one job of N partitions (a streamed key's
device stage takes them as batches: bytes of bases sent per proof are counted). Device memory is
sampled every 20 ms (cudaMemGetInfo) for the peak, host memory (RssAnon, RssFile) likewise; kernel
busy and copy-engine busy (streamed bases) are the device's CUDA-event clocks over each run's wall
time. Writes DIR/large-proof[-TAG].json (timings, memory, the largest-circuit estimate),
DIR/proofs-large.json (every proof + public) and DIR/vk.json; verify them elsewhere with
`python bench/multi_gpu.py verify DIR` (snarkjs).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))

GiB = 1 << 30


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def host_rss() -> dict:
    """This process's resident memory by kind (kB in /proc/self/status): anonymous, file-backed, shared."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("RssAnon", "RssFile", "RssShmem")):
            k, v = line.split(":")
            out[k] = int(v.split()[0]) * 1024
    return out


class MemSampler:
    """Device memory in use (total - free) and host RSS by kind, every 20 ms, on its own thread."""

    def __init__(self, cupy):
        self.cupy, self.peak, self._stop = cupy, 0, threading.Event()
        self.host_peak = {}

    def _run(self):
        if self.cupy is not None:
            self.cupy.cuda.Device(0).use()
        while not self._stop.is_set():
            if self.cupy is not None:
                free, total = self.cupy.cuda.runtime.memGetInfo()
                self.peak = max(self.peak, total - free)
            for k, v in host_rss().items():
                self.host_peak[k] = max(self.host_peak.get(k, 0), v)
            time.sleep(0.02)

    def __enter__(self):
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()
        return self

    def __exit__(self, *a):
        self._stop.set()
        self.t.join(2)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--key-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n1", type=int, default=3)
    ap.add_argument("--n2", type=int, default=4)
    ap.add_argument("--wpd", type=int, default=1, help="device workers (the daemon's default is 2: uploads overlap kernels)")
    ap.add_argument("--inflight", type=int, default=2, help="proofs in flight for the throughput run")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--tables", default="auto")
    ap.add_argument("--gpu-budget", default="auto", help="[gpus] memory_budget (e.g. 12GiB: a key whose bases do not "
                    "fit beside a proof is streamed from the host)")
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--partitions", type=int, default=0, help="then one job of this many partitions")
    ap.add_argument("--stream", default="auto", help="[gpus] stream_bases (auto: when the bases do not fit)")
    ap.add_argument("--stream-csr", default="", help="a streamed key's A·w, B·w only this way: device, streamed, host")
    ap.add_argument("--tag", default="", help="results file large-proof-TAG.json")
    ap.add_argument("--cpu", action="store_true", help="a dry run of this script on the CPU backend (no GPU)")
    a = ap.parse_args()
    from multi_gpu import build_check, write_vk

    from snarkd.config import default
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.formats.wtns import read_wtns
    from snarkd.gpu import device as gdevice
    from snarkd.gpu import hostbases

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    kd = Path(a.key_dir)
    zkey = kd / "circuit.zkey"
    res: dict = {"benchmark": "one large proof in the engine (bench/large_proof.py)", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                 "build": build_check(), "variant": {"defines": list(a.define)}, "args": vars(a),
                 "zkey_bytes": zkey.stat().st_size}

    def save():
        (out / f"large-proof{'-' + a.tag if a.tag else ''}.json").write_text(json.dumps(res, indent=1))

    write_vk(zkey, out / "vk.json")
    wt = read_wtns(kd / "witness.wtns")
    if a.cpu:
        cupy, free0, total = None, 0, 0
    else:
        import cupy

        free0, total = cupy.cuda.runtime.memGetInfo()
    res["device_total_gib"] = round(total / GiB, 2)
    cfg = EngineConfig(synthesis_workers=1, threads=a.threads, devices=() if a.cpu else (0,), workers_per_device=a.wpd, finalize_workers=2,
                       memory_budget=100 * GiB, g2_on_device=True, self_verify=True, msm_tables=a.tables,
                       gpu_memory_budget=a.gpu_budget, stream_bases=a.stream,
                       cubin_dir=default("gpus.cubin_dir"), queue_depth=2)
    if a.define and not a.cpu:  # the device's kernel variant, set before the engine's backend takes the device
        gdevice.get(0, cubin_dir=cfg.cubin_dir, defines=tuple(a.define))
    eng = Engine(cfg)
    if a.stream_csr and not a.cpu:
        eng.devices[0].stream_csr_modes = (a.stream_csr,)
    t0 = time.monotonic()
    key = eng.keys.load("k", str(zkey)).key
    res["key_load_s"] = round(time.monotonic() - t0, 2)
    eng.start()
    proofs = []

    def busy():
        """(kernel-busy s, copy-engine-busy s, bases bytes sent, streamed proofs) of the device so far."""
        if a.cpu:
            return 0.0, 0.0, 0, 0
        d = gdevice.get(0)
        return d.clock.seconds(), d.copy_clock.seconds(), d.streamed["bytes"], d.streamed["proofs"]

    def busy_since(b0, wall):
        b1 = busy()
        return {"kernel_busy": round((b1[0] - b0[0]) / wall, 3) if wall else 0,
                "pcie_busy": round((b1[1] - b0[1]) / wall, 3) if wall else 0,
                "bases_bytes_per_proof": round((b1[2] - b0[2]) / max(1, b1[3] - b0[3])) if b1[3] > b0[3] else 0,
                "streamed_proofs": b1[3] - b0[3]}

    def run(count: int, inflight: int, parts: int = 1) -> tuple[float, list]:
        jobs, live, lat, i = [], [], [], 0
        t_start = time.monotonic()
        while i < count or live:
            while i < count and len(live) < inflight:
                live.append((eng.submit("k", witnesses=[wt] * parts), time.monotonic()))
                i += 1
            live[0][0].done.wait(900)
            done = [x for x in live if x[0].done.is_set()]
            for job, ts in done:
                lat.append(time.monotonic() - ts)
                jobs.append(job)
            live = [x for x in live if not x[0].done.is_set()]
        wall = time.monotonic() - t_start
        rows = []
        for job in jobs:
            if job.state != "COMPLETED":
                rows.append({"job": job.id, "state": job.state, "error": job.error})
                continue
            for p in job.partitions:
                r = p.result
                proofs.append({"job": job.id, "device": "cuda:0", "proof": r.proof, "public": r.public})
                rows.append({"job": job.id, "part": p.index, "timings_ms": {k: round(v, 1) for k, v in p.timings.items()}})
        return wall, rows, lat

    try:
        with MemSampler(cupy) as mem:
            log("warm-up proof (key upload, window tables, module, NTT domain)")
            wall, rows, _ = run(1, 1)
            res["warmup"] = {"wall_s": round(wall, 2), "rows": rows}
            save()
            dev = None if a.cpu else gdevice.get(0)
            rk = list(dev._keys.values()) if dev else []
            res["resident"] = [{"key_and_tables_gib": round(k.nbytes / GiB, 2), "tables": sorted(k.tables),
                                "table_gib": round(sum(t.nbytes for t in k.tables.values()) / GiB, 2),
                                "table_c": sorted({t.c for t in k.tables.values()}), "streamed": k.streamed} for k in rk]
            res["pool_used_gib_after_warmup"] = round(dev.memory.used / GiB, 2) if dev else 0
            log(f"resident: {res['resident']}")
            if not a.cpu:
                bk = eng.devices[0]
                res["stream_plan"] = bk.stream_plan(key).describe() if bk.bases_streamed(key) else "bases resident"
                res["host_bases"] = [{"mode": h.mode, "gib": round(h.nbytes / GiB, 2), "seconds": round(h.seconds, 2),
                                      "why": h.why} for h in hostbases.held()]
                log(f"stream plan: {res['stream_plan']}; host bases: {res['host_bases']}")
            log(f"latency: {a.n1} proofs, one at a time")
            b0 = busy()
            wall, rows, lat = run(a.n1, 1)
            res["latency"] = {"proofs": a.n1, "wall_s": round(wall, 3), "s_per_proof": round(wall / max(a.n1, 1), 4),
                              "latencies_s": [round(x, 3) for x in lat], **busy_since(b0, wall), "rows": rows}
            save()
            log(f"latency: {res['latency']['s_per_proof']} s/proof; {rows[-1] if rows else ''}")
            log(f"throughput: {a.n2} proofs, {a.inflight} in flight, {a.wpd} device worker(s)")
            b0 = busy()
            wall, rows, lat = run(a.n2, a.inflight)
            res["pipelined"] = {"proofs": a.n2, "inflight": a.inflight, "device_workers": a.wpd, "wall_s": round(wall, 3), "s_per_proof": round(wall / max(a.n2, 1), 4),
                                "latencies_s": [round(x, 3) for x in lat], **busy_since(b0, wall), "rows": rows}
            log(f"pipelined: {res['pipelined']['s_per_proof']} s/proof {busy_since(b0, wall)}")
            save()
            if a.partitions:
                log(f"one job of {a.partitions} partitions")
                b0 = busy()
                wall, rows, lat = run(1, 1, a.partitions)
                res["partitioned"] = {"partitions": a.partitions, "wall_s": round(wall, 3),
                                      "s_per_partition": round(wall / a.partitions, 4), **busy_since(b0, wall),
                                      "rows": rows}
                log(f"partitioned: {res['partitioned']['s_per_partition']} s/partition {busy_since(b0, wall)}")
        st = eng.status()
        res["self_verify_failed"] = st.jobs.self_verify_failed
        res["device_peak_used_gib"] = round(mem.peak / GiB, 2)
        res["device_used_before_gib"] = round((total - free0) / GiB, 2)
        res["host_peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20), 2)
        res["host_peak_gib_by_kind"] = {k: round(v / GiB, 2) for k, v in mem.host_peak.items()}
        if dev is not None:
            from snarkd.gpu.stream import largest_power

            res["work_bytes_per_proof_gib"] = round(eng.devices[0].work_bytes(key) / GiB, 2)
            res["largest_circuit"] = {f"{b}GiB": largest_power(key.curve.native, b * GiB) for b in (12, 16, 24)}
            res["largest_circuit"]["this_budget"] = largest_power(key.curve.native, dev.memory.budget)
    finally:
        eng.stop(30)
        eng.join_workers(30)
        (out / f"proofs-large{'-' + a.tag if a.tag else ''}.json").write_text(json.dumps(proofs))
        save()
    log(json.dumps({k: {x: y for x, y in (res.get(k) or {}).items() if x != "rows"}
                    for k in ("latency", "pipelined", "partitioned")}, default=str)[:3000])
    log(json.dumps({k: res.get(k) for k in ("resident", "device_peak_used_gib", "work_bytes_per_proof_gib", "largest_circuit",
                                            "self_verify_failed", "host_peak_rss_gib", "host_peak_gib_by_kind")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
