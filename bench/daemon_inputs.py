#!/usr/bin/env python3
"""Proofs from inputs beside proofs from a witness, through one real daemon, side by side in one run.

    python bench/daemon_inputs.py --key-dir DIR [--name sha256] [--devices 0] [--j 32] [--count 192]
                                  [--synthesis 8] [--engine native] [--rounds 2] [--out DIR]
                                  [--inputs-dir DIR --warm-inputs 32]

DIR holds circuit.zkey, circuit.wasm (the circuit's circom .wasm), input.json and witness.wtns (the
witness of those inputs). One daemon (`snarkd start`, the key preloaded with its .wasm, `[witness]
engine` as given) is driven by `snarkd bench`'s runner over gRPC, alternating `--witness` and `--input`
runs (`--rounds` of each; the witness sent the way the client picks, by reference on this host). Per
run: s/proof, latency, the daemon's CPU cores (its process CPU time over the wall time), its witnesses
by source (native / recorded / wasm), the phase medians. Proofs are verified by the client; the public
signals of the first proof from inputs must equal those from the witness. Writes OUT/daemon-inputs-NAME.json
and a sample proof from inputs (for `snarkjs groth16 verify`).

Distinct statements (--inputs-dir DIR: its inputs-N.json, bench/make_rsa_verifier.py's RSA signatures): job i
of a run sends the i-th input of the timed pool (cycled), so every job in flight proves another signature, and
"from a witness" sends the matching witness, computed before any timing with the native engine (this process,
its own program file: the daemon's beside the key's .wasm is not touched), one per input, so both sides prove
the same statements. The first --warm-inputs inputs of DIR serve the warm-up only, each once, and are never sent
again: on a value-dependent circuit the daemon records the first requests it sees (the first wave of j at once,
before it has the CONTROL_FLOW_AFTER paths that make the verdict) and keeps their paths; a kept path that later
served a replay would count as a hit and send the program back to learning shapes (docs/witnesses.md). The timed
pool (the rest of DIR) then runs the wasm's control flow natively, nothing recorded: `witnesses` per run says so
(control vs native vs recorded vs wasm). Without --inputs-dir: the key dir's input.json and witness.wtns, as before.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.bench.runner import run_bench  # noqa: E402
from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402
from snarkd.daemon.pidfile import read_pid_file  # noqa: E402
from snarkd.formats.zkey import read_zkey, vk_json  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def config(a, work: Path, zkey: Path, wasm: Path, port: int) -> Path:
    cfg = work / "snarkd.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "127.0.0.1:{port}"', f'pid_file = "{work}/snarkd.pid"', f'log_file = "{work}/snarkd.log"',
        "[transport]", f'witness_spool = "{work}/spool"',
        "[synthesis]", f"workers = {a.synthesis}", f"threads = {a.threads}", *([f"nice = {a.nice}"] if a.nice else []),
        "[witness]", f'engine = "{a.engine}"',
        "[gpus]", f"devices = {a.devices}", f"workers_per_device = {a.wpd}",
        "[memory]", 'budget = "96GiB"',
        "[pipeline]", f"finalize_workers = {a.fin}",
        "[keys]", f'allowed_dirs = ["{zkey.parent}"]',
        "[keys.preload]", f'k = "{zkey}"']) + "\n")
    return cfg


def pool_files(d: Path) -> list[Path]:
    """DIR's inputs-N.json in N's order."""
    found = [(int(m.group(1)), f) for f in d.glob("inputs-*.json") if (m := re.fullmatch(r"inputs-(\d+)\.json", f.name))]
    return [f for _, f in sorted(found)]


def split_pool(files: list, warm: int) -> tuple[list, list]:
    """(the warm-up's inputs, the timed pool): the first `warm` serve the warm-up once, the rest are timed."""
    if len(files) <= warm:
        raise SystemExit(f"{len(files)} inputs in the pool: more than --warm-inputs {warm} are needed "
                         "(bench/make_rsa_verifier.py --signatures N)")
    return files[:warm], files[warm:]


def precompute_witnesses(wasm: Path, pool: list[dict], out: Path, workers: int) -> dict:
    """The pool's witnesses with the native engine, one .wtns per input (out/w-I.wtns), before any timing. Its
    own program file under `out` (the daemon's, beside the key's .wasm, is left as it is). Threads: the native
    run releases the GIL. Returns the paths, the sources (native/recorded/control/wasm) and the wall time."""
    from snarkd.formats.wtns import write_wtns
    from snarkd.witness.native import CONTROL_FLOW_AFTER, NativeCalculator

    t0 = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    calc = NativeCalculator(str(wasm), program=str(out / "bench.wprog"))
    paths = [str(out / f"w-{i}.wtns") for i in range(len(pool))]
    sources: dict[str, int] = {}

    def one(i: int) -> str:
        w, source = calc.calculate_with_source(pool[i])
        write_wtns(paths[i], w.prime, w.values, durable=False)
        return source

    first = min(len(pool), CONTROL_FLOW_AFTER)  # the recordings that make the verdict, one at a time
    done = [one(i) for i in range(first)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool_threads:
        done += pool_threads.map(one, range(first, len(pool)))
    for src in done:
        sources[src] = sources.get(src, 0) + 1
    return {"paths": paths, "sources": sources, "seconds": round(time.monotonic() - t0, 2), "workers": workers}


def gil_profile(pid: int, path: Path):
    """py-spy sampling which of the daemon's Python stacks hold the GIL (--gil), without stopping it, until the
    returned process is sent SIGINT (it writes `path` then: one collapsed stack and its sample count per line)."""
    return subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--gil", "--threads", "--nonblocking",
                             "--rate", "200", "--format", "raw", "--output", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def one_run(addr: str, kind: str, a, witness, inputs, vk: dict, proofs: str | None, profile: Path | None = None,
            pid: int = 0) -> dict:
    """witness: a .wtns path or a list of them (the pool's); inputs: a dict or a list (the pool)."""
    if kind == "witness":
        args = dict(witness=witness if isinstance(witness, list) else str(witness))
    else:
        args = dict(inputs=inputs)
    spy = gil_profile(pid, profile) if profile is not None else None
    t0 = time.monotonic()
    run = run_bench(addr, "k", **args, count=a.count, inflight=a.j, progress=False, vk=vk, proofs_dir=proofs)
    seconds = time.monotonic() - t0
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)
    out = summarize(kind, a.j, run)
    if profile is not None and profile.exists():
        # the share of the run's wall time some thread of the daemon held the GIL (200 samples a second)
        samples = sum(int(line.rsplit(" ", 1)[1]) for line in profile.read_text().splitlines() if line.strip())
        out["gil_held_fraction"] = round(samples / (200 * seconds), 3)
    out["distinct"] = run.get("distinct", 1)
    log(json.dumps(out))
    return out


def _median(values, scale: float = 1.0, digits: int = 2):
    """The median (scaled, rounded), or None when there is nothing to take it of (every job failed)."""
    values = [v for v in values if v is not None]
    return round(statistics.median(values) * scale, digits) if values else None


def summarize(kind: str, j: int, run: dict) -> dict:
    """One run's record. A run whose jobs all failed is reported as such (its failures listed), not a crash."""
    ok = [jb for jb in run["jobs"] if jb["state"] == "COMPLETED"]
    lat = sorted(jb["end"] - jb["start"] for jb in ok)
    phases: dict[str, list] = {}
    for jb in ok:
        for k, v in jb["partitions"][0]["timings"].items():
            phases.setdefault(k, []).append(v)
    s = run["summary"]
    return {
        "kind": kind, "j": j, "proofs": len(ok), "failed": [jb["error"] for jb in run["jobs"] if jb["state"] != "COMPLETED"],
        "s_per_proof": round(s["s_per_proof"], 5) if s.get("s_per_proof") else None,
        "latency_ms": {"p50": _median(lat, 1e3, 1), "p95": round(lat[int(0.95 * (len(lat) - 1))] * 1e3, 1) if lat else None},
        "daemon_cpu_cores": round(s["daemon_cpu_cores"], 2) if s.get("daemon_cpu_cores") is not None else None,
        "witnesses": s.get("witnesses"),
        "kernel_busy": s.get("device_kernel_busy_fraction"),
        "verified_by_client": run.get("verified"),
        "transport": run.get("transport", ""),
        "phase_median_ms": {k: _median(v) for k, v in phases.items()},
    }


def medians(runs: list[dict]) -> dict:
    w = [r["s_per_proof"] for r in runs if r["kind"] == "witness"]
    i = [r["s_per_proof"] for r in runs if r["kind"] == "inputs"]
    mw, mi = _median(w, digits=6), _median(i, digits=6)
    return {"witness": mw, "inputs": mi, "inputs_over_witness": round(mi / mw, 3) if mw and mi else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--key-dir", required=True)
    ap.add_argument("--name", default="circuit")
    ap.add_argument("--devices", default="0")
    ap.add_argument("--j", type=int, default=32)
    ap.add_argument("--count", type=int, default=192)
    ap.add_argument("--warm", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--synthesis", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--wpd", type=int, default=2)
    ap.add_argument("--fin", type=int, default=4)
    ap.add_argument("--engine", choices=("auto", "native", "wasm"), default="native")
    ap.add_argument("--inputs-dir", help="a pool of inputs-N.json (distinct statements, cycled); witnesses computed "
                    "from them before timing (default: the key dir's input.json and witness.wtns)")
    ap.add_argument("--warm-inputs", type=int, default=32,
                    help="with --inputs-dir: the pool's first inputs, each sent once in the warm-up, never timed")
    ap.add_argument("--witness-workers", type=int, default=os.cpu_count() or 1,
                    help="with --inputs-dir: threads computing the pool's witnesses before timing")
    ap.add_argument("--nice", type=int, default=0, help="[synthesis] nice: the synthesis workers' added niceness")
    ap.add_argument("--gil-profile", action="store_true",
                    help="py-spy (on PATH) samples which daemon threads hold the GIL in each run of the first "
                         "round: OUT/gil-NAME-KIND.txt (collapsed stacks)")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    a = ap.parse_args()
    a.devices = [int(x) for x in a.devices.split(",") if x.strip()]
    kd, out_dir = Path(a.key_dir).resolve(), Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    zkey, wasm, wtns = kd / "circuit.zkey", kd / "circuit.wasm", kd / "witness.wtns"
    if a.inputs_dir:
        warm_files, timed_files = split_pool(pool_files(Path(a.inputs_dir)), a.warm_inputs)
        warm_inputs = [json.loads(f.read_text()) for f in warm_files]
        inputs = [json.loads(f.read_text()) for f in timed_files]
    else:
        inputs = json.loads((kd / "input.json").read_text())
    z = read_zkey(zkey)
    vk = vk_json(z, alphabeta=False)
    res = {"benchmark": "proofs from inputs beside proofs from a witness through one daemon (bench/daemon_inputs.py)",
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": os.cpu_count(),
           "key": {"name": a.name, "domain_size": z.domain_size, "n_vars": z.n_vars, "curve": z.curve.name},
           "settings": {"synthesis_workers": a.synthesis, "threads": a.threads, "devices": a.devices,
                        "workers_per_device": a.wpd, "finalize_workers": a.fin, "witness_engine": a.engine,
                        "synthesis_nice": a.nice,
                        "j": a.j, "count": a.count, "rounds": a.rounds},
           "runs": []}
    z.close()
    # the daemon's program file for this .wasm, as the daemon will find it (a value-dependent verdict in it: the
    # daemon runs the control flow from its first request, nothing recorded in the warm-up)
    res["wprog_before_start"] = [str(p) for p in sorted(kd.glob("*.wprog"))]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    snarkd = [sys.executable, "-m", "snarkd"]
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        warm_witness = str(wtns)
        if a.inputs_dir:
            log(f"{len(warm_inputs)} warm-up inputs, {len(inputs)} timed: their witnesses (native engine, "
                f"{a.witness_workers} threads)")
            pre = precompute_witnesses(wasm, inputs, work / "pool", a.witness_workers)
            wtns = pre.pop("paths")
            warm_witness = wtns[: max(1, min(len(wtns), a.warm))]
            res["pool"] = {"dir": str(Path(a.inputs_dir).resolve()), "warm_inputs": len(warm_inputs),
                           "distinct_inputs": len(inputs), "jobs_per_run": a.count,
                           "each_input_per_run": round(a.count / len(inputs), 2), "witnesses_before_timing": pre}
            log(f"pool witnesses: {json.dumps(pre)}")
        res["distinct_inputs"] = len(inputs) if isinstance(inputs, list) else 1
        cfg = config(a, work, zkey, wasm, free_port())
        t0 = time.monotonic()
        r = subprocess.run([*snarkd, "start", "--config", str(cfg)], env=env, capture_output=True, text=True, timeout=900)
        if r.returncode:
            raise SystemExit(f"snarkd start failed: {r.stdout}{r.stderr}")
        res["daemon_start_s"] = round(time.monotonic() - t0, 2)  # key load and the native program's build
        log(r.stdout.strip().splitlines()[0])
        addr = cfg.read_text().split('listen = "')[1].split('"')[0]
        try:
            t0 = time.monotonic()
            run_bench(addr, "k", witness=warm_witness, count=a.warm, inflight=a.j, progress=False)
            if a.inputs_dir:  # each warm-up input once (distinct: the recordings happen here)
                w = run_bench(addr, "k", inputs=warm_inputs, count=len(warm_inputs), inflight=a.j, progress=False)
            else:
                w = run_bench(addr, "k", inputs=inputs, count=a.warm, inflight=a.j, progress=False)
            res["warm_up"] = {"seconds": round(time.monotonic() - t0, 2), "inputs_jobs": len(w["jobs"]),
                              "failed": sum(jb["state"] != "COMPLETED" for jb in w["jobs"]),
                              "witnesses": w["summary"].get("witnesses")}
            log(f"warm-up: {json.dumps(res['warm_up'])}")
            publics = {}
            for rnd in range(a.rounds):
                for kind in ("witness", "inputs"):
                    with tempfile.TemporaryDirectory() as proofs:
                        profile = out_dir / f"gil-{a.name}-{kind}.txt" if a.gil_profile and rnd == 0 else None
                        pid = read_pid_file(work / "snarkd.pid").pid if profile else 0
                        res["runs"].append(one_run(addr, kind, a, wtns, inputs, vk, proofs, profile, pid))
                        if rnd == 0 and Path(proofs, "public-0-0.json").exists():  # absent: every job failed
                            publics[kind] = json.loads(Path(proofs, "public-0-0.json").read_text())
                            if kind == "inputs":
                                for f in ("proof", "public"):
                                    (out_dir / f"sample-{a.name}-inputs-{f}.json").write_text(
                                        Path(proofs, f"{f}-0-0.json").read_text())
            res["same_public_signals"] = publics.get("witness") is not None and publics.get("witness") == publics.get("inputs")
            (out_dir / "vk.json").write_text(json.dumps(vk))
            log_tail = (work / "snarkd.log").read_text().splitlines()
            res["native_program_log"] = [line for line in log_tail if "native witness program" in line][:3]
        finally:
            r = subprocess.run([*snarkd, "stop", "--config", str(cfg)], env=env, capture_output=True, text=True, timeout=120)
            log(r.stdout.strip() or r.stderr.strip())
    res["median_s_per_proof"] = medians(res["runs"])
    (out_dir / f"daemon-inputs-{a.name}.json").write_text(json.dumps(res, indent=1))
    m = res["median_s_per_proof"]
    failed = [f for r in res["runs"] for f in r["failed"]]
    print(f"{a.name}: j = {a.j}, median s/proof from a witness {m['witness']}, from inputs {m['inputs']} "
          f"({m['inputs_over_witness']}x); {res['distinct_inputs']} distinct input(s); daemon cores "
          f"{[r['daemon_cpu_cores'] for r in res['runs']]}; witnesses from inputs "
          f"{[r['witnesses'] for r in res['runs'] if r['kind'] == 'inputs']}; same public "
          f"signals: {res['same_public_signals']}" + (f"; {len(failed)} job(s) failed, first: {failed[0]}" if failed else ""))
    return 0 if all(not r["failed"] for r in res["runs"]) and res["same_public_signals"] else 1


if __name__ == "__main__":
    sys.exit(main())
