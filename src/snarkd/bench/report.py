"""The bench report: throughput, latency, per-phase medians, device busy fraction, daemon facts.

Every report names what it ran against: the daemon's version, pid, config path
and fingerprint, its engine config, devices and peak RSS.
"""

from __future__ import annotations

import statistics

from snarkd.prover.timing import PHASES


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (q in 0..100)."""
    if not values:
        return float("nan")
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def union_seconds(intervals: list[tuple[float, float]], lo: float | None = None, hi: float | None = None) -> float:
    """Length of the union of [start, end) intervals, clipped to [lo, hi]."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if lo is not None:
            s = max(s, lo)
        if hi is not None:
            e = min(e, hi)
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def device_of(worker: str) -> str:
    """"cpu/w1" -> "cpu", "cuda:0/w0" -> "cuda:0"."""
    return worker.split("/", 1)[0]


def busy_from_spans(jobs: list[dict], t0: float, t1: float) -> dict:
    """Per device: the fraction of [t0, t1] during which some worker held it (device spans)."""
    per: dict[str, list] = {}
    for j in jobs:
        for p in j.get("partitions", []):
            for s in p.get("spans", []):
                if s["stage"] == "device":
                    per.setdefault(device_of(s["worker"]), []).append((s["start"], s["end"]))
    wall = max(1e-9, t1 - t0)
    return {d: union_seconds(iv, t0, t1) / wall for d, iv in sorted(per.items())}


def most_in_flight(jobs: list[dict]) -> int:
    """The most jobs the client had in flight at once (its own start/end of each): at most the run's
    `inflight`, or its latencies are those of a deeper queue than it says."""
    edges = sorted([(j["start"], 1) for j in jobs] + [(j["end"], -1) for j in jobs])  # an end before a start at a tie
    most = cur = 0
    for _, step in edges:
        cur += step
        most = max(most, cur)
    return most


def lane_summary(jobs: list[dict]) -> dict:
    """Per lane: jobs, completed, latency percentiles of the completed (s), deadlines missed (refused or
    expired)."""
    out = {}
    for name in sorted({j.get("lane", "default") for j in jobs}):
        mine = [j for j in jobs if j.get("lane", "default") == name]
        lat = [j["end"] - j["start"] for j in mine if j["state"] == "COMPLETED"]
        out[name] = {"jobs": len(mine), "completed": len(lat),
                     "deadline_missed": sum(j["state"] == "DEADLINE" for j in mine),
                     "latency_s": {f"p{q}": percentile(lat, q) for q in (50, 95, 99)} | {"max": max(lat)}
                     if lat else {}}
    return out


def summarize(run: dict) -> dict:
    """Add the summary fields to a raw run (jobs with start/end/timings/partitions)."""
    jobs = run["jobs"]
    ok = [j for j in jobs if j["state"] == "COMPLETED"]
    wall = run["t_end"] - run["t_start"]
    lat = [j["end"] - j["start"] for j in ok]
    n_parts = sum(len(j.get("partitions", [])) for j in ok)
    phases: dict[str, list] = {}
    for j in ok:
        for p in j.get("partitions", []):
            for k, v in p.get("timings", {}).items():
                phases.setdefault(k, []).append(v)
    busy = busy_from_spans(ok, run["t_start"], run["t_end"])
    d0, d1 = run.get("daemon_before", {}), run.get("daemon_after", {})
    dbusy = {}
    for name, s in (d1.get("device_busy_s") or {}).items():
        dbusy[name] = (s - (d0.get("device_busy_s") or {}).get(name, 0.0)) / max(1e-9, wall)
    kbusy = {}
    k0 = {x["name"]: x.get("kernel_busy_s") for x in d0.get("engine", {}).get("devices", [])}
    for x in d1.get("engine", {}).get("devices", []):
        if x.get("kernel_busy_s") is not None and k0.get(x["name"]) is not None:
            kbusy[x["name"]] = (x["kernel_busy_s"] - k0[x["name"]]) / max(1e-9, wall)
    cpu0, cpu1 = d0.get("engine", {}).get("cpu_s"), d1.get("engine", {}).get("cpu_s")
    j0, j1 = d0.get("engine", {}).get("jobs", {}), d1.get("engine", {}).get("jobs", {})
    witnesses = {k: j1.get(f"witness_{k}", 0) - j0.get(f"witness_{k}", 0)
                 for k in ("native", "recorded", "control", "wasm", "failed")}
    run["summary"] = {
        "daemon_cpu_cores": (cpu1 - cpu0) / max(1e-9, wall) if cpu0 is not None and cpu1 is not None else None,
        "completed": len(ok),
        "failed": len(jobs) - len(ok),
        "verified": run.get("verified"),
        "wall_s": wall,
        "s_per_proof": wall / len(ok) if ok else None,
        "proofs_per_min": 60.0 * len(ok) / wall if wall > 0 else None,
        "partitions_per_min": 60.0 * n_parts / wall if wall > 0 else None,
        "latency_s": ({"avg": statistics.fmean(lat), "min": min(lat), "p50": percentile(lat, 50),
                       "p95": percentile(lat, 95), "max": max(lat)} if lat else {}),
        "phase_median_ms": {k: statistics.median(v) for k, v in phases.items()},
        "device_busy_fraction": busy,  # from the partitions' device spans (the timeline)
        "device_busy_fraction_daemon": dbusy,  # from the daemon's busy-seconds counters (a stage running)
        "device_kernel_busy_fraction": kbusy,  # the GPU's kernels themselves (CUDA events)
        "transport": run.get("transport", ""),
        # witnesses from inputs during the run, by how they were made (0s for a run from witnesses)
        "witnesses": witnesses,
        "daemon_peak_rss_bytes": d1.get("peak_rss_bytes"),
        "memory_budget_bytes": d1.get("memory_budget_bytes"),
        "memory_budget_peak_bytes": d1.get("memory_peak_bytes"),
        "key_bytes": sum(k.get("bytes", 0) for k in d1.get("keys", [])),
        "lanes": lane_summary(jobs),
        "deadline_missed": sum(j["state"] == "DEADLINE" for j in jobs),
        "urgent_dropped": run.get("urgent_dropped", 0),  # urgent arrivals not sent: every urgent slot was busy
        # the COUNT jobs' most at once, the urgent lane's jobs (numbered from COUNT) aside
        "in_flight_max": most_in_flight([j for j in jobs if j.get("i", 0) < run.get("count", len(jobs))]),
    }
    return run


def _mib(n) -> str:
    return "?" if n is None else f"{n / 2**20:.1f} MiB"


def format_report(run: dict) -> str:
    s, d = run["summary"], run.get("daemon_after", {})
    eng = d.get("engine", {}).get("config", {})
    lines = [
        f"snarkd bench: key {run['key']} ({run['source']}), c={run['count']} j={run['inflight']} "
        f"partitions={run['partitions']}",
        f"daemon: {run['addr']} version {d.get('version', '?')} pid {d.get('pid', '?')} "
        f"config {d.get('config_path', '?')} fingerprint {d.get('config_fingerprint', '?')}",
        f"engine: synthesis_workers={eng.get('synthesis_workers')} devices={','.join(d.get('devices', [])) or '?'} "
        f"workers_per_device={eng.get('workers_per_device')} finalize_workers={eng.get('finalize_workers')} "
        f"threads={eng.get('threads')} self_verify={eng.get('self_verify')} g2_on_device={eng.get('g2_on_device')}",
        "",
        f"proofs:      {s['completed']} completed, {s['failed']} failed"
        + (f", {s['verified']} verified by the client" if s.get("verified") is not None else ""),
        f"wall:        {s['wall_s']:.2f} s",
    ]
    if s["completed"]:
        lat = s["latency_s"]
        lines += [
            f"throughput:  {s['s_per_proof']:.3f} s/proof, {s['proofs_per_min']:.1f} proofs/min "
            f"({s['partitions_per_min']:.1f} partitions/min)",
            f"latency:     avg {lat['avg']:.3f}  min {lat['min']:.3f}  p50 {lat['p50']:.3f}  "
            f"p95 {lat['p95']:.3f}  max {lat['max']:.3f} s",
        ]
    for name, ln in (s.get("lanes") or {}).items():
        lat = ln["latency_s"]
        shown = (f"p50 {lat['p50']:.3f}  p95 {lat['p95']:.3f}  p99 {lat['p99']:.3f}  max {lat['max']:.3f} s"
                 if lat else "no job completed")
        lines.append(f"lane {name}: {ln['completed']}/{ln['jobs']} completed, {ln['deadline_missed']} deadline(s) "
                     f"missed; latency {shown}")
    if s.get("urgent_dropped"):
        lines.append(f"urgent arrivals dropped: {s['urgent_dropped']} (every urgent slot busy: the lane could not "
                     "keep up with --urgent-every)")
    busy = s["device_busy_fraction"]
    if busy:
        lines.append("device busy: " + ", ".join(f"{k} {v:.0%}" for k, v in busy.items())
                     + " of wall time (timeline); daemon counters: "
                     + ", ".join(f"{k} {v:.0%}" for k, v in s["device_busy_fraction_daemon"].items()))
    if s.get("device_kernel_busy_fraction"):
        lines.append("kernel busy: " + ", ".join(f"{k} {v:.0%}" for k, v in s["device_kernel_busy_fraction"].items())
                     + " of wall time (the GPU's kernels, CUDA events)")
    if s.get("transport"):
        lines.append(f"transport:   witnesses sent by {s['transport']}")
    w = s.get("witnesses") or {}
    if any(w.values()):
        lines.append(f"witnesses:   {w['native']} native, {w['recorded']} recorded natively (a guard missed), "
                     f"{w['wasm']} on the wasm engine, {w['failed']} native failed self-verification")
    if s.get("daemon_cpu_cores") is not None:
        lines.append(f"daemon CPU:  {s['daemon_cpu_cores']:.2f} cores on average over the run")
    lines.append(f"daemon RSS:  peak {_mib(s['daemon_peak_rss_bytes'])}; memory budget {_mib(s['memory_budget_bytes'])}"
                 f" (peak reserved {_mib(s['memory_budget_peak_bytes'])}); resident keys {_mib(s['key_bytes'])}")
    med = s["phase_median_ms"]
    if med:
        lines.append("phase medians per partition (ms):")
        keys = [k for k in PHASES if k in med] + sorted(k for k in med if k not in PHASES)
        row = []
        for k in keys:
            row.append(f"{k} {med[k]:.1f}")
            if len(row) == 6:
                lines.append("  " + "  ".join(row))
                row = []
        if row:
            lines.append("  " + "  ".join(row))
    errors = sorted({j["error"] for j in run["jobs"] if j["state"] != "COMPLETED"})
    for e in errors[:5]:
        lines.append(f"error: {e}")
    return "\n".join(lines)
