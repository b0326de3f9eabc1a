"""Whole-process `snarkd prove` against rapidsnark's `prover` and `snarkjs groth16 prove`,
same key and witness, one run per circuit folder.

Tools run in rounds; each round runs every tool once, in an order rotated from
round to round (A B C, B C A, ...), so machine noise hits all of them alike.
Reported per tool: median wall time, median CPU time (user + system: steadier
than wall time on a shared machine), peak RSS (wait4 on the child), and for
snarkd its per-phase medians (--timings); per pair: the ratio of medians and the
median of the per-round ratios. Every tool's proof is checked once with
`snarkjs groth16 verify`. rapidsnark runs when RAPIDSNARK=/path/to/prover is set
(build it yourself, outside this repository).

    RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover \\
      python bench/prove_vs_rapidsnark.py --dir bench/work/chain16-bn128 --dir bench/work/sha256-bn128 \\
        --runs 7 --json bench/results/prove-vs-rapidsnark.json

A folder holds circuit.zkey, witness.wtns and vk.json (bench/make_chain_keys.py,
bench/make_sha256_key.py). --prepare builds snarkd's sidecar first (snarkd prepare).
--ifma off,on runs snarkd once per IFMA setting in the same rounds (off: the documented
SNARKD_CPU_IFMA=off, for the AVX2-class path on a CPU that has IFMA); --tree NAME=PATH runs another
snarkd checkout (its src/, built in place) in the same rounds, as snarkd-NAME; --verify-all checks
every timed proof with snarkjs, between runs; --note records free text (e.g. rapidsnark's
source commit) in the JSON. On a machine without Node.js (a device host) proofs are not checked there
("verified_by_snarkjs": null); --keep-proofs DIR copies each tool's first proof, its public values
and vk.json to DIR/FOLDER/ so that they can be checked with `snarkjs groth16 verify` elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from prove_vs_snarkjs import byte_compile, parse_timings, timed  # the same child-process timing (bench/ is on sys.path)

REPO = Path(__file__).resolve().parent.parent
SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"


def verify(vk: Path, public: Path, proof: Path) -> bool | None:
    """snarkjs's verdict; None where this machine has no Node.js (not checked here)."""
    if shutil.which("node") is None:
        return None
    res = subprocess.run(["node", str(SNARKJS), "groth16", "verify", str(vk), str(public), str(proof)],
                         capture_output=True, text=True)
    return res.returncode == 0 and "OK" in res.stdout


def key_info(zkey: Path) -> dict:
    """Header values, read without numpy or mapping the bulk sections: the children's peak
    RSS (ru_maxrss) starts from this process's size when they are forked, so it stays small."""
    from snarkd.formats.binfile import BinFile
    from snarkd.formats.zkey_layout import read_layout

    with BinFile.open(zkey, b"zkey", (1,)) as bf:
        lay = read_layout(bf)
        return {"curve": lay.curve.name, "n_vars": lay.n_vars, "n_public": lay.n_public,
                "domain_size": lay.domain_size, "zkey_mib": bf.nbytes / 2**20}


def snarkd_env(ifma: str) -> dict:
    """The child's environment for one IFMA setting: "on" leaves SNARKD_CPU_IFMA unset (auto), "off"
    sets the documented SNARKD_CPU_IFMA=off."""
    env = {k: v for k, v in os.environ.items() if k != "SNARKD_CPU_IFMA"}
    if ifma == "off":
        env["SNARKD_CPU_IFMA"] = "off"
    return env


def bench_dir(d: Path, runs: int, threads: int, with_snarkjs: bool, rapidsnark: str | None, prepare: bool,
              ifma: list[str] | None = None, verify_all: bool = False, trees: dict[str, Path] | None = None,
              keep: Path | None = None) -> dict:
    zkey, wtns, vk = d / "circuit.zkey", d / "witness.wtns", d / "vk.json"
    info = key_info(zkey)
    tmp = Path(tempfile.mkdtemp(prefix="snarkd-vs-"))
    if prepare:
        subprocess.run([sys.executable, "-m", "snarkd", "prepare", str(zkey)], check=True, capture_output=True)
    tools: dict[str, tuple[list[str], dict | None]] = {}  # name -> (command, environment); proofs in tmp/NAME_{p,q}.json

    def out(name: str) -> list[str]:
        return [str(tmp / f"{name}_p.json"), str(tmp / f"{name}_q.json")]

    for tree, src in {"": None, **(trees or {})}.items():  # "": the snarkd this interpreter imports
        for mode in ifma or [None]:
            name = "snarkd" + (f"-{tree}" if tree else "") + ("" if mode is None else f"-ifma-{mode}")
            cmd = [sys.executable, "-m", "snarkd", "prove", str(zkey), str(wtns), *out(name), "--timings"]
            if threads:
                cmd += ["--threads", str(threads)]
            env = None if mode is None else snarkd_env(mode)
            if src is not None:
                env = {**(env or os.environ), "PYTHONPATH": str(src)}
            tools[name] = (cmd, env)
    if rapidsnark:
        tools["rapidsnark"] = ([rapidsnark, str(zkey), str(wtns), *out("rapidsnark")], None)
    if with_snarkjs:
        tools["snarkjs"] = (["node", str(SNARKJS), "groth16", "prove", str(zkey), str(wtns), *out("snarkjs")], None)
    names = list(tools)
    mine = [n for n in names if n.startswith("snarkd")]

    def check(name: str) -> bool:
        return verify(vk, tmp / f"{name}_q.json", tmp / f"{name}_p.json")

    verified = {}
    for name in names:  # warm the page cache; check each tool's proof once
        timed(*tools[name])
        verified[name] = check(name)
        if keep is not None:
            (keep / d.name).mkdir(parents=True, exist_ok=True)
            for part in ("p", "q"):
                shutil.copy(tmp / f"{name}_{part}.json", keep / d.name / f"{name}_{part}.json")
            shutil.copy(vk, keep / d.name / "vk.json")
    n_verified = {n: int(bool(verified[n])) for n in names}  # None: no Node.js here (checked elsewhere)
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    rss = {n: [] for n in names}
    phases = {n: [] for n in mine}
    load = [os.getloadavg()[0]]
    for i in range(runs):
        order = names[i % len(names):] + names[: i % len(names)]
        for name in order:
            w, r, err, c = timed(*tools[name])
            wall[name].append(w)
            cpu[name].append(c)
            rss[name].append(r)
            if name in mine:
                phases[name].append(parse_timings(err))
            if verify_all:  # after the timed child has exited: the check runs between, not beside, timings
                ok = check(name)
                verified[name] = None if ok is None else verified[name] and ok
                n_verified[name] += int(bool(ok))
        load.append(os.getloadavg()[0])
        print(f"{d.name} round {i + 1}/{runs} (load {load[-1]:.2f}): " + "  ".join(f"{n} {wall[n][-1]:.3f}s" for n in names),
              file=sys.stderr)
    med = {n: statistics.median(wall[n]) for n in names}
    res = {
        "dir": str(d), **info, "runs": runs, "threads": threads or os.cpu_count(), "prepared_sidecar": prepare,
        "load_average_1min_per_round": load,  # first entry before round 1
        "load_average_median": statistics.median(load),
        "verified_by_snarkjs": verified,
        "proofs_verified": n_verified,  # the warm-up proof plus, with --verify-all, every timed one
        "wall_s": wall,
        "median_s": med,
        "cpu_s": cpu,  # user + system of the process: less sensitive to a loaded machine than wall time
        "median_cpu_s": {n: statistics.median(cpu[n]) for n in names},
        "peak_rss_mib": {n: max(rss[n]) / 2**20 for n in names},
        "median_rss_mib": {n: statistics.median(rss[n]) / 2**20 for n in names},
        "snarkd_phase_median_ms": {n: {k: statistics.median(p.get(k, 0.0) for p in ph) for k in ph[0]} for n, ph in phases.items() if ph},
    }
    ratios = {}
    for m in mine:
        for other in (n for n in names if n not in mine):
            per_round = [a / b for a, b in zip(wall[m], wall[other])]
            ratios[f"{m}/{other}"] = {"ratio_of_medians": med[m] / med[other], "median_of_round_ratios": statistics.median(per_round),
                                      "cpu_ratio_of_medians": statistics.median(cpu[m]) / statistics.median(cpu[other])}
    res["ratios"] = ratios
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, action="append", required=True, help="circuit folder (repeatable)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--no-snarkjs", action="store_true", help="leave snarkjs out (slow on big circuits)")
    ap.add_argument("--prepare", action="store_true", help="build snarkd's prepared sidecar first")
    ap.add_argument("--ifma", help="comma list of off,on: snarkd once per setting (off: SNARKD_CPU_IFMA=off), "
                    "all in the same rotated rounds")
    ap.add_argument("--verify-all", action="store_true", help="check every timed proof with snarkjs, not only the first")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                    help="another snarkd checkout (built in place) run in the same rounds, e.g. the base of a change")
    ap.add_argument("--note", default="", help="free text kept in the JSON (rapidsnark's commit, what else ran)")
    ap.add_argument("--keep-proofs", type=Path, metavar="DIR",
                    help="copy each tool's first proof, public values and vk.json to DIR/FOLDER/ (to check elsewhere)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    ifma = args.ifma.split(",") if args.ifma else None
    if ifma and not set(ifma) <= {"off", "on"}:
        print(f"--ifma {args.ifma}: each setting must be off or on", file=sys.stderr)
        return 2
    rapidsnark = os.environ.get("RAPIDSNARK") or None
    if rapidsnark and not os.access(rapidsnark, os.X_OK):
        print(f"RAPIDSNARK={rapidsnark}: not an executable", file=sys.stderr)
        return 2
    trees = {name: Path(path).resolve() / "src" for name, path in (t.split("=", 1) for t in args.tree)}
    for src in [None, *trees.values()]:
        byte_compile(src)  # snarkd's modules as pip installs them: none compiled inside a timed process
    results = [bench_dir(d, args.runs, args.threads, not args.no_snarkjs, rapidsnark, args.prepare, ifma, args.verify_all,
                         trees, args.keep_proofs) for d in args.dir]
    doc = {"machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus", "cpu": cpu_name(),
           "rapidsnark": rapidsnark, "note": args.note, "snarkd_bytecode": "compiled before timing", "results": results}
    print(json.dumps(doc, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0 if all(v is not False for r in results for v in r["verified_by_snarkjs"].values()) else 1


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
