#!/usr/bin/env python3
"""Engine tuning sweep: synthesis workers x workers per device x in flight, on a fixed circuit.

The circuit is synthesis-heavy on purpose: `Hints(N)` computes each step's
inverse in the witness by Fermat exponentiation (254 squarings in circom's
wasm, like the square-root / inverse / decomposition hints of real circuits)
and checks it with one constraint, so inputs -> witness costs about as much as
the device stage. Jobs carry inputs (the daemon calculates the witness).

For each setting a fresh daemon (`snarkd serve`) runs `c` jobs with `j` in
flight through the bench client; every proof is verified in the client against
the vk (and by the daemon's self-verification). Writes:

    bench/results/engine-sweep.md / .json     the table (+ every run's summary)
    bench/results/engine-bench.json           the best setting's full bench run
    bench/results/engine-timeline.png         its timeline
    bench/results/engine-timeline-j1.png      the same setting at j=1 (gaps visible)

    python bench/sweep.py [--n 2048] [-c 6] [--synthesis 1,2] [--wpd 1,2] [--inflight 1,2,4] [--threads 1]

Keys come from `snarkd setup` (single-party dev key: for benchmarks only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402

WORK = REPO / "bench" / "work"
RESULTS = REPO / "bench" / "results"

HINTS = """pragma circom 2.0.0;
// Hint-heavy: each step's inverse is computed in the witness by Fermat's little theorem
// (x^(r-2), square-and-multiply over 254 bits) and checked by one constraint.
function inv_slow(x) {
    var e = -2;
    var r = 1;
    var b = x;
    for (var i = 0; i < 254; i++) {
        if ((e >> i) & 1 == 1) { r = r * b; }
        b = b * b;
    }
    return r;
}
template Hints(N) {
    signal input x;
    signal input k;
    signal output out;
    signal s[N + 1];
    signal inv[N];
    s[0] <== x;
    for (var i = 0; i < N; i++) {
        inv[i] <-- inv_slow(s[i]);
        inv[i] * s[i] === 1;
        s[i + 1] <== inv[i] * k + i + 1;
    }
    out <== s[N];
}
component main {public [k]} = Hints(%d);
"""


def prepare(n: int, curve: str = "bn128") -> Path:
    d = WORK / f"engine-hints{n}-{curve}"
    if (d / "circuit.zkey").exists() and (d / "circuit_js" / "circuit.wasm").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    (d / "circuit.circom").write_text(HINTS % n)
    subprocess.run(["node", str(REPO / "node_modules" / "circom2" / "cli.js"), "circuit.circom", "--r1cs", "--wasm",
                    "--sym", "-p", curve, "-o", "."], cwd=d, check=True, capture_output=True)
    from snarkd.setup.groth16_setup import setup

    setup(d / "circuit.r1cs", d / "circuit.zkey", d / "vk.json", progress=False)
    (d / "input.json").write_text(json.dumps({"x": 3, "k": 7}) + "\n")
    return d


class Daemon:
    """A `snarkd serve` child with one setting, the hints key preloaded."""

    def __init__(self, d: Path, synth: int, wpd: int, threads: int, tmp: Path, budget: str = "auto"):
        from snarkd.daemon.client import Client

        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        cfg = tmp / f"s{synth}-w{wpd}-t{threads}-{self.port}.toml"
        cfg.write_text(f"""[daemon]
listen = "{self.addr}"
pid_file = "{tmp}/snarkd-{self.port}.pid"
log_file = "{tmp}/snarkd-{self.port}.log"
[synthesis]
workers = {synth}
threads = {threads}
[gpus]
workers_per_device = {wpd}
[memory]
budget = "{budget}"
[keys.preload]
hints = "{d / 'circuit.zkey'}"
""")
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        self.proc = subprocess.Popen([sys.executable, "-m", "snarkd", "serve", "--config", str(cfg)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with Client(self.addr) as c:
            c.wait_serving(120)
        self.vk = json.loads((d / "vk.json").read_text())
        self.inputs = json.loads((d / "input.json").read_text())
        self.bench(1, 1, check=False)  # warm-up (wasm compile, caches), not counted
        with Client(self.addr) as c:
            self.ready_rss = c.status()["rss_bytes"]

    def bench(self, count: int, inflight: int, check: bool = True, partitions: int = 1) -> dict:
        from snarkd.bench import run_bench

        return run_bench(self.addr, "hints", inputs=self.inputs, count=count, inflight=inflight,
                         partitions=partitions, vk=self.vk if check else None, progress=False)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_one(d: Path, synth: int, wpd: int, inflight: int, threads: int, count: int, tmp: Path,
            timeline: Path | None = None) -> dict:
    from snarkd.bench.timeline import draw

    dm = Daemon(d, synth, wpd, threads, tmp)
    try:
        run = dm.bench(count, inflight)
        if timeline:
            draw(run, str(timeline))
        return run
    finally:
        dm.stop()


def rss_check(d: Path, tmp: Path, budget_mib: int = 4, count: int = 8, inflight: int = 4, partitions: int = 2) -> str:
    """Peak RSS under a tight memory budget: what concurrency adds stays within budget + resident keys."""
    dm = Daemon(d, 2, 2, 1, tmp, budget=f"{budget_mib}MiB")
    try:
        run = dm.bench(count, inflight, partitions=partitions)
    finally:
        dm.stop()
    a, s = run["daemon_after"], run["summary"]
    keys = sum(k["bytes"] for k in a["keys"])
    grow = a["peak_rss_bytes"] - dm.ready_rss
    ok = grow <= a["memory_budget_bytes"] + keys
    mib = lambda n: f"{n / 2**20:.1f} MiB"  # noqa: E731
    return (f"### Peak RSS vs memory budget (c={count} j={inflight} partitions={partitions}, "
            f"{s['completed']} jobs completed, {s['verified']} verified)\n\n"
            f"| budget | peak reserved | resident keys | RSS at ready (after warm-up) | peak RSS | growth | "
            f"growth <= budget + keys |\n|---|---|---|---|---|---|---|\n"
            f"| {mib(a['memory_budget_bytes'])} | {mib(a['memory_peak_bytes'])} | {mib(keys)} | {mib(dm.ready_rss)} | "
            f"{mib(a['peak_rss_bytes'])} | {mib(grow)} | {ok} |\n")


def compare(d: Path, rounds: int, count: int, tmp: Path) -> str:
    """j=1 vs j=2, interleaved (ABAB on the same daemons) so background load hits both alike."""
    import statistics

    arms = {}
    daemons = {t: Daemon(d, 2, 2, t, tmp) for t in (1, 0)}
    try:
        for _ in range(rounds):
            for t, dm in daemons.items():
                for j in (1, 2):
                    run = dm.bench(count, j)
                    assert run["summary"]["verified"] == count, run["summary"]
                    arms.setdefault((t, j), []).append(run["summary"])
    finally:
        for dm in daemons.values():
            dm.stop()
    lines = [f"### j=1 vs j=2 (2 synthesis workers, 2 workers/device; {rounds} interleaved rounds of c={count}; "
             f"median)", "", "| threads | in flight | s/proof (median) | s/proof per round | proofs/min | "
             "device busy | daemon CPU cores | witness ms | device ms |", "|---|---|---|---|---|---|---|---|---|"]
    for (t, j), ss in arms.items():
        sp = [x["s_per_proof"] for x in ss]
        lines.append(f"| {t or 'all (0)'} | {j} | {statistics.median(sp):.3f} | {', '.join(f'{v:.2f}' for v in sp)} | "
                     f"{60 / statistics.median(sp):.1f} | "
                     f"{statistics.median(x['device_busy_fraction'].get('cpu', 0) for x in ss):.0%} | "
                     f"{statistics.median(x.get('daemon_cpu_cores') or 0 for x in ss):.2f} | "
                     f"{statistics.median(x['phase_median_ms'].get('witness', 0) for x in ss):.0f} | "
                     f"{statistics.median(x['phase_median_ms'].get('device', 0) for x in ss):.0f} |")
    return "\n".join(lines)


def row(synth, wpd, inflight, threads, run) -> dict:
    s = run["summary"]
    d = run["daemon_after"]
    return {"synthesis_workers": synth, "workers_per_device": wpd, "inflight": inflight, "threads": threads,
            "completed": s["completed"], "verified": s.get("verified"), "s_per_proof": s["s_per_proof"],
            "proofs_per_min": s["proofs_per_min"], "latency_p50_s": s["latency_s"].get("p50"),
            "device_busy": s["device_busy_fraction"].get("cpu"), "cpu_cores": s.get("daemon_cpu_cores"), "peak_rss_mib": d["peak_rss_bytes"] / 2**20,
            "budget_peak_mib": d["memory_peak_bytes"] / 2**20, "witness_ms": s["phase_median_ms"].get("witness"),
            "device_ms": s["phase_median_ms"].get("device"), "finalize_ms": s["phase_median_ms"].get("finalize")}


def table(rows: list[dict], title: str) -> str:
    head = ("| synth workers | workers/device | in flight | threads | s/proof | proofs/min | p50 latency s | "
            "device busy | daemon CPU cores | witness ms | device ms | finalize ms | peak RSS MiB | verified |")
    out = [f"### {title}", "", head, "|" + "|".join(["---"] * 14) + "|"]
    for r in rows:
        out.append(f"| {r['synthesis_workers']} | {r['workers_per_device']} | {r['inflight']} | {r['threads']} | "
                   f"{r['s_per_proof']:.3f} | {r['proofs_per_min']:.1f} | {r['latency_p50_s']:.2f} | "
                   f"{r['device_busy']:.0%} | {r['cpu_cores']:.2f} | {r['witness_ms']:.0f} | {r['device_ms']:.0f} | {r['finalize_ms']:.0f} | "
                   f"{r['peak_rss_mib']:.0f} | {r['verified']}/{r['completed']} |")
    return "\n".join(out)


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2048, help="Hints(N): N inverse hints, 2N constraints")
    ap.add_argument("-c", "--count", type=int, default=6)
    ap.add_argument("--synthesis", default="1,2")
    ap.add_argument("--wpd", default="1,2")
    ap.add_argument("--inflight", default="1,2,4")
    ap.add_argument("--threads", default="1", help="native threads per stage call (0 = all cores)")
    ap.add_argument("--out", default=str(RESULTS / "engine-sweep"))
    ap.add_argument("--compare-only", action="store_true", help="only the interleaved j=1 vs j=2 comparison")
    ap.add_argument("--figures", metavar="S,W,J", help="only the README figures for this setting "
                    "(engine-bench.json + engine-timeline.png at j=J, engine-timeline-j1.png at j=1)")
    ap.add_argument("--no-compare", action="store_true", help="skip the j=1 vs j=2 comparison and the RSS check")
    ap.add_argument("--compare-count", type=int, default=8, help="jobs per arm per round of the comparison")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the j=1 vs j=2 comparison")
    args = ap.parse_args()
    d = prepare(args.n)
    tmp = WORK / "sweep-tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    host = lambda: f"{platform.node()} {os.cpu_count()} cores, load avg {os.getloadavg()[0]:.1f}"  # noqa: E731
    t_cmp = time.time()
    if args.figures:
        synth, wpd, j = ints(args.figures)
        figures(d, synth, wpd, j, int(args.threads.split(",")[0]), args.count, tmp)
        return 0
    if args.no_compare:
        return sweep(args, d, tmp, host)
    cmp_md = compare(d, args.rounds, args.compare_count, tmp)
    cmp_md += f"\n\nhost: {host()} (other work shares this machine: compare arms within a round)\n"
    Path(str(RESULTS / "engine-j1-vs-j2.md")).write_text(f"# Pipelining: Hints({args.n}) bn128, inputs -> witness "
                                                          f"in the daemon\n\n" + cmp_md)
    print(cmp_md, f"({time.time() - t_cmp:.0f}s)", flush=True)
    rss_md = rss_check(d, tmp)
    Path(str(RESULTS / "engine-rss.md")).write_text(rss_md)
    print(rss_md, flush=True)
    if args.compare_only:
        return 0
    return sweep(args, d, tmp, host)


def figures(d: Path, synth: int, wpd: int, j: int, threads: int, count: int, tmp: Path) -> None:
    """One setting, in full, with its timeline; and the same daemon at j=1 for contrast (back to back)."""
    from snarkd.bench import format_report
    from snarkd.bench.timeline import draw

    dm = Daemon(d, synth, wpd, threads, tmp)
    try:
        run1 = dm.bench(count, 1)
        run = dm.bench(count, j)
    finally:
        dm.stop()
    draw(run, str(RESULTS / "engine-timeline.png"))
    draw(run1, str(RESULTS / "engine-timeline-j1.png"))
    (RESULTS / "engine-bench.json").write_text(json.dumps(run, indent=1))
    (RESULTS / "engine-bench-j1.json").write_text(json.dumps(run1, indent=1))
    for r in (run1, run):
        print(format_report(r), "\n", flush=True)


def sweep(args, d: Path, tmp: Path, host) -> int:
    rows, runs = [], []
    for threads, synth, wpd, j in itertools.product(ints(args.threads), ints(args.synthesis), ints(args.wpd),
                                                    ints(args.inflight)):
        t0 = time.time()
        run = run_one(d, synth, wpd, j, threads, args.count, tmp)
        r = row(synth, wpd, j, threads, run)
        rows.append(r)
        runs.append({"setting": r, "summary": run["summary"], "daemon": {
            k: run["daemon_after"].get(k) for k in ("version", "config_fingerprint", "peak_rss_bytes")}})
        print(f"s={synth} w={wpd} j={j} t={threads}: {r['s_per_proof']:.3f} s/proof busy {r['device_busy']:.0%} "
              f"({time.time() - t0:.0f}s)", flush=True)
    best = min(rows, key=lambda r: r["s_per_proof"])
    md = [f"# Engine sweep: Hints({args.n}) bn128 (nVars {2 * args.n + 3}), inputs -> witness in the daemon, "
          f"c={args.count} per setting", "", f"host: {host()}; CPU device (no GPU); other work shares this machine, "
          "so single runs are noisy (see engine-j1-vs-j2.md for an interleaved comparison)", "",
          table(rows, "all settings"), "", f"best: {best}"]
    Path(args.out + ".md").write_text("\n".join(md) + "\n")
    Path(args.out + ".json").write_text(json.dumps({"n": args.n, "count": args.count, "host": host(), "rows": rows,
                                                   "runs": runs}, indent=1))
    figures(d, best["synthesis_workers"], best["workers_per_device"], best["inflight"], best["threads"], args.count,
            tmp)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
