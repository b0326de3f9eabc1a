"""Micro-benchmark of the native core: MSM G1/G2 and NTT, 1 and 2 threads.

Usage: python bench/native_micro.py [--curves bn254,bls12_381] [--msm-logs 12,14,16]
       [--ntt-logs 12,14,16,18] [--threads 1,2] [--runs 5] [--cpu]
Prints the median wall time (ms) of --runs runs per cell; --cpu prints process
CPU time instead (all threads summed: steadier on a shared, noisy machine).
"""
import argparse
import statistics
import time

import numpy as np

from snarkd.native import _core as native  # bn254, hardware_threads


def random_points(mod, g2, n, rng):
    """n distinct-ish points: multiples of G by random scalars via one MSM-free path:
    k*G for 64 random k, then tiled (the MSM cost does not depend on point values)."""
    from py_ecc import optimized_bls12_381 as pbls, optimized_bn128 as pbn
    pe = pbn if mod is native.bn254 else pbls
    L = mod.FQ_LIMBS
    R = 1 << (64 * L)
    q = mod.FQ_MODULUS
    G = pe.G2 if g2 else pe.G1
    x, y = pe.normalize(G)
    coords = [x.coeffs[0], x.coeffs[1], y.coeffs[0], y.coeffs[1]] if g2 else [x.n, y.n]
    g = np.concatenate([np.array([(int(c) * R % q >> (64 * i)) & (2**64 - 1) for i in range(L)], dtype=np.uint64)
                        for c in coords])
    mul = mod.g2_mul if g2 else mod.g1_mul
    k = 256
    ks = rng.integers(0, 2**63, size=(k, 4), dtype=np.uint64)
    base = mul(g, ks).reshape(k, -1)
    return np.tile(base, ((n + k - 1) // k, 1))[:n].copy()


def random_scalars(mod, n, rng):
    s = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    s[:, 3] &= np.uint64((1 << (mod.FR_MODULUS.bit_length() - 64 * 3 - 1)) - 1)  # < r
    return s


def timeit(fn, runs, clock=time.perf_counter):
    fn()  # warm-up (twiddle caches, page faults)
    ts = []
    for _ in range(runs):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return statistics.median(ts) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--msm-logs", default="12,14,16")
    ap.add_argument("--ntt-logs", default="12,14,16,18")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cpu", action="store_true", help="report process CPU time, not wall time")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    threads = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(1)
    print(f"hardware_threads={native.hardware_threads()}  median of {args.runs} runs, "
          f"{'CPU' if args.cpu else 'wall'} ms")
    hdr = f"{'curve':10} {'op':8} {'log n':>5} " + " ".join(f"{'T=' + str(t):>9}" for t in threads)
    print(hdr)
    print("-" * len(hdr))
    for cname in args.curves.split(","):
        mod = getattr(native, cname)
        for op in ("msm_g1", "msm_g2"):
            g2 = op == "msm_g2"
            for lg in [int(x) for x in args.msm_logs.split(",")]:
                n = 1 << lg
                pts = random_points(mod, g2, n, rng)
                sc = random_scalars(mod, n, rng)
                f = getattr(mod, op)
                cells = [timeit(lambda: f(pts, sc, threads=t), args.runs, clock) for t in threads]
                print(f"{cname:10} {op:8} {lg:5d} " + " ".join(f"{c:9.1f}" for c in cells), flush=True)
        for lg in [int(x) for x in args.ntt_logs.split(",")]:
            n = 1 << lg
            v = random_scalars(mod, n, rng)
            cells = [timeit(lambda: mod.ntt(v, threads=t), args.runs, clock) for t in threads]
            print(f"{cname:10} {'ntt':8} {lg:5d} " + " ".join(f"{c:9.1f}" for c in cells), flush=True)
        lg = 16
        v = random_scalars(mod, 1 << lg, rng)
        cells = [timeit(lambda: mod.coset_shift_evals(v, threads=t), args.runs, clock) for t in threads]
        print(f"{cname:10} {'coset':8} {lg:5d} " + " ".join(f"{c:9.1f}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
