"""Value-dependent circuits under traffic (issue 37, item 2): N distinct inputs through one NativeCalculator, before
(a source tree whose native engine records every miss: --src /work/main/src) and after (this tree: a program of
CONTROL_FLOW_AFTER paths runs the wasm's control flow natively for requests no path fits).

The circuit is tests/witness/circuits/bigint.circom (a small analogue of zk-email's RSAVerifier65537 witness code:
k-limb long division with value-dependent normalisation, quotient correction and carry loops; pow 65537 by
sixteen mul-mods), or torture.circom. Every witness is checked against the wasm engine's (wasmtime).

    python bench/witness_control_flow.py --n 50 [--bits 121 --limbs 9] [--curve bn128] \\
        [--side before=/work/main/src] [--side after=src] --json bench/results/witness-control-flow.json

Or a circuit made elsewhere with its inputs: --dir DIR takes DIR/circuit.wasm and DIR/inputs-1.json ... inputs-N.json
(zk-email's RSA verifier with N real signatures: `python bench/make_rsa_verifier.py --signatures 200`), and with
--snarkjs each witness is also checked byte for byte against `snarkjs wtns calculate`'s (run after the timed side, so
it does not share the CPU with it):

    python bench/witness_control_flow.py --dir bench/work/rsa-bn128 --n 200 --snarkjs --json OUT.json

--digests-from EARLIER.json instead compares every witness with a side of an earlier run of the same folder whose
witnesses were all checked against snarkjs's (the same bytes, without running snarkjs again).

Reports per side: the build, request 1's time and how it was made, the median of the first 5 and the last 5
requests, the slowest, the .wprog size after request 1 and after request N, paths kept, the requests by source,
peak RSS; and the wasm engine's median per request for scale. Growth with traffic: each request's wall and CPU time
(process time: what other processes on a shared machine take is not counted), and the medians per tenth of the
steady requests (the control-flow runs where there are any; the first requests are recordings): the last tenth
over the first is the replay growth.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bigint_inputs(i: int, n: int, k: int) -> dict:
    r = random.Random(1000 + i)
    top_bits = r.randint(1, n)
    mod = (r.getrandbits(n * (k - 1) + top_bits) | (1 << (n * (k - 1) + top_bits - 1))) | 1
    sig = r.randrange(2, mod)
    msg = pow(sig, 65537, mod) if i % 2 == 0 else r.randrange(0, mod)
    lim = lambda x: [str((x >> (n * j)) & ((1 << n) - 1)) for j in range(k)]  # noqa: E731
    return {"signature": lim(sig), "modulus": lim(mod), "message": lim(msg)}


def torture_inputs(i: int) -> dict:
    return {"a": 1000 + 37 * i, "b": 3 + i, "s": i, "v": [i, 20, 3, 40]}


def compile_wasm(args) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO / "tests" / "witness"))
    from wfixtures import compiled

    if args.circuit == "bigint":
        return compiled("bigint.circom", args.curve, compiler=args.compiler, N=args.bits, K=args.limbs).wasm
    return compiled("torture.circom", args.curve, compiler=args.compiler).wasm


def dir_inputs(d: Path, n: int) -> list[dict]:
    files = [d / f"inputs-{i}.json" for i in range(1, n + 1)]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"{d}: {len(missing)} of {n} input files missing (first {missing[0]}); "
                         "make more with bench/make_rsa_verifier.py --signatures N")
    return [json.loads(f.read_text()) for f in files]


def child(args) -> None:
    """One side, in a process of its own (sys.path: that side's source tree)."""
    import hashlib

    import numpy as np

    from snarkd.witness import NativeCalculator, WitnessCalculator

    d = Path(tempfile.mkdtemp(prefix="wcf-"))
    wasm = d / "circuit.wasm"
    shutil.copyfile(args.wasm, wasm)
    if args.dir:
        inputs = dir_inputs(Path(args.dir), args.n)
    else:
        inputs = [bigint_inputs(i, args.bits, args.limbs) if args.circuit == "bigint" else torture_inputs(i)
                  for i in range(args.n)]
    # with --snarkjs (--digests-from) the parent checks every witness after this side; no wasm engine here, so the peak RSS is the
    # native engine's alone
    ref = None if args.snarkjs or args.digests_from else WitnessCalculator(wasm, cache=False)
    t = time.perf_counter()
    calc = NativeCalculator(wasm, cache=False)
    build_ms = (time.perf_counter() - t) * 1e3
    times, cpu_times, sources, sizes, paths, digests, rss = [], [], [], [], [], [], []
    wasm_ms = []
    for inp in inputs:
        t, c = time.perf_counter(), time.process_time()
        raw, source = calc.calculate_bytes(inp)
        cpu_times.append((time.process_time() - c) * 1e3)
        times.append((time.perf_counter() - t) * 1e3)
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # before the wasm engine's first run
        digests.append(hashlib.sha256(bytes(raw)).hexdigest())
        if ref is not None:
            t = time.perf_counter()
            want = ref.calculate(inp).values
            wasm_ms.append((time.perf_counter() - t) * 1e3)
            got = np.frombuffer(bytes(raw), dtype="<u8").reshape(-1, 4)
            if not np.array_equal(got, want):
                raise SystemExit(f"witness differs from the wasm engine's for {inp}")
        sources.append(source)
        sizes.append(calc.loaded_from.stat().st_size if calc.loaded_from else 0)
        paths.append(calc.program.n_paths)
    shutil.rmtree(d, ignore_errors=True)
    med = statistics.median
    # growth: the requests of the steady state (control-flow runs where there are any: the first requests are
    # recordings, slower by design), their medians per tenth
    steady = [i for i, s in enumerate(sources) if s == "control"] or list(range(len(times)))
    tenth = max(1, len(steady) // 10)
    tenths = lambda xs: [round(med([xs[i] for i in steady[j:j + tenth]]), 2)  # noqa: E731
                         for j in range(0, len(steady) - tenth + 1, tenth)]
    print(json.dumps({
        "steady_source": sources[steady[0]], "steady_requests": len(steady),
        "tenth_wall_medians_ms": tenths(times), "tenth_cpu_medians_ms": tenths(cpu_times),
        "last_over_first_tenth_wall": round(tenths(times)[-1] / tenths(times)[0], 3),
        "last_over_first_tenth_cpu": round(tenths(cpu_times)[-1] / tenths(cpu_times)[0], 3),
        "per_request_cpu_ms": [round(x, 2) for x in cpu_times],
        "build_ms": round(build_ms, 1),
        "request_1_ms": round(times[0], 2), "request_1_source": sources[0],
        "first_5_median_ms": round(med(times[:5]), 2), "last_5_median_ms": round(med(times[-5:]), 2),
        "request_n_ms": round(times[-1], 2), "max_ms": round(max(times), 2),
        "wprog_bytes_after_1": sizes[0], "wprog_bytes_after_n": sizes[-1],
        "paths_after_1": paths[0], "paths_after_n": paths[-1],
        "sources": {s: sources.count(s) for s in sorted(set(sources))},
        "per_request_ms": [round(x, 2) for x in times],
        "control_first_ms": next((x for x, s in zip(times, sources) if s == "control"), None),
        "control_first_5_median_ms": round(med([x for x, s in zip(times, sources) if s == "control"][:5] or [0]), 2),
        "sources_per_request": sources,
        "wasm_engine_median_ms": round(med(wasm_ms), 2) if wasm_ms else None,
        "identical_to_wasm_engine": True if wasm_ms else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_rss_mb_after_1": round(rss[0] / 1024, 1), "peak_rss_mb_native_after_n": round(rss[-1] / 1024, 1),
        "witness_sha256": digests,
    }))


def snarkjs_digests(wasm: Path, d: Path, n: int) -> list[str]:
    """sha256 of the witness values (the .wtns's section 2) snarkjs writes for DIR/inputs-1..N.json."""
    import hashlib

    sys.path.insert(0, str(REPO / "src"))
    from snarkd.formats.wtns import read_wtns

    snarkjs = REPO / "node_modules" / ".bin" / "snarkjs"
    out = []
    with tempfile.TemporaryDirectory(prefix="wcf-snarkjs-") as t:
        w = Path(t) / "w.wtns"
        for i in range(1, n + 1):
            subprocess.run([str(snarkjs), "wtns", "calculate", str(wasm), str(d / f"inputs-{i}.json"), str(w)],
                           check=True, capture_output=True)
            out.append(hashlib.sha256(read_wtns(w).values.astype("<u8").tobytes()).hexdigest())
    return out


def check_digests(sides: dict, want: list[str], source: str) -> None:
    """Each side's witnesses against snarkjs's digests (`source` says where they came from); any difference stops."""
    for name, res in sides.items():
        same = sum(a == b for a, b in zip(res["witness_sha256"], want))
        res["identical_to_snarkjs"] = f"{same} of {len(want)}{source}"
        print(name, "identical to snarkjs:", res["identical_to_snarkjs"], flush=True)
        if same != len(want):
            raise SystemExit(f"{name}: {len(want) - same} witnesses differ from snarkjs's")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--circuit", choices=("bigint", "torture"), default="bigint")
    ap.add_argument("--bits", type=int, default=121)
    ap.add_argument("--limbs", type=int, default=9)
    ap.add_argument("--curve", default="bn128")
    ap.add_argument("--compiler", default="circom2")
    ap.add_argument("--side", action="append", help="NAME=SRC_DIR (default: after=this tree's src)")
    ap.add_argument("--dir", help="DIR/circuit.wasm with DIR/inputs-1..N.json instead of a circuit made here")
    ap.add_argument("--snarkjs", action="store_true", help="with --dir: every witness against snarkjs's")
    ap.add_argument("--digests-from", help="with --dir: every witness against an earlier snarkjs-checked run's")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--wasm", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    wasm = Path(args.dir) / "circuit.wasm" if args.dir else compile_wasm(args)
    sides = dict(s.split("=", 1) for s in (args.side or [f"after={REPO / 'src'}"]))
    out = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "circuit": args.circuit, "n": args.n,
           "bits": args.bits if args.circuit == "bigint" else None,
           "limbs": args.limbs if args.circuit == "bigint" else None,
           "curve": args.curve, "compiler": args.compiler, "dir": args.dir, "cpus": os.cpu_count(), "sides": {}}
    if args.dir:
        out.update(circuit=str(wasm), bits=None, limbs=None, curve=None, compiler=None)
    for name, src in sides.items():
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, __file__, "--child", "--wasm", str(wasm), "--n", str(args.n), "--circuit",
               args.circuit, "--bits", str(args.bits), "--limbs", str(args.limbs), "--curve", args.curve,
               *(["--dir", str(args.dir)] if args.dir else []), *(["--snarkjs"] if args.snarkjs else []),
               *(["--digests-from", args.digests_from] if args.digests_from else [])]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: {proc.stderr[-2000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["src"] = str(src)
        out["sides"][name] = res
        print(name, {k: v for k, v in res.items() if k not in ("per_request_ms", "per_request_cpu_ms", "witness_sha256",
                                                                "sources_per_request")}, flush=True)
    if args.dir and args.snarkjs:
        check_digests(out["sides"], snarkjs_digests(wasm, Path(args.dir), args.n), "")
    if args.digests_from:
        earlier = json.loads(Path(args.digests_from).read_text())["sides"]
        checked = [r for r in earlier.values() if len(r["witness_sha256"]) >= args.n and str(
                   r.get("identical_to_snarkjs")).startswith(f"{len(r['witness_sha256'])} of {len(r['witness_sha256'])}")]
        if not checked:
            raise SystemExit(f"{args.digests_from}: no side with {args.n} witnesses all identical to snarkjs's")
        check_digests(out["sides"], checked[0]["witness_sha256"][: args.n], f" (digests of {args.digests_from})")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
