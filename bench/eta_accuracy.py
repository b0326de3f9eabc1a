"""How close the completion model's estimate (snarkd.engine.eta) comes to when jobs actually end, in process.

An Engine on the CPU with the example `chain` key (examples/chain-bn128) proves a few jobs to learn the key's
latency and interval, then takes --jobs jobs of 1 to 3 partitions at once, each with a far deadline so that its
estimate is kept (Job.eta_s), and waits for all. Reported per synthesis-worker count: actual / estimated time to
the end (submission to the job's end) over the jobs, median, min and max, and the model's state at the end; results
in bench/results/eta-accuracy.json. The machine is shared with other work: the times may be noisy (load averages
are recorded).

    python bench/eta_accuracy.py [--jobs 24] [--synthesis-workers 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from dataclasses import asdict
from pathlib import Path

from snarkd.engine import Engine, EngineConfig

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "chain-bn128"


def run(synthesis_workers: int, n_jobs: int) -> dict:
    wtns = (EXAMPLE / "chain.wtns").read_bytes()
    eng = Engine(EngineConfig(synthesis_workers=synthesis_workers, threads=1, workers_per_device=1,
                              memory_budget="512MiB"))
    eng.keys.load("k", str(EXAMPLE / "chain.zkey"))
    eng.start()
    try:
        for _ in range(3):  # the key's first measurements
            eng.await_(eng.submit("k", wtns).id, 120)
        jobs = [eng.submit("k", witnesses=[wtns] * (1 + i % 3), deadline_s=3600) for i in range(n_jobs)]
        for j in jobs:
            eng.await_(j.id, 600)
        ratios = [(j.finished - j.submitted) / j.eta_s for j in jobs]
        return {"synthesis_workers": synthesis_workers, "jobs": n_jobs,
                "partitions": sum(len(j.partitions) for j in jobs),
                "actual_over_estimate": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
                "last_job_s": {"estimate": jobs[-1].eta_s, "actual": jobs[-1].finished - jobs[-1].submitted},
                "model": asdict(eng.status().eta)}
    finally:
        eng.stop(0)
        eng.join_workers(10)
        eng.keys.close_all()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--synthesis-workers", default="1,2")
    args = ap.parse_args()
    out = {"cpus": os.cpu_count(), "load_before": os.getloadavg(), "runs": []}
    for w in (int(x) for x in args.synthesis_workers.split(",")):
        r = run(w, args.jobs)
        a = r["actual_over_estimate"]
        print(f"synthesis_workers={w}: actual/estimate median {a['median']:.2f} (min {a['min']:.2f}, max "
              f"{a['max']:.2f}) over {r['jobs']} jobs, {r['partitions']} partitions")
        out["runs"].append(r)
    out["load_after"] = os.getloadavg()
    (HERE / "results" / "eta-accuracy.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
