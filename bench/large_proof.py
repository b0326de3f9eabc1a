#!/usr/bin/env python3
"""One large proof in the engine on one GPU, key resident: time per proof, device memory, largest circuit.

    python bench/large_proof.py --key-dir /tmp/keys/chain24-bn128 --out DIR [--n1 3] [--n2 4] [--threads 16]
                                [--define MACRO]

The key directory is make_chain_keys.py's (circuit.zkey, witness.wtns: k = 3, x = 2). The
in-process engine (devices [0], synthesis j = 1, one device worker, g2 on the device,
self-verification on, [gpus] msm_tables = auto: tables set by set while they fit) proves:
a warm-up proof (key upload, window tables, module, NTT domain), then n1 proofs one at a
time (latency) and n2 proofs two in flight (synthesis of the next overlaps the device stage
of the current: s/proof at j = 1). Device memory is sampled every 20 ms (cudaMemGetInfo) for
the peak. Writes DIR/large-proof.json (timings, memory, the largest-circuit estimate),
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


class MemSampler:
    """Device memory in use (total - free), every 20 ms, on its own thread."""

    def __init__(self, cupy):
        self.cupy, self.peak, self._stop = cupy, 0, threading.Event()

    def _run(self):
        if self.cupy is None:
            return
        self.cupy.cuda.Device(0).use()
        while not self._stop.is_set():
            free, total = self.cupy.cuda.runtime.memGetInfo()
            self.peak = max(self.peak, total - free)
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
    ap.add_argument("--cpu", action="store_true", help="a dry run of this script on the CPU backend (no GPU)")
    a = ap.parse_args()
    from multi_gpu import build_check, write_vk

    from snarkd.config import default
    from snarkd.engine.engine import Engine, EngineConfig
    from snarkd.formats.wtns import read_wtns
    from snarkd.gpu import device as gdevice

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    kd = Path(a.key_dir)
    zkey = kd / "circuit.zkey"
    res: dict = {"benchmark": "one large proof in the engine (bench/large_proof.py)", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                 "build": build_check(), "variant": {"defines": list(a.define)},
                 "zkey_bytes": zkey.stat().st_size}

    def save():
        (out / "large-proof.json").write_text(json.dumps(res, indent=1))

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
                       gpu_memory_budget=a.gpu_budget,
                       cubin_dir=default("gpus.cubin_dir"), queue_depth=2)
    if a.define and not a.cpu:  # the device's kernel variant, set before the engine's backend takes the device
        gdevice.get(0, cubin_dir=cfg.cubin_dir, defines=tuple(a.define))
    eng = Engine(cfg)
    t0 = time.monotonic()
    key = eng.keys.load("k", str(zkey)).key
    res["key_load_s"] = round(time.monotonic() - t0, 2)
    eng.start()
    proofs = []

    def run(count: int, inflight: int) -> tuple[float, list]:
        jobs, live, lat, i = [], [], [], 0
        t_start = time.monotonic()
        while i < count or live:
            while i < count and len(live) < inflight:
                live.append((eng.submit("k", witnesses=[wt]), time.monotonic()))
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
            p = job.partitions[0]
            proofs.append({"job": job.id, "device": "cuda:0", "proof": job.result.proof, "public": job.result.public})
            rows.append({"job": job.id, "timings_ms": {k: round(v, 1) for k, v in p.timings.items()}})
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
            log(f"latency: {a.n1} proofs, one at a time")
            wall, rows, lat = run(a.n1, 1)
            res["latency"] = {"proofs": a.n1, "wall_s": round(wall, 3), "s_per_proof": round(wall / max(a.n1, 1), 4),
                              "latencies_s": [round(x, 3) for x in lat], "rows": rows}
            save()
            log(f"latency: {res['latency']['s_per_proof']} s/proof; {rows[-1] if rows else ''}")
            log(f"throughput: {a.n2} proofs, {a.inflight} in flight, {a.wpd} device worker(s)")
            wall, rows, lat = run(a.n2, a.inflight)
            res["pipelined"] = {"proofs": a.n2, "inflight": a.inflight, "device_workers": a.wpd, "wall_s": round(wall, 3), "s_per_proof": round(wall / max(a.n2, 1), 4),
                                "latencies_s": [round(x, 3) for x in lat], "rows": rows}
            log(f"pipelined: {res['pipelined']['s_per_proof']} s/proof")
        st = eng.status()
        res["self_verify_failed"] = st.jobs.self_verify_failed
        res["device_peak_used_gib"] = round(mem.peak / GiB, 2)
        res["device_used_before_gib"] = round((total - free0) / GiB, 2)
        res["host_peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20), 2)
        if dev is not None:
            res["work_bytes_per_proof_gib"] = round(eng.devices[0].work_bytes(key) / GiB, 2)
            res["largest_circuit"] = largest(res, dev.memory.budget, key)
    finally:
        eng.stop(30)
        eng.join_workers(30)
        (out / "proofs-large.json").write_text(json.dumps(proofs))
        save()
    log(json.dumps({k: res.get(k) for k in ("latency", "pipelined")}, default=str)[:3000])
    log(json.dumps({k: res.get(k) for k in ("resident", "device_peak_used_gib", "work_bytes_per_proof_gib", "largest_circuit",
                                            "self_verify_failed", "host_peak_rss_gib")}))
    return 0


def largest(res: dict, budget: int, key) -> dict:
    """The largest 2^k domain one device proves, scaling the measured 2^d key's resident
    bytes (bases + CSR, without tables) and one proof's work bytes linearly in 2^k."""
    if not res.get("resident"):
        return {}
    from snarkd.gpu.msm import WindowTable

    d = key.zkey.domain_power
    r0 = res["resident"][0]
    tables = r0["table_gib"] * GiB
    key_bytes = r0["key_and_tables_gib"] * GiB - tables
    work = res.get("work_bytes_per_proof_gib", 0) * GiB
    out = {"budget_gib": round(budget / GiB, 2), "measured_domain_power": d}
    from snarkd.gpu.resident import csr_bytes

    zk = key.zkey
    csr = csr_bytes(zk)
    for k in range(d, 29):
        f = 2 ** (k - d)
        if (key_bytes + work) * f <= budget:
            out["plain_bases_max_power"] = k
        # bases streamed from the host: the CSR and the proof's vectors scale, the MSM scratch is one chunk's
        streamed_work = (32 * zk.n_vars + 4 * 32 * zk.domain_size) * f + (1 << 30)
        if csr * f + streamed_work <= budget:
            out["streamed_bases_max_power"] = k
        all_tables = sum(WindowTable.bytes_for(key.curve.native, g2, 1 << k) for g2 in (False,) * 4 + (True,))
        if key_bytes * f + work * f + all_tables <= budget:
            out["all_tables_max_power"] = k
    return out


if __name__ == "__main__":
    sys.exit(main())
