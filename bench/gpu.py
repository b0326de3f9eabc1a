#!/usr/bin/env python3
"""GPU benchmarks (CUDA events, medians after warm-up), results in bench/results/gpu-<tag>.json.

    python bench/gpu.py [--curves bn254,bls12_381] [--min 16] [--max 24] [--what ntt,h,g1,g2,prove]
                        [--reps 5] [--c 0] [--tag h200] [--out DIR] [--zkey PATH --wtns PATH]

ntt    natural-order NTT of 2^k Fr (bit reversal + DIT passes)
h      the whole H computation on a 2^k domain (c = a*b, 3 x (iNTT, shift, NTT), a*b - c)
g1/g2  MSM of 2^k points with random scalars; bases are random field elements
       (the cost of an add does not depend on the point being on the curve;
       results are not checked here -- tests/gpu checks correctness)
prove  the device stage of a proof at domain 2^k with n_vars = 2^k (synthetic
       key, resident): upload w, a, b; H; MSMs A, B1, C, H; G2 MSM B2
--zkey/--wtns: a real proof with the key resident: cpu vs cuda, checked equal; with --bits, also the device
       stage (synthesis + MSMs) with the key's witness beside a random witness of the same length (its share of
       0/1 values stated): what a hashing circuit's bit scalars save on the GPU, on a real key.
--variants "name=MACRO,MACRO;name2=seg_l2=8": after each default MSM timing, the same
       MSM (same inputs, same table) with a kernel variant (extra macros; prebuilt
       cubins from module.py build DIR MACRO..., else NVRTC) or another gpu.msm.Plan
       (FIELD=int, e.g. seg_l2=8), then the default again: side by side.
--define: run everything with that kernel variant instead of the default (GpuDevice's defines).
--ntt-radix 1: ntt and h also with NttDomain radix_log 1 (radix-2 passes), then the default again.
--bits 0.95,1: after each random-scalar MSM, the same bases with that fraction of the scalars 0 or 1 (half
       each; the rest random), as witnesses of hashing circuits are (SHA-256: 0/1 nearly everywhere): what
       bit scalars cost the GPU's MSM, whose digit sort drops zero digits (a 1 is one bucket addition).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

import cupy  # noqa: E402

from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.gpu import msm as gmsm  # noqa: E402
from snarkd.gpu import ntt as gntt  # noqa: E402
from snarkd.gpu.module import CURVES  # noqa: E402


def timed(fn, reps: int, warm: int = 1) -> dict:
    for _ in range(warm):
        fn()
    cupy.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cupy.cuda.get_elapsed_time(s, e))
    return {"median_ms": statistics.median(ts), "min_ms": min(ts), "max_ms": max(ts), "reps": reps}


def rand_words(rng, n_elems: int, words: int, modulus: int) -> "cupy.ndarray":
    """n random values < modulus, each `words` u32 words (numpy, vectorised by top-word clipping)."""
    a = rng.integers(0, 1 << 32, size=(n_elems, words), dtype=np.uint64).astype(np.uint32)
    top = (modulus >> (32 * (words - 1))) & 0xFFFFFFFF
    a[:, -1] %= max(top, 1)  # < modulus's top word -> value < modulus
    return cupy.asarray(a.reshape(-1))


def rand_coords(rng, n, curve, coords):
    nq = curve.n8q // 4
    x = rand_words(rng, n * coords, nq, curve.q)
    return x


_variant_mods: dict = {}
PLAN_FIELDS = {f.name for f in dataclasses.fields(gmsm.Plan)}


def parse_variants(text: str) -> list[tuple[str, tuple, gmsm.Plan]]:
    """"name=WORD,WORD;..." -> (name, kernel macros, MSM plan) each: a word FIELD=int sets that gpu.msm.Plan
    field (case-insensitive: SEG_L2=8 = seg_l2=8), any other word is a macro for the kernels' compiler."""
    out = []
    for spec in filter(None, text.split(";")):
        vname, _, words = spec.partition("=")
        defines, plan = [], {}
        for m in filter(None, words.split(",")):
            name, eq, value = m.partition("=")
            if eq and name.lower() in PLAN_FIELDS:
                plan[name.lower()] = int(value)
            else:
                defines.append(m)
        out.append((vname, tuple(defines), dataclasses.replace(gmsm.PLAN, **plan)))
    return out


def side_by_side(add, cname: str, k: int, op: str, variants, reps: int, run, mod, gpu) -> None:
    """For each variant: the default, the variant, the default again (same inputs), one row each.
    run(module, stats, plan) times one MSM."""
    from snarkd.gpu import module as gmodule

    for vname, defines, plan in variants:
        vmod = mod
        if defines:
            key = (cname, defines)
            if key not in _variant_mods:
                _variant_mods[key] = gmodule.load(cname, gpu.compute_capability, gpu.cubin_dir, gpu.defines + defines)
            vmod = _variant_mods[key]
        for label, m, p in (("default", mod, gmsm.PLAN), (vname, vmod, plan), ("default", mod, gmsm.PLAN)):
            st = {}
            t = timed(lambda: run(m, st, p), reps)
            add({"curve": cname, "op": op, "log_n": k, "variant": label, "vs": vname, **t, **st})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--min", type=int, default=16)
    ap.add_argument("--max", type=int, default=24)
    ap.add_argument("--step", type=int, default=2)
    ap.add_argument("--what", default="ntt,h,g1,g2,prove")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--c", type=int, default=0, help="MSM window bits (0 = default rule)")
    ap.add_argument("--g2-max", type=int, default=22)
    ap.add_argument("--table-c", default="", help="also time MSMs over precomputed window tables with these c (comma list; 0 = default c)")
    ap.add_argument("--table-max-gib", type=float, default=40.0)
    ap.add_argument("--tag", default="h200")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--zkey")
    ap.add_argument("--wtns")
    ap.add_argument("--variants", default="")
    ap.add_argument("--variant-max", type=int, default=24, help="largest log_n timed with the variants")
    ap.add_argument("--variant-curves", default="bn254,bls12_381", help="curves timed with the variants")
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--bits", default="", help="also time MSMs whose scalars are this fraction 0/1 (comma list)")
    ap.add_argument("--ntt-radix", default="", help="also time ntt and h with these NttDomain radix_log values "
                    "(comma list), each followed by the default again")
    args = ap.parse_args()
    variants = parse_variants(args.variants)
    what = set(args.what.split(","))
    ntt_radixes = [None]
    for r in filter(None, args.ntt_radix.split(",")):
        ntt_radixes += [int(r), None]
    table_cs = [int(x) for x in args.table_c.split(",") if x.strip()]
    rng = np.random.default_rng(1)
    from snarkd.config import default

    gpu = gdevice.get(0, cubin_dir=default("gpus.cubin_dir"), defines=tuple(args.define))
    gpu.use()

    def domain(cname: str, k: int, radix):
        """The device's NTT domain, or one with radix_log `radix` (None: the default)."""
        return gpu.ntt_domain(cname, k) if radix is None else gntt.NttDomain(gpu.module(cname), cname, k, radix)

    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    res = {"device": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
           "sms": props["multiProcessorCount"], "host": platform.node(), "time": time.strftime("%Y-%m-%d %H:%M:%S"),
           "c": args.c or "auto", "defines": list(args.define),
           "variants": args.variants, "rows": []}
    rows = res["rows"]

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"gpu-{args.tag}.json"

    def add(row):
        rows.append(row)
        print(json.dumps(row), flush=True)
        path.write_text(json.dumps(res, indent=1))

    sizes = list(range(args.min, args.max + 1, args.step))
    if args.max not in sizes:
        sizes.append(args.max)
    for cname in args.curves.split(","):
        curve = CURVES[cname]
        for k in sizes:
            n = 1 << k
            if "ntt" in what:
                dom = gpu.ntt_domain(cname, k)
                x = rand_words(rng, n, 8, curve.r)
                out = cupy.empty_like(x)
                for radix in ntt_radixes:  # each radix in turn, then the default again (side by side)
                    d = domain(cname, k, radix)
                    add({"curve": cname, "op": "ntt", "log_n": k, "ntt_radix_log": d.radix_log,
                         **timed(lambda: d.ntt(x, False, out), args.reps)})
                add({"curve": cname, "op": "coset_shift", "log_n": k, **timed(lambda: dom.coset_shift_evals(x), args.reps)})
                del x, out
            if "h" in what:
                dom = gpu.ntt_domain(cname, k)
                a = rand_words(rng, n, 8, curve.r)
                b = rand_words(rng, n, 8, curve.r)
                for radix in ntt_radixes:
                    d = domain(cname, k, radix)
                    add({"curve": cname, "op": "h", "log_n": k, "ntt_radix_log": d.radix_log,
                         **timed(lambda: d.h_values(a.copy(), b.copy()), args.reps)})
                del a, b
            for g, g2 in (("g1", False), ("g2", True)):
                if g not in what or (g2 and k > args.g2_max):
                    continue
                bases = rand_coords(rng, n, curve, 4 if g2 else 2)
                sc = rand_words(rng, n, 8, curve.r)
                st = {}
                mod = gpu.module(cname)
                t = timed(lambda: gmsm.msm_window_sums(mod, cname, g2, bases, sc, n, args.c, st), args.reps)
                add({"curve": cname, "op": f"msm_{g}", "log_n": k, **t, **st})
                for frac in [float(f) for f in args.bits.split(",") if f.strip()]:
                    words = sc.get().reshape(n, 8)
                    pick = rng.random(n) < frac
                    words[pick] = 0
                    words[pick, 0] = rng.integers(0, 2, size=int(pick.sum()), dtype=np.uint32)
                    bits = cupy.asarray(words.reshape(-1))
                    st = {}
                    t = timed(lambda: gmsm.msm_window_sums(mod, cname, g2, bases, bits, n, args.c, st), args.reps)
                    add({"curve": cname, "op": f"msm_{g}_bits", "log_n": k, "bit_fraction": frac, **t, **st})
                    del bits, words
                if k <= args.variant_max and cname in args.variant_curves:
                    side_by_side(add, cname, k, f"msm_{g}", variants, args.reps,
                                 lambda m, st, p: gmsm.msm_window_sums(m, cname, g2, bases, sc, n, args.c, st, plan=p),
                                 mod, gpu)
                for tc in table_cs:
                    if gmsm.WindowTable.bytes_for(cname, g2, n, tc) > args.table_max_gib * (1 << 30):
                        continue
                    t0 = time.perf_counter()
                    tab = gpu.window_table(cname, g2, bases, n, tc)
                    cupy.cuda.Device().synchronize()
                    build_ms = (time.perf_counter() - t0) * 1e3
                    st = {}
                    t = timed(lambda: gmsm.msm_window_sums(mod, cname, g2, bases, sc, n, 0, st, tab), args.reps)
                    add({"curve": cname, "op": f"msm_{g}_table", "log_n": k, **t, **st, "table_build_ms": round(build_ms, 1),
                         "table_gib": round(tab.nbytes / (1 << 30), 2)})
                    if k <= args.variant_max and cname in args.variant_curves:
                        side_by_side(add, cname, k, f"msm_{g}_table", variants, args.reps,
                                     lambda m, st, p: gmsm.msm_window_sums(m, cname, g2, bases, sc, n, 0, st, tab, plan=p),
                                     mod, gpu)
                    del tab
                del bases, sc
            if "prove" in what and k <= args.g2_max:
                g1b = [rand_coords(rng, n, curve, 2) for _ in range(4)]
                g2b = rand_coords(rng, n, curve, 4)
                w = np.asarray(rand_words(rng, n, 8, curve.r).get())
                a_h = np.asarray(rand_words(rng, n, 8, curve.r).get())
                b_h = np.asarray(rand_words(rng, n, 8, curve.r).get())
                dom = gpu.ntt_domain(cname, k)
                dm, mod = gpu.memory, gpu.module(cname)

                def stage():
                    wd = dm.upload(w)
                    a, b = dm.upload(a_h), dm.upload(b_h)
                    h = dom.h_values(a, b)
                    for bases, sc in ((g1b[0], h), (g1b[1], wd), (g1b[2], wd), (g1b[3], wd)):
                        gmsm.msm_window_sums(mod, cname, False, bases, sc, n)
                    gmsm.msm_window_sums(mod, cname, True, g2b, wd, n)

                add({"curve": cname, "op": "prove_device_stage", "log_n": k, **timed(stage, max(3, args.reps // 2))})
                del g1b, g2b
            cupy.get_default_memory_pool().free_all_blocks()
    if args.zkey:
        from snarkd.formats.wtns import read_wtns
        from snarkd.prover import groth16
        from snarkd.prover.backend import get_backend
        from snarkd.prover.proving_key import ProvingKey
        from snarkd.prover.timing import PhaseTimer

        key = ProvingKey.load(args.zkey)
        wt = read_wtns(args.wtns)
        be = get_backend("cuda")
        be.dev.resident(key.zkey, be.msm_tables)
        rs = (12345, 67890)
        for name, backend, spmv_dev in (("cpu", "cpu", False), ("cuda", be, False), ("cuda_spmv", be, True)):
            times = []
            for _ in range(3):
                timer = PhaseTimer()
                t0 = time.perf_counter()
                synth = groth16.synthesize(key, wt, timer)
                if spmv_dev:
                    synth.a = synth.b = None
                sums = groth16.device_stage(key, synth, timer, 0, with_g2=backend != "cpu", backend=backend)
                proof = groth16.finalize(key, synth.witness, sums, timer, 0, *rs)
                times.append((time.perf_counter() - t0) * 1e3)
            if name == "cpu":
                ref = proof.proof
            else:
                assert proof.proof == ref, f"{name} proof differs from cpu"
            add({"curve": key.curve.native, "op": f"prove_{name}", "zkey": os.path.basename(args.zkey), "domain": key.domain_size,
                 "median_ms": statistics.median(times), "phases_ms": {k2: round(v, 2) for k2, v in timer.ms.items()}, "equal_to_cpu": True})
            if name == "cuda":
                Path(os.environ.get("OUT", "/tmp")).joinpath(f"proof-{key.curve.name}.json").write_text(json.dumps(proof.proof, indent=1))
        if args.bits:  # the key's own witness beside a random one of the same length: what its 0/1 values save
            vals = wt.values
            small = int(np.count_nonzero((vals[:, 1:] == 0).all(axis=1) & (vals[:, 0] <= 1)))
            rng = np.random.default_rng(1)
            rand = rng.integers(0, 1 << 63, size=vals.shape, dtype=np.uint64) * 2 + rng.integers(0, 2, size=vals.shape, dtype=np.uint64)
            rand[:, 3] &= np.uint64((1 << 61) - 1)  # below r on both curves (r > 2^253)
            rand[0] = vals[0]
            random_wt = dataclasses.replace(wt, values=rand, path="<random>")
            for label, w in (("witness", wt), ("random", random_wt)):
                times, msm = [], {}
                for _ in range(3):
                    timer = PhaseTimer()
                    t0 = time.perf_counter()
                    synth = groth16.synthesize(key, w, timer)
                    groth16.device_stage(key, synth, timer, 0, with_g2=True, backend=be)
                    times.append((time.perf_counter() - t0) * 1e3)
                    for k2, v in timer.ms.items():
                        if k2.startswith("msm"):
                            msm.setdefault(k2, []).append(v)
                add({"curve": key.curve.native, "op": f"prove_bits_{label}", "zkey": os.path.basename(args.zkey),
                     "domain": key.domain_size, "n_vars": len(vals), "witness_0_1": small if label == "witness" else None,
                     "median_ms": statistics.median(times),
                     "phases_ms": {k2: round(statistics.median(v), 2) for k2, v in msm.items()}})
    path.write_text(json.dumps(res, indent=1))
    print("wrote", path)
    print(f"{'curve':10} {'op':20} {'log_n':>5} {'variant':>14} {'median ms':>10}  phases")
    for r in rows:
        print(f"{r['curve']:10} {r['op']:20} {str(r.get('log_n', r.get('domain'))):>5} {r.get('variant', ''):>14} "
              f"{r['median_ms']:10.3f}  {r.get('phases_ms', '')}")


if __name__ == "__main__":
    main()
