#!/usr/bin/env python3
"""The engine over several GPUs: throughput with devices [0] vs [0, 1] on one key.

    python bench/multi_gpu.py run [--power 20 | --key-dir bench/work/chain16-bn128] --out DIR
    python bench/multi_gpu.py verify DIR        (here, with node: every saved proof through snarkjs)

`run` (on the GPU machine): checks the build (native core imports, prebuilt
cubins match the current kernel sources), makes a chain key of 2^power when
asked (snarkd setup), builds W distinct valid witnesses
(k = 3, 4, ...; public = [out, k]), then for each device set runs the in-process
engine (g2_on_device, self_verify) with c jobs kept in flight: warm-up, then N
timed proofs. Per run: s/proof, proofs/s, per-device busy fraction (device-lock
time per device / wall, from the engine and from the per-proof device spans),
nvidia-smi utilization samples, and per proof the device index, the witness,
and whether public[1] == that witness's k (a cross-job mix-up would break it).
Writes DIR/multi_gpu.json, DIR/proofs-d<devices>-j<j>.json per run (proof + public +
device per proof) and DIR/vk.json (for `verify`). The summary compares the fastest
1-device run with the fastest 2-device run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

K0, X0 = 3, 2  # witness i: k = K0 + i, x = X0 + i

def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------- setup


def build_check() -> dict:
    out: dict = {}
    from snarkd.native import _core  # noqa: F401

    out["native_core"] = _core.__file__
    from snarkd.config import default
    from snarkd.gpu import module as gm
    from snarkd.gpu.device import device_count

    out["device_count"] = device_count()
    pre = default("gpus.cubin_dir")
    out["kernel_source_hash"] = gm.source_hash()
    out["cubins"] = {c: (Path(pre) / gm.cubin_name(c, "90")).is_file() if pre else False for c in gm.MACROS}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,memory.total,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except Exception as e:  # noqa: BLE001
        smi = [f"nvidia-smi failed: {e}"]
    out["gpus"] = smi
    out["cpus"] = os.cpu_count()
    out["python"] = platform.python_version()
    return out


def make_key(power: int, out_root: Path) -> Path:
    from snarkd.curves.params import curve_by_name
    from snarkd.setup import groth16_setup as gs
    from snarkd.setup.chain_circuit import chain_r1cs_bytes

    curve = curve_by_name("bn128")
    d = out_root / f"chain{power}-bn128"
    d.mkdir(parents=True, exist_ok=True)
    n = (1 << power) - 3
    t0 = time.perf_counter()
    (d / "circuit.r1cs").write_bytes(chain_r1cs_bytes(n, curve))
    res = gs.setup(d / "circuit.r1cs", d / "circuit.zkey", None, seed=gs.parse_seed("5eed"))
    log(f"key 2^{power}: r1cs + setup {time.perf_counter() - t0:.1f}s (setup {res.seconds['total']:.1f}s)")
    return d


def witnesses(zkey_path: Path, count: int) -> list:
    from snarkd.formats.wtns import parse_wtns
    from snarkd.formats.zkey import read_zkey
    from snarkd.setup.chain_circuit import chain_witness, wtns_bytes

    z = read_zkey(zkey_path)
    curve, n = z.curve, z.n_vars - 3
    z.close()
    out = []
    for i in range(count):
        out.append(parse_wtns(wtns_bytes(chain_witness(n, curve, K0 + i, X0 + i), curve), f"chain k={K0 + i}"))
    return out


def write_vk(zkey_path: Path, dest: Path) -> None:
    from snarkd.formats.zkey import read_zkey, vk_json

    z = read_zkey(zkey_path)
    try:
        vk = vk_json(z, alphabeta=False)
    finally:
        z.close()
    dest.write_text(json.dumps(vk, indent=1))


# ---------------------------------------------------------------------------- one engine run


class SmiSampler:
    """nvidia-smi utilization.gpu samples (percent) per GPU, every 100 ms, while running."""

    def __init__(self):
        self.samples: dict[int, list[int]] = {}
        self.proc = None

    def __enter__(self):
        try:
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits",
                                          "-lms", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.t = threading.Thread(target=self._read, daemon=True)
            self.t.start()
        except Exception:  # noqa: BLE001
            self.proc = None
        return self

    def _read(self):
        for line in self.proc.stdout:
            try:
                i, u = (int(x) for x in line.strip().split(","))
                self.samples.setdefault(i, []).append(u)
            except ValueError:
                pass

    def __exit__(self, *a):
        if self.proc is not None:
            self.proc.terminate()  # our own child, by handle
            try:
                self.proc.wait(5)
            except Exception:  # noqa: BLE001
                self.proc.kill()

    def summary(self) -> dict:
        return {str(i): {"n": len(v), "mean_util_pct": sum(v) / len(v) if v else None} for i, v in sorted(self.samples.items())}


def run_engine(zkey: Path, ws: list, devices: tuple, *, j: int, wpd: int, fin: int, threads: int, c: int, n: int,
               warm: int) -> tuple[dict, list]:
    from snarkd.engine.engine import Engine, EngineConfig

    cfg = EngineConfig(synthesis_workers=j, threads=threads, devices=tuple(devices), workers_per_device=wpd,
                       finalize_workers=fin, memory_budget=96 << 30, g2_on_device=True, self_verify=True)
    eng = Engine(cfg)
    eng.keys.load("k", str(zkey))
    eng.start()
    label = f"{len(devices)}dev" if devices else "cpu"
    try:
        def drive(count: int, offset: int):
            jobs, inflight, i = [], [], 0
            while i < count or inflight:
                while i < count and len(inflight) < c:
                    wi = (offset + i) % len(ws)
                    job = eng.submit("k", witnesses=[ws[wi]])
                    jobs.append((wi, job))
                    inflight.append(job)
                    i += 1
                inflight[0].done.wait(600)
                inflight = [x for x in inflight if not x.done.is_set()]
            return jobs

        t0 = time.monotonic()
        drive(warm, 0)  # key upload per device, modules, NTT domains, pools
        t_warm = time.monotonic() - t0
        busy0 = {d.name: d.busy_s for d in eng.status().devices}
        with SmiSampler() as smi:
            t0 = time.monotonic()
            jobs = drive(n, warm)
            wall = time.monotonic() - t0
        busy1 = {d.name: d.busy_s for d in eng.status().devices}
        st = eng.status()
    finally:
        eng.stop(10)
        eng.join_workers(20)
    proofs, per_dev, mixups, failed = [], {}, [], []
    dev_ms: dict[str, float] = {}
    for wi, job in jobs:
        if job.state != "COMPLETED":
            failed.append({"job": job.id, "state": job.state, "error": job.error})
            continue
        p = job.partitions[0]
        dev = sorted({s["worker"].split("/")[0] for s in p.spans if s["stage"] == "device"})
        d = dev[0] if len(dev) == 1 else ",".join(dev)
        per_dev[d] = per_dev.get(d, 0) + 1
        dev_ms[d] = dev_ms.get(d, 0.0) + p.timings.get("device", 0.0)
        pub = job.result.public
        if int(pub[1]) != K0 + wi:
            mixups.append({"job": job.id, "witness": wi, "public": pub, "device": d})
        proofs.append({"job": job.id, "witness": wi, "device": d, "proof": job.result.proof, "public": pub,
                       "timings_ms": {k: round(v, 2) for k, v in p.timings.items()}})
    tm = [x["timings_ms"] for x in proofs]

    def mean(k):
        v = [t[k] for t in tm if k in t]
        return round(sum(v) / len(v), 2) if v else None

    res = {
        "label": label, "devices": list(devices), "synthesis_workers": j, "workers_per_device": wpd,
        "finalize_workers": fin, "threads": threads, "inflight_c": c, "proofs": n, "warmup_proofs": warm,
        "warmup_s": round(t_warm, 3), "wall_s": round(wall, 4), "s_per_proof": round(wall / n, 5),
        "proofs_per_s": round(n / wall, 3), "completed": len(proofs), "failed": failed, "mixups": mixups,
        "self_verify_failed": st.jobs.self_verify_failed,
        "proofs_per_device": per_dev,
        "busy_fraction_engine": {k: round((busy1[k] - busy0.get(k, 0.0)) / wall, 4) for k in busy1},
        "busy_fraction_spans": {k: round(v / 1000 / wall, 4) for k, v in dev_ms.items()},
        "nvidia_smi_util": smi.summary(),
        "mean_ms": {k: mean(k) for k in ("synthesis", "device_queue", "device_wait", "device", "ntt", "msm_h", "msm_a",
                                         "msm_b1", "msm_c", "msm_b2", "finalize", "verify", "total")},
    }
    return res, proofs


# ---------------------------------------------------------------------------- main


def cmd_run(a) -> int:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    result: dict = {"benchmark": "engine over 1 vs 2 GPUs (bench/multi_gpu.py)", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "build": build_check()}
    log(f"build: {result['build']}")

    def save():
        (out / "multi_gpu.json").write_text(json.dumps(result, indent=1))

    save()
    if a.key_dir:
        kd = Path(a.key_dir)
    else:
        kd = make_key(a.power, Path(a.key_root))
    zkey = kd / "circuit.zkey"
    write_vk(zkey, out / "vk.json")
    t0 = time.perf_counter()
    ws = witnesses(zkey, a.witnesses)
    log(f"{len(ws)} witnesses in {time.perf_counter() - t0:.1f}s")
    from snarkd.formats.zkey import read_zkey

    z = read_zkey(zkey)
    result["key"] = {"path": str(zkey), "domain_size": z.domain_size, "n_vars": z.n_vars, "curve": z.curve.name,
                     "bytes": zkey.stat().st_size}
    z.close()
    ndev = result["build"]["device_count"]
    sets = [() if s == "cpu" else tuple(int(x) for x in s.split(",")) for s in a.device_sets.split(";")]
    sets = [s for s in sets if not s or max(s) < ndev]
    result["runs"] = []
    best: dict[int, dict] = {}
    for devs in sets:
        for j in [int(x) for x in a.j.split(",")]:
            nd = max(1, len(devs))
            c = a.c or 4 * a.wpd * nd + j
            n = a.n_per_device * nd
            log(f"run devices={devs} j={j} wpd={a.wpd} c={c} n={n}")
            res, proofs = run_engine(zkey, ws, devs, j=j, wpd=a.wpd, fin=a.fin, threads=a.threads, c=c, n=n,
                                     warm=a.warm * nd)
            log(json.dumps({k: res[k] for k in ("label", "s_per_proof", "proofs_per_s", "busy_fraction_engine",
                                                "proofs_per_device", "completed", "mixups", "mean_ms")}))
            # one file per run (the device machine returns at most 8 files: keep runs x j small)
            res["proof_file"] = f"proofs-d{'-'.join(map(str, devs)) or 'cpu'}-j{j}.json"
            (out / res["proof_file"]).write_text(json.dumps(proofs))
            result["runs"].append(res)
            b = best.get(len(devs))
            if b is None or res["proofs_per_s"] > b["proofs_per_s"]:
                best[len(devs)] = res
            save()
    if 1 in best and 2 in best:
        result["summary"] = {
            "s_per_proof_1dev": best[1]["s_per_proof"], "s_per_proof_2dev": best[2]["s_per_proof"],
            "speedup_2_vs_1": round(best[2]["proofs_per_s"] / best[1]["proofs_per_s"], 3), "target": 1.8,
            "busy_fraction_1dev": best[1]["busy_fraction_engine"], "busy_fraction_2dev": best[2]["busy_fraction_engine"],
            "best_configs": {k: {x: v[x] for x in ("synthesis_workers", "workers_per_device", "inflight_c")}
                             for k, v in best.items()},
        }
        log(f"summary: {result['summary']}")
    save()
    return 0


VERIFY_JS = r"""
const snarkjs = require(process.argv[2]);
const fs = require("fs");
(async () => {
  const vk = JSON.parse(fs.readFileSync(process.argv[3]));
  let ok = 0, bad = [];
  for (const f of process.argv.slice(4)) {
    const items = JSON.parse(fs.readFileSync(f));
    for (const it of items) {
      const v = await snarkjs.groth16.verify(vk, it.public, it.proof, {info() {}, debug() {}, warn() {}, error: console.error});
      if (v) ok++; else bad.push([f, it.job, it.device]);
    }
  }
  console.log(JSON.stringify({ok, bad}));
  process.exit(bad.length ? 1 : 0);
})();
"""


def cmd_verify(a) -> int:
    d = Path(a.dir)
    files = sorted(str(p) for p in d.glob("proofs-*.json"))
    snarkjs = str(REPO / "node_modules" / "snarkjs")
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(VERIFY_JS)
    proc = subprocess.run(["node", f.name, snarkjs, str(d / "vk.json"), *files], capture_output=True, text=True)
    os.unlink(f.name)
    print(proc.stdout.strip(), proc.stderr.strip()[-2000:])
    # one more through the CLI, as the issue asks (`snarkjs groth16 verify`), per file
    for fn in files:
        it = json.loads(Path(fn).read_text())[0]
        with tempfile.TemporaryDirectory() as td:
            Path(td, "proof.json").write_text(json.dumps(it["proof"]))
            Path(td, "public.json").write_text(json.dumps(it["public"]))
            cli = subprocess.run(["node", str(REPO / "node_modules" / ".bin" / "snarkjs"), "groth16", "verify",
                                  str(d / "vk.json"), f"{td}/public.json", f"{td}/proof.json"], capture_output=True, text=True)
            print(Path(fn).name, "first proof, snarkjs CLI:", cli.stdout.strip().splitlines()[-1:] or cli.stderr[-500:])
    return proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--power", type=int, default=20, help="make a bn128 chain key of domain 2^power (default 20)")
    r.add_argument("--key-dir", default="", help="use this key folder (circuit.zkey) instead of making one")
    r.add_argument("--key-root", default="/tmp/keys")
    r.add_argument("--device-sets", default="0;0,1")
    r.add_argument("--j", default="8", help="synthesis workers, comma list (each tried)")
    r.add_argument("--wpd", type=int, default=2, help="workers per device")
    r.add_argument("--fin", type=int, default=4, help="finalize workers")
    r.add_argument("--threads", type=int, default=4, help="native threads per stage call")
    r.add_argument("--c", type=int, default=0, help="jobs in flight (0: 4 x device workers + j)")
    r.add_argument("--n-per-device", type=int, default=48)
    r.add_argument("--warm", type=int, default=6, help="warm-up proofs per device")
    r.add_argument("--witnesses", type=int, default=4)
    r.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    v = sub.add_parser("verify")
    v.add_argument("dir")
    a = ap.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_verify(a)


if __name__ == "__main__":
    sys.exit(main())
