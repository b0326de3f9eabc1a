"""The cost of building a compiled witness library (snarkd.witness.compiled.build, the product's code) from two or
more source trees, alternated: each build in a fresh child (`python -c` with PYTHONPATH=TREE/src), its wall time,
its CPU time (the child's and every compiler's it waited for: wait4) and the largest peak RSS of any one process in
it (with several compilers at once the machine's peak is up to their sum); the order reversed every other round.

    python bench/witness_compile_pair.py CIRCUIT.wasm ROUNDS NAME=TREE[:KEY=VALUE,...] ... [--json OUT.json]
        [--keep DIR]

KEY=VALUE pairs are build()'s keywords for that side (units=1, opt=-O2), an experiment's. --keep: the last
library of each side kept as DIR/NAME.wasm.wso. Prints per side the medians (and min) of wall, CPU and peak RSS.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

CHILD = r"""
import hashlib, json, sys
from snarkd.witness import compiled
wasm, dest, kw = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = open(wasm, "rb").read()
info = compiled.build(data, hashlib.sha256(data).hexdigest(), "bn128", [dest], name=wasm, **kw)
print(json.dumps(info))
"""


def one(tree: str, kw: dict, wasm: str, dest: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"))
    if os.path.exists(dest):
        os.unlink(dest)
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.execvpe(sys.executable, [sys.executable, "-c", CHILD, wasm, dest, json.dumps(kw)], env)
    os.close(w)
    with os.fdopen(r) as fh:
        out = fh.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if status:
        raise SystemExit(f"{tree}: build failed ({status})")
    info = json.loads(out.strip().splitlines()[-1])
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "bytes": info["bytes"], "units": info.get("units", 1)}


def main() -> int:
    args = sys.argv[1:]
    out_json = keep = None
    if "--json" in args:
        i = args.index("--json")
        out_json = args[i + 1]
        del args[i:i + 2]
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
        os.makedirs(keep, exist_ok=True)
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    wasm, rounds, sides = os.path.abspath(args[0]), int(args[1]), []
    for spec in args[2:]:
        name, _, rest = spec.partition("=")
        tree, _, opts = rest.partition(":")
        kw = {}
        for pair in filter(None, opts.split(",")):
            k, _, v = pair.partition("=")
            kw[k] = int(v) if v.isdigit() else v
        sides.append((name, os.path.abspath(tree), kw))
    rows = {name: [] for name, _, _ in sides}
    load = [os.getloadavg()[0]]
    import tempfile

    tmp = keep or tempfile.mkdtemp(prefix="wso-pair-")  # a private directory: the library is not kept in a shared one
    for r in range(rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for name, tree, kw in order:
            got = one(tree, kw, wasm, os.path.join(tmp, f"{name}.wasm.wso"))
            rows[name].append(got)
            print(f"round {r} {name}: {got}", file=sys.stderr, flush=True)
        load.append(os.getloadavg()[0])
    summary = {}
    for name, _, kw in sides:
        rs = rows[name]
        summary[name] = {k: {"median": round(statistics.median(x[k] for x in rs), 3), "min": min(x[k] for x in rs)}
                         for k in ("wall_s", "cpu_s", "peak_rss_mib")}
        summary[name].update(bytes=rs[-1]["bytes"], units=rs[-1]["units"], kw=kw)
        s = summary[name]
        print(f"{name:12s} wall {s['wall_s']['median']:7.2f} s (min {s['wall_s']['min']:.2f})  CPU "
              f"{s['cpu_s']['median']:7.2f} s (min {s['cpu_s']['min']:.2f})  peak RSS {s['peak_rss_mib']['median']:6.0f}"
              f" MiB  {s['bytes']} bytes  units {s['units']}")
    print(f"load (1 min) {min(load):.1f}-{max(load):.1f}")
    if out_json:
        with open(out_json, "w") as fh:
            json.dump({"wasm": wasm, "rounds": rounds, "load_1min": load, "summary": summary, "runs": rows}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
