#!/usr/bin/env python3
"""Compute ceilings of the GPU field and point code, with no memory traffic: what the
MSM accumulation kernel would reach if it only computed (bench/gpu-notes.md, round 3).

    python bench/gpu_ceiling.py [--curves bn254,bls12_381] [--json OUT]

imad_wide   independent 32x32->64 multiply-adds (IMAD.WIDE.U32): the integer pipe's rate
fq_mul      Montgomery multiplications (the shipped field code), 4 independent chains per thread
fq_sqr      dedicated squarings, 4 chains per thread
g1_madd     mixed XYZZ additions (add_affine, as the accumulation kernel calls it), one
            accumulator per thread, the affine point in registers
g2_madd     the same over Fq2
Rates are per second on the whole device and per SM clock (clock from the device's properties),
medians of 5 launches after a warm-up, CUDA events. The launches fill the device (blocks of
128 threads, 8 blocks per SM).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

import cupy  # noqa: E402
import numpy as np  # noqa: E402

GPU_SRC = REPO / "src" / "snarkd" / "gpu"
MACROS = {"bn254": "SNARKD_BN254", "bls12_381": "SNARKD_BLS12_381"}

SOURCE = r'''
#include "curve.cuh"
typedef unsigned long long u64;

extern "C" __global__ void imad_wide(uint32_t* out, int iters, uint32_t seed) {
  uint32_t a = seed ^ threadIdx.x, b = seed * 3u + blockIdx.x;
  u64 acc[8];
#pragma unroll
  for (int j = 0; j < 8; j++) acc[j] = j;
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int j = 0; j < 8; j++) acc[j] = (u64)(a + j) * (u64)b + acc[j];  // one IMAD.WIDE.U32 each
    b += (uint32_t)acc[0];
  }
  u64 s = 0;
#pragma unroll
  for (int j = 0; j < 8; j++) s ^= acc[j];
  if (s == 0x12345) out[0] = (uint32_t)s;  // keeps the work
}

static __device__ Fq seed_fq(uint32_t s) {
  Fq x = Fq::one();
  x.v[0] ^= s;
  x.v[1] ^= s * 7u;
  return x * x;  // canonical
}

extern "C" __global__ void fq_mul(uint32_t* out, int iters, uint32_t seed) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  Fq y = seed_fq(seed + t), x0 = seed_fq(t + 1), x1 = seed_fq(t + 2), x2 = seed_fq(t + 3), x3 = seed_fq(t + 4);
#pragma unroll 1
  for (int i = 0; i < iters; i++) { x0 = x0 * y; x1 = x1 * y; x2 = x2 * y; x3 = x3 * y; }
  const Fq s = x0 + x1 + x2 + x3;
  if (s.v[0] == 0x12345u && s.v[1] == seed) s.store(out);
}

extern "C" __global__ void fq_sqr(uint32_t* out, int iters, uint32_t seed) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  Fq x0 = seed_fq(t + 1), x1 = seed_fq(t + 2), x2 = seed_fq(t + 3), x3 = seed_fq(t + seed);
#pragma unroll 1
  for (int i = 0; i < iters; i++) { x0 = x0.sqr(); x1 = x1.sqr(); x2 = x2.sqr(); x3 = x3.sqr(); }
  const Fq s = x0 + x1 + x2 + x3;
  if (s.v[0] == 0x12345u && s.v[1] == seed) s.store(out);
}

static __device__ void tweak(Fq& x, uint32_t s) { x.v[0] ^= s; }
static __device__ void tweak(Fq2& x, uint32_t s) { x.c0.v[0] ^= s; x.c1.v[0] ^= s * 3u; }

template <class F>
static __device__ void madd_loop(uint32_t* out, int iters, uint32_t seed) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  // not a curve point: the cost of an add does not depend on that (the exceptional
  // branches are not taken for these values)
  Affine<F> p;
  p.x = F::one() + F::one();
  p.y = F::one();
  tweak(p.x, seed + t);
  XYZZ<F> acc = XYZZ<F>::inf();
  acc.add_affine(p);
  tweak(p.x, 5u);
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
    acc.add_affine(p);
    tweak(p.y, (uint32_t)i);
  }
  if (acc.X.is_zero() && acc.Y.is_zero()) acc.store(out);
}

extern "C" __global__ void g1_madd(uint32_t* out, int iters, uint32_t seed) { madd_loop<Fq>(out, iters, seed); }
extern "C" __global__ void g2_madd(uint32_t* out, int iters, uint32_t seed) { madd_loop<Fq2>(out, iters, seed); }
'''

# (kernel, operations per thread per iteration, iterations)
KERNELS = (("imad_wide", 8, 1 << 14), ("fq_mul", 4, 1 << 10), ("fq_sqr", 4, 1 << 10), ("g1_madd", 1, 1 << 9),
           ("g2_madd", 1, 1 << 7))


def run(curve: str, reps: int = 5) -> list[dict]:
    mod = cupy.RawModule(code=SOURCE, options=("-std=c++17", f"-I{GPU_SRC}", f"-D{MACROS[curve]}"), backend="nvrtc")
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    sms, clock_hz = props["multiProcessorCount"], props["clockRate"] * 1e3
    blocks, threads = 8 * sms, 128
    out = cupy.zeros(64, dtype=cupy.uint32)
    rows = []
    for name, per_iter, iters in KERNELS:
        fn = mod.get_function(name)
        fn((blocks,), (threads,), (out, np.int32(2), np.uint32(1)))  # warm-up (and load)
        ts = []
        for r in range(reps):
            s, e = cupy.cuda.Event(), cupy.cuda.Event()
            s.record()
            fn((blocks,), (threads,), (out, np.int32(iters), np.uint32(r + 2)))
            e.record()
            e.synchronize()
            ts.append(cupy.cuda.get_elapsed_time(s, e) * 1e-3)
        t = statistics.median(ts)
        ops = blocks * threads * per_iter * iters
        rate = ops / t
        rows.append({"curve": curve, "kernel": name, "ops": ops, "median_s": t, "per_s": rate,
                     "per_sm_clock": rate / (sms * clock_hz), "ns_per_op_device": 1e9 / rate,
                     "sm_cycles_per_op": sms * clock_hz / rate, "sms": sms, "clock_mhz": clock_hz / 1e6})
        print(f"{curve:10} {name:10} {rate:10.3e}/s  {rate / (sms * clock_hz):8.3f} per SM clock  "
              f"{sms * clock_hz / rate:8.2f} SM cycles each", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = [r for c in args.curves.split(",") for r in run(c)]
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))


if __name__ == "__main__":
    main()
