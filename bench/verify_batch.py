"""Batch Groth16 verification (snarkd.verifier.batch) vs one-by-one verification, in process.

For each curve, N distinct proofs of the example `chain` key (examples/chain-<curve>: 2 public
values) are made with snarkd's CPU prover in process (fresh blinding per call, so no two are
equal). Then, for n = 64, 256, 1,024:
  - single: `snarkd.verifier.groth16.verify(vk, public, proof)` called n times (same JSON
    objects; the prepared-key cache warm, as in a long-running process);
  - batch:  `snarkd.verifier.batch.verify_batch(vk, items)` over the same n items;
  - bad:    the batch with 1 and with 4 invalid proofs (another proof's C) at random indices:
            the time to name them (bisection), checked against the indices planted.
Where the batch's time goes (n = the largest): the Python walk of the JSON (to one text buffer),
the native per-proof pass (parsing, point and subgroup checks, r_i A_i) and the combined check
(scalar sums, the MSM of the C_i, the Miller loops, one final exponentiation). Medians of --runs runs, wall time and process CPU time (all threads: the
ratio of CPU times is what the batch saves in work, whatever else the machine runs); results in
bench/results/verify-batch.json.
The machine is shared with other work: timings may be noisy (load averages are recorded).

    python bench/verify_batch.py [--sizes 64,256,1024] [--runs 5] [--curves bn128,bls12381]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import secrets
import statistics
import sys
import time
from array import array
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "src")]

from snarkd.prover.oneshot import prove_files
from snarkd.verifier import batch as batch_mod
from snarkd.verifier import groth16
from snarkd.verifier.batch import verify_batch


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def median_ms(fn, runs: int, cpu: list | None = None) -> tuple[float, list[float]]:
    """Median wall ms of fn over runs; cpu (if given) gets the median process CPU ms (all threads)."""
    times, cpus = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    if cpu is not None:
        cpu.append(statistics.median(cpus))
    return statistics.median(times), times


def make_proofs(curve: str, n: int, cache: Path | None) -> tuple[dict, list]:
    d = REPO / "examples" / f"chain-{curve}"
    vk = json.loads((d / "vk.json").read_text())
    saved = cache / f"verify-batch-proofs-{curve}-{n}.json" if cache else None
    if saved and saved.exists():
        items = [tuple(x) for x in json.loads(saved.read_text())]
    else:
        items = []
        for _ in range(n):
            p = prove_files(d / "chain.zkey", d / "chain.wtns")
            items.append((p.public, p.proof))
        if saved:
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(items))
    assert len({json.dumps(p) for _, p in items}) == n, "proofs are not distinct"
    return vk, items


def with_bad(items: list, count: int, rng: random.Random) -> tuple[list, list[int]]:
    bad = sorted(rng.sample(range(len(items)), count))
    out = list(items)
    for i in bad:
        public, proof = copy.deepcopy(items[i])
        proof["pi_c"] = items[(i + 1) % len(items)][1]["pi_c"]
        out[i] = (public, proof)
    return out, bad


def breakdown(vk: dict, items: list, runs: int) -> dict:
    """The batch's phases on the all-valid batch (the same calls verify_batch makes)."""
    key = groth16.read_key(vk)
    pvk = key.prepared()
    n = len(items)

    def read():
        for _, proof in items:
            groth16.check_proof_labels(key.curve, proof, "proof")
        return "\n".join(batch_mod._text_line(p, q, key.n_public) for p, q in items).encode()

    read_ms, _ = median_ms(read, runs)
    text = read()
    coeffs = secrets.token_bytes(16 * n)
    prep_ms, _ = median_ms(lambda: pvk.batch_text(text, n, coeffs), runs)
    idx = array("I", range(n))
    # a fresh batch per run: a batch caches its Miller-loop chunks for the bisection
    batches = [pvk.batch_text(text, n, coeffs) for _ in range(runs)]
    check_ms, _ = median_ms(lambda: batches.pop().check(pvk, idx), runs)
    assert pvk.batch_text(text, n, coeffs).check(pvk, idx)
    one_thread_ms, _ = median_ms(lambda: verify_batch(vk, items, threads=1), runs)
    two_threads_ms, _ = median_ms(lambda: verify_batch(vk, items), runs)
    return {"n": n, "python_read_ms": read_ms, "native_per_proof_pass_ms": prep_ms, "combined_check_ms": check_ms,
            "batch_one_thread_ms": one_thread_ms, "batch_all_threads_ms": two_threads_ms,
            "thread_speedup": one_thread_ms / two_threads_ms}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--single-runs", type=int, default=5)
    ap.add_argument("--curves", default="bn128,bls12381")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "verify-batch.json"))
    ap.add_argument("--cache", type=Path, help="keep the proofs made here (JSON) and reuse them on the next run")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(2027)
    results = {"machine": {"cpus": os.cpu_count(), "cpu": cpu_name(), "platform": platform.platform(),
                           "python": platform.python_version(), "loadavg_start": os.getloadavg(),
                           "note": "shared 2-core VM: other work may run at the same time; timings may be noisy"},
               "method": __doc__.split("\n\n")[1], "curves": {}}
    for curve in args.curves.split(","):
        t0 = time.perf_counter()
        vk, items = make_proofs(curve, max(sizes), args.cache)
        prove_s = time.perf_counter() - t0
        print(f"{curve}: {len(items)} proofs made in {prove_s:.1f} s", flush=True)
        groth16.verify(vk, *items[0])  # warm the prepared-key cache and the native constants
        rows = []
        for n in sizes:
            sub = items[:n]
            # single and batch runs interleaved, so that load from other work falls on both alike
            single_all, batch_all, single_cpus, batch_cpus = [], [], [], []
            for k in range(max(args.runs, args.single_runs)):
                if k < args.single_runs:
                    cpu = []
                    ms, _ = median_ms(lambda vk=vk, sub=sub: all(groth16.verify(vk, p, q) for p, q in sub), 1, cpu)
                    single_all.append(ms)
                    single_cpus.append(cpu[0])
                cpu = []
                ms, _ = median_ms(lambda vk=vk, sub=sub: verify_batch(vk, sub), 1, cpu)
                batch_all.append(ms)
                batch_cpus.append(cpu[0])
            assert all(groth16.verify(vk, p, q) for p, q in sub)
            assert verify_batch(vk, sub).valid
            single_ms, batch_ms = statistics.median(single_all), statistics.median(batch_all)
            single_cpu, batch_cpu = statistics.median(single_cpus), statistics.median(batch_cpus)
            row = {"n": n, "single_total_ms": single_ms, "single_per_proof_ms": single_ms / n,
                   "batch_ms": batch_ms, "batch_per_proof_ms": batch_ms / n, "speedup": single_ms / batch_ms,
                   "speedup_of_min_times": min(single_all) / min(batch_all),
                   "single_cpu_ms": single_cpu, "batch_cpu_ms": batch_cpu, "cpu_time_ratio": single_cpu / batch_cpu,
                   "single_runs_ms": single_all, "batch_runs_ms": batch_all}
            for count in (1, 4):
                bad_items, planted = with_bad(sub, count, rng)
                found = {}

                def run(vk=vk, bad_items=bad_items, found=found):
                    found["r"] = verify_batch(vk, bad_items)

                ms, _ = median_ms(run, max(1, args.runs // 2))
                assert found["r"].bad == planted, (found["r"].bad, planted)
                row[f"find_{count}_bad_ms"] = ms
                row[f"find_{count}_bad_checks"] = found["r"].checks
            rows.append(row)
            print(f"{curve} n={n}: single {single_ms:.0f} ms ({single_ms / n:.2f} ms/proof), batch {batch_ms:.1f} ms "
                  f"({batch_ms / n * 1e3:.0f} us/proof), {single_ms / batch_ms:.1f}x (of min times {row['speedup_of_min_times']:.1f}x, CPU time "
                  f"{row['cpu_time_ratio']:.1f}x); 1 bad found in "
                  f"{row['find_1_bad_ms']:.0f} ms ({row['find_1_bad_checks']} checks), 4 bad in {row['find_4_bad_ms']:.0f} ms "
                  f"({row['find_4_bad_checks']} checks)", flush=True)
        bd = breakdown(vk, items[: max(sizes)], args.runs)
        print(f"{curve} breakdown n={bd['n']}: read {bd['python_read_ms']:.1f} ms, per-proof pass "
              f"{bd['native_per_proof_pass_ms']:.1f} ms, combined check {bd['combined_check_ms']:.1f} ms; batch on 1 thread "
              f"{bd['batch_one_thread_ms']:.0f} ms, on all {bd['batch_all_threads_ms']:.0f} ms", flush=True)
        results["curves"][curve] = {"key": f"examples/chain-{curve}", "n_public": len(items[0][0]),
                                    "proofs_made_s": prove_s, "rows": rows, "breakdown": bd}
    results["machine"]["loadavg_end"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
