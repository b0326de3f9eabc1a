"""`snarkd witness --engine native` (program cached) against circom's own C++ witness generator, whole process,
side by side in one run.

The circuit folder holds circuit.circom, circuit.wasm and input.json (bench/make_sha256_key.py writes
bench/work/sha256-bn128, bench/make_rsa_verifier.py bench/work/rsa-bn128), and lib/ where its includes are (else
circomlib's). circom's C++ generator is built once beside it (CIRCUIT-cpp/: `circom2 --c`, then `make`; needs
libgmp-dev, nlohmann-json3-dev and nasm), its build time recorded. Byte identity is checked on input.json, the
folder's inputs-*.json and (inputs of bits only) --inputs random ones. Then, interleaved, --runs times
each: the snarkd console script (what a user runs; `python -m snarkd` where there is none), the C++ binary, and
(with --snarkjs) `snarkjs wtns calculate`; wall time medians, peak RSS from GNU time. Every tool's .wtns is checked
byte-identical to snarkjs's, on input.json and on --inputs more random messages.

Python's bytecode: this machine's environment sets PYTHONDONTWRITEBYTECODE, so every process would compile every
module it imports (+~30 ms). An installed package has its bytecode compiled at install; the bench runs snarkd with
bytecode written and read (the variable removed), as users run it.

    python bench/witness_vs_circom_cpp.py [--dir bench/work/sha256-bn128] [--runs 9] [--inputs 3] [--snarkjs]
        [--side NAME=SRC ...] [--pool DIR] [--json bench/results/witness-vs-circom-cpp.json]

--side NAME=SRC times snarkd from another source tree too (its src/ folder, native modules built in it), e.g.
--side main=/tmp/main/src beside this tree's (named "snarkd").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))

from prove_vs_rapidsnark import cpu_name  # noqa: E402  (bench/ is on sys.path)
from witness_native import TIME, median_ms  # noqa: E402
from witness_vs_snarkjs import SNARKJS  # noqa: E402

CIRCOM2 = REPO / "node_modules" / "circom2" / "cli.js"


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def build_cpp(circuit: Path, out: Path) -> float:
    """circom's C++ generator for circuit/circuit.circom, built in out/ (seconds; 0 when already built)."""
    binary = out / "circuit_cpp" / "circuit"
    if binary.exists():
        return 0.0
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(circuit / "circuit.circom", out / "circuit.circom")
    # circom2 (WASI) reads below its cwd only: the circuit's lib/ (or circomlib) copied there
    own_lib = circuit / "lib"
    lib = out / ("lib" if own_lib.exists() else "circomlib")
    if lib.exists():
        shutil.rmtree(lib)
    shutil.copytree(own_lib if own_lib.exists() else REPO / "node_modules" / "circomlib" / "circuits", lib)
    t = time.perf_counter()
    try:
        subprocess.run(["node", str(CIRCOM2), "circuit.circom", "--c", "-o", ".", *(["-l", "lib"] if own_lib.exists()
                                                                                   else [])],
                       cwd=out, check=True, capture_output=True)
    finally:
        shutil.rmtree(lib)
    subprocess.run(["make", "-j", str(os.cpu_count() or 1)], cwd=out / "circuit_cpp", check=True, capture_output=True)
    return time.perf_counter() - t


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int, float]:
    """(wall seconds, peak RSS bytes, CPU seconds: user + system) of one child process, from GNU time (the CPU time
    is what a loaded machine changes least: other processes lengthen the wall time, not the work)."""
    start = time.perf_counter()
    proc = subprocess.run([TIME, "-f", "maxrss_kib=%M cpu_s=%U+%S", *cmd], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} failed: {proc.stderr[-2000:]}")
    rss, cpu = [line for line in proc.stderr.splitlines() if line.startswith("maxrss_kib=")][-1].split()
    user, system = cpu.split("=")[1].split("+")
    return wall, int(rss.split("=")[1]) * 1024, float(user) + float(system)


def snarkd_command() -> list[str]:
    script = Path(sys.executable).parent / "snarkd"
    return [str(script)] if script.exists() else [sys.executable, "-m", "snarkd"]


def random_inputs(template: dict, n: int) -> list[dict]:
    """n inputs shaped as template, random bits, where every value of the template is a bit (else none)."""
    rng = random.Random(37)

    def leaves(v):
        return [x for item in v for x in leaves(item)] if isinstance(v, list) else [v]

    if not all(str(x) in ("0", "1") for v in template.values() for x in leaves(v)):
        return []

    def fill(v):
        return [fill(x) for x in v] if isinstance(v, list) else rng.getrandbits(1)

    return [{k: fill(v) for k, v in template.items()} for _ in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=REPO / "bench" / "work" / "sha256-bn128")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--inputs", type=int, default=3, help="more random inputs checked byte for byte (not timed)")
    ap.add_argument("--snarkjs", action="store_true", help="also time snarkjs wtns calculate")
    ap.add_argument("--side", action="append", default=[], metavar="NAME=SRC", help="another snarkd source tree")
    ap.add_argument("--pool", type=Path, help="time each round on the next of this folder's inputs-*.json (every round "
                    "another input: a value-dependent circuit's new signatures; with --snarkjs each timed witness is "
                    "checked against snarkjs's of that round)")
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "witness-vs-circom-cpp.json")
    args = ap.parse_args()
    sides = {"snarkd": REPO / "src"}
    for s in args.side:
        name, _, src = s.partition("=")
        sides[f"snarkd_{name}"] = Path(src).resolve()
    if args.runs < 7:
        ap.error("--runs must be >= 7")
    d = args.dir.resolve()
    wasm, inp = d / "circuit.wasm", d / "input.json"
    cpp_dir = d.with_name(d.name + "-cpp")
    build_s = build_cpp(d, cpp_dir)
    cpp = cpp_dir / "circuit_cpp" / "circuit"
    work = d / "bench-out"
    work.mkdir(exist_ok=True)
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: dict(base_env, PYTHONPATH=str(src)) for name, src in sides.items()}
    ours = snarkd_command()

    def snarkd(i: Path, o: Path, *more: str) -> list[str]:
        return [*ours, "witness", "--engine", "native", "--quiet", *more, str(wasm), str(i), str(o)]

    # byte identity on every input, each tool against snarkjs (the first native run also builds the program)
    checked = [inp, *sorted(d.glob("inputs-*.json"))]
    template = json.loads(inp.read_text())
    for k, extra in enumerate(random_inputs(template, args.inputs)):
        p = work / f"input-{k}.json"
        p.write_text(json.dumps(extra))
        checked.append(p)
    for i in checked:
        ref, n, c = work / "snarkjs.wtns", work / "native.wtns", work / "cpp.wtns"
        subprocess.run(["node", str(SNARKJS), "wtns", "calculate", str(wasm), str(i), str(ref)], check=True,
                       capture_output=True)
        for name, env in envs.items():
            n.unlink(missing_ok=True)
            subprocess.run(snarkd(i, n), check=True, env=env)
            assert n.read_bytes() == ref.read_bytes(), f"{i.name}: {name}'s witness differs from snarkjs's"
        subprocess.run([str(cpp), str(i), str(c)], check=True, capture_output=True)
        assert c.read_bytes() == ref.read_bytes(), f"{i.name}: the C++ generator's witness differs from snarkjs's"
    phases = {name: subprocess.run(snarkd(inp, work / "native.wtns", "--timings"), check=True, env=env,
                                   capture_output=True, text=True).stderr for name, env in envs.items()}

    pool = sorted(args.pool.resolve().glob("inputs-*.json"), key=lambda p: int(p.stem.split("-")[1])) if args.pool \
        else [inp]
    if args.pool and len(pool) < args.runs:
        ap.error(f"--pool {args.pool}: {len(pool)} inputs for {args.runs} runs")

    def tools_for(i: Path) -> dict:
        tools = {name: (snarkd(i, work / f"{name}.wtns"), env) for name, env in envs.items()}
        tools["circom_cpp"] = ([str(cpp), str(i), str(work / "circom_cpp.wtns")], base_env)
        if args.snarkjs:
            tools["snarkjs"] = (["node", str(SNARKJS), "wtns", "calculate", str(wasm), str(i),
                                 str(work / "snarkjs.wtns")], base_env)
        return tools

    tools = tools_for(inp)
    load_before = load()
    wall = {k: [] for k in tools}
    rss = {k: [] for k in tools}
    cpu = {k: [] for k in tools}
    timed_identical = []
    for k in range(args.runs):
        i = pool[k % len(pool)]
        for name, (cmd, env) in tools_for(i).items():
            s, r, c = timed(cmd, env)
            wall[name].append(s)
            rss[name].append(r)
            cpu[name].append(c)
        if args.snarkjs and args.pool:  # every timed witness of this round against snarkjs's
            ref = (work / "snarkjs.wtns").read_bytes()
            for name in tools:
                assert (work / f"{name}.wtns").read_bytes() == ref, f"{i.name}: {name}'s timed witness differs"
            timed_identical.append(i.name)
    load_after = load()
    med = {k: median_ms(v) for k, v in wall.items()}
    row = {
        "circuit": d.name,
        "wall_ms_median": med,
        "wall_ms_min": {k: round(min(v) * 1e3, 2) for k, v in wall.items()},
        "cpu_ms_median": {k: median_ms(v) for k, v in cpu.items()},
        "peak_rss_mib": {k: round(max(v) / 2**20, 1) for k, v in rss.items()},
        "over_cpp": {k: round(med[k] / med["circom_cpp"], 2) for k in envs},
        "over_cpp_cpu": {k: round(median_ms(cpu[k]) / median_ms(cpu["circom_cpp"]), 2) for k in envs},
        "snarkd_phases_ms": {k: {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
                                 if len(line.split()) == 3 and line.split()[2] == "ms"} for k, text in phases.items()},
        "cpp_build_s": round(build_s, 1) if build_s else "built earlier",
        "byte_identical_to_snarkjs": [p.name for p in checked],
        "timed_inputs": [pool[k % len(pool)].name for k in range(args.runs)],
        "timed_witnesses_identical_to_snarkjs": timed_identical,
        "runs_s": wall,
    }
    result = {
        "benchmark": "snarkd witness --engine native (program cached) vs circom's C++ witness generator, whole process",
        "runs": args.runs,
        "snarkd_command": ours[0],
        "snarkd_sources": {k: str(v) for k, v in sides.items()},
        "load_before": load_before,
        "load_after": load_after,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "cpu": cpu_name()},
        "results": [row],
    }
    for name in tools:
        print(f"{name:<14} median {med[name]:8.1f} ms  min {row['wall_ms_min'][name]:8.1f} ms  "
              f"CPU median {row['cpu_ms_median'][name]:8.1f} ms  peak RSS {row['peak_rss_mib'][name]:6.1f} MiB")
    print(f"over C++: {row['over_cpp']} (wall), {row['over_cpp_cpu']} (CPU) (medians of {args.runs}); snarkd phases {row['snarkd_phases_ms']}; "
          f"load {load_before} -> {load_after}; {cpu_name()}, {os.cpu_count()} cores")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
