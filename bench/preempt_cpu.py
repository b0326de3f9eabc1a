#!/usr/bin/env python3
"""Urgent latency under bulk load with preemption at yield points ([scheduler] preempt) on and off, side by side, in
process, on the CPU backend.

One Engine per mode (the same settings but [scheduler] preempt), lanes "urgent" (priority 10, share 0.5) and
"bulk": bulk jobs of a chain key (bench/make_chain_keys.py, --bulk-power, default 2^16: a CPU device stage of ~0.6 s
on one thread, five yield points) are kept --bulk-jobs in flight, and an urgent job of the example chain key
(examples/chain-bn128, a few ms) is submitted every --every seconds and awaited. Modes run in turns (idle: no bulk
load, then on and off, --rounds times, --window seconds each), so a neighbour's load on a shared box falls on all
alike. Reported per mode: urgent latency (submit to result) p50 / p90 / p99 and max, the time its device stage
waited (device_queue + device_wait) p50 / p99, bulk partitions per second, preemptions. Every proof is verified by
the engine (self_verify). Results: bench/results/preempt-cpu.json (the machine and its load averages included).

    python bench/make_chain_keys.py --power 16 --curves bn128 --no-check
    python bench/preempt_cpu.py [--bulk-power 16] [--rounds 3] [--window 10] [--every 0.2] [--bulk-jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import threading
import time
from pathlib import Path

from snarkd.bench.report import percentile
from snarkd.config.lanes import Lane
from snarkd.engine import Engine, EngineConfig

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "chain-bn128"
LANES = {"urgent": Lane("urgent", priority=10, share=0.5), "bulk": Lane("bulk", priority=0)}


def make_engine(bulk_zkey: Path, preempt: bool) -> Engine:
    eng = Engine(EngineConfig(synthesis_workers=2, threads=1, workers_per_device=1, finalize_workers=2,
                              memory_budget="2GiB", lanes=LANES, preempt=preempt))
    eng.keys.load("bulk", str(bulk_zkey))
    eng.keys.load("urgent", str(EXAMPLE / "chain.zkey"))
    return eng.start()


def window(eng: Engine, bulk_w: bytes, urgent_w: bytes, seconds: float, every: float, bulk_jobs: int) -> dict:
    """One measuring window: bulk_jobs bulk jobs kept in flight (none when 0), an urgent job every `every` s."""
    stop = threading.Event()
    bulk_done = []

    def bulk_load() -> None:
        inflight = [eng.submit("bulk", bulk_w, lane="bulk") for _ in range(bulk_jobs)]
        while inflight:
            j = inflight.pop(0)
            j.done.wait(600)
            assert j.state == "COMPLETED", j.error
            bulk_done.append(j.finished)
            if not stop.is_set():
                inflight.append(eng.submit("bulk", bulk_w, lane="bulk"))

    loader = threading.Thread(target=bulk_load, daemon=True)
    if bulk_jobs:
        loader.start()
        time.sleep(1.0)  # the load is on
    latency, device_wait = [], []
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        j = eng.submit("urgent", urgent_w, lane="urgent")
        assert j.done.wait(120) and j.state == "COMPLETED", j.error
        latency.append(j.finished - j.submitted)
        p = j.partitions[0]
        device_wait.append((p.timings.get("device_queue", 0) + p.timings.get("device_wait", 0)) / 1000)
        time.sleep(every)
    end = time.monotonic()
    stop.set()
    if bulk_jobs:
        loader.join(600)
    bulk_in_window = sum(1 for f in bulk_done if start <= f <= end)
    return {"latency": latency, "device_wait": device_wait, "bulk_per_s": bulk_in_window / (end - start)}


def summary(samples: list[dict]) -> dict:
    lat = [x for s in samples for x in s["latency"]]
    dw = [x for s in samples for x in s["device_wait"]]
    ms = lambda v: round(v * 1000, 1)  # noqa: E731
    return {"urgent_samples": len(lat),
            "urgent_latency_ms": {"p50": ms(percentile(lat, 50)), "p90": ms(percentile(lat, 90)),
                                  "p99": ms(percentile(lat, 99)), "max": ms(max(lat))},
            "urgent_device_wait_ms": {"p50": ms(percentile(dw, 50)), "p99": ms(percentile(dw, 99))},
            "bulk_partitions_per_s": {"median": round(statistics.median(s["bulk_per_s"] for s in samples), 3),
                                      "per_window": [round(s["bulk_per_s"], 3) for s in samples]}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bulk-power", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--every", type=float, default=0.2)
    ap.add_argument("--bulk-jobs", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "preempt-cpu.json"))
    a = ap.parse_args()
    bulk_dir = HERE / "work" / f"chain{a.bulk_power}-bn128"
    if not (bulk_dir / "circuit.zkey").exists():
        raise SystemExit(f"{bulk_dir / 'circuit.zkey'}: make it first: python bench/make_chain_keys.py "
                         f"--power {a.bulk_power} --curves bn128 --no-check")
    bulk_w, urgent_w = (bulk_dir / "witness.wtns").read_bytes(), (EXAMPLE / "chain.wtns").read_bytes()
    engines = {"on": make_engine(bulk_dir / "circuit.zkey", True), "off": make_engine(bulk_dir / "circuit.zkey", False)}
    load = [os.getloadavg()]
    try:
        for eng in engines.values():  # warm: keys mapped, the model measured
            for key, w in (("bulk", bulk_w), ("urgent", urgent_w)):
                eng.await_(eng.submit(key, w, lane=key).id, 120)
        runs = {"idle": [], "on": [], "off": []}
        for r in range(a.rounds):
            runs["idle"].append(window(engines["on"], bulk_w, urgent_w, a.window / 2, a.every, 0))
            for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
                runs[mode].append(window(engines[mode], bulk_w, urgent_w, a.window, a.every, a.bulk_jobs))
                print(f"round {r} {mode}: urgent p50 {percentile(runs[mode][-1]['latency'], 50) * 1e3:.1f} ms, "
                      f"bulk {runs[mode][-1]['bulk_per_s']:.2f}/s", flush=True)
            load.append(os.getloadavg())
        out = {"bench": "preempt_cpu", "machine": {"cpus": os.cpu_count(), "cpu": platform.processor() or
                                                   platform.machine(), "loadavg": load},
               "settings": vars(a), "modes": {m: summary(s) for m, s in runs.items()},
               "preemptions": {m: sum(d.preemptions for d in e.status().devices) for m, e in engines.items()}}
    finally:
        for eng in engines.values():
            eng.stop(0)
            eng.join_workers(30)
            eng.keys.close_all()
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["modes"], indent=1), "\npreemptions", out["preemptions"])


if __name__ == "__main__":
    main()
