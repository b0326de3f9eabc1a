// snarkd CUDA kernels: NTT passes, the H computation, sparse A.w / B.w, and
// Pippenger MSM (signed digits, counting sort by bucket, segmented bucket
// accumulation, parallel window reduction) for G1 and G2.
//
// One source for both curves: compile with -DSNARKD_BN254 or -DSNARKD_BLS12_381
// (module.py does that through NVRTC; `nvcc -arch=sm_90 -c` checks it here).
// All buffers are the zkey layout: little-endian 32-bit words; Fr elements
// 8 words; Fq elements FqP::N words; G1 affine x,y; G2 affine x.c0,x.c1,y.c0,y.c1.
#include "curve.cuh"
#include "pairing.cuh"  // Miller loops for aggregation (SnarkPack)

typedef unsigned long long u64;

static SNARKD_DI Fr ld_fr(const uint32_t* p) {
  const uint4* q = reinterpret_cast<const uint4*>(p);
  uint4 a = q[0], b = q[1];
  Fr r;
  r.v[0] = a.x; r.v[1] = a.y; r.v[2] = a.z; r.v[3] = a.w;
  r.v[4] = b.x; r.v[5] = b.y; r.v[6] = b.z; r.v[7] = b.w;
  return r;
}
static SNARKD_DI void st_fr(uint32_t* p, const Fr& r) {
  uint4* q = reinterpret_cast<uint4*>(p);
  q[0] = make_uint4(r.v[0], r.v[1], r.v[2], r.v[3]);
  q[1] = make_uint4(r.v[4], r.v[5], r.v[6], r.v[7]);
}
static SNARKD_DI u64 bitrev64(u64 x, int bits) { return bits ? (__brevll(x) >> (64 - bits)) : 0; }

// ---------------------------------------------------------------- Fr vectors

extern "C" __global__ void fr_mul(const uint32_t* a, const uint32_t* b, uint32_t* out, u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  st_fr(out + 8 * i, ld_fr(a + 8 * i) * ld_fr(b + 8 * i));
}

// out[i] = scale * a[i]
extern "C" __global__ void fr_scale(uint32_t* a, const uint32_t* scale, u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  st_fr(a + 8 * i, ld_fr(a + 8 * i) * ld_fr(scale));
}

// out[j] = scale * base^j for j < count (scale may be null)
extern "C" __global__ void fr_powers(uint32_t* out, const uint32_t* base, const uint32_t* scale, u64 count) {
  u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count) return;
  Fr b = ld_fr(base);
  Fr acc = scale ? ld_fr(scale) : Fr::one();
  for (u64 e = j; e; e >>= 1) {
    if (e & 1) acc = acc * b;
    b = b.sqr();
  }
  st_fr(out + 8 * j, acc);
}

// Stage twiddles T[m + j] = w_{2m}^j for 1 <= m < n (T[0] = 1), each element its own power of w = w_n:
// w_{2m}^j = w^(j n / 2m). The one table serves the inverse transforms too (w_{2m}^-j = -T[2m - j], the
// sign folded into the butterfly: ntt_group), and its top half is w^k, k < n/2: one table of n elements
// where a forward, an inverse and a coset table took 3 n (what bounds the largest domain on a small card).
extern "C" __global__ void fr_stage_twiddles(uint32_t* T, const uint32_t* w, int log_n) {
  u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  u64 n = 1ull << log_n;
  if (idx >= n) return;
  if (idx == 0) { st_fr(T, Fr::one()); return; }
  int lm = 63 - __clzll(idx);
  u64 e = (idx - (1ull << lm)) << (log_n - 1 - lm);
  Fr b = ld_fr(w), acc = Fr::one();
  for (; e; e >>= 1) {
    if (e & 1) acc = acc * b;
    b = b.sqr();
  }
  st_fr(T + 8 * idx, acc);
}

// One group of a pass: the 2^R rows whose row-index bits [b_lo, b_lo + R) vary
// (the other bits and the column fixed by t), loaded into registers, taken
// through R radix-2 stages there (bottom bit up for DIT, top bit down for DIF),
// and written back: one shared-memory round trip and one barrier per R stages
// instead of per stage. Twiddles as in a radix-2 stage: for the pair at row r
// and stage bit b, T[2^(s0+b) + j] with j the global index bits below s0 + b
// (inverse: T[2^(s0+b+1) - j], negated); j = 0 means w = 1 and the multiply is skipped.
template <int R, bool DIF, bool INV>
static __device__ __forceinline__ void ntt_group(uint32_t* sm, const uint32_t* tw, int tile, int g, u64 mid, int s0,
                                                 int b_lo, int t) {
  constexpr int M = 1 << R;
  const int gmask = (1 << g) - 1;
  const int col = t & gmask;
  const int rp = t >> g;
  const int base = ((rp >> b_lo) << (b_lo + R)) | (rp & ((1 << b_lo) - 1));
  Fr x[M];
#pragma unroll
  for (int u = 0; u < M; u++) {
    const int e = ((base | (u << b_lo)) << g) | col;
#pragma unroll
    for (int q = 0; q < 8; q++) x[u].v[q] = sm[q * tile + e];
  }
#pragma unroll
  for (int st = 0; st < R; st++) {
    const int lb = DIF ? (R - 1 - st) : st;
    const int b = b_lo + lb;
#pragma unroll
    for (int u = 0; u < M; u++) {
      if (u & (1 << lb)) continue;
      const int row = base | (u << b_lo);
      const u64 j = ((u64)(row & ((1 << b) - 1)) << s0) | (mid << g) | (u64)col;
      Fr& a = x[u];
      Fr& c = x[u | (1 << lb)];
      const u64 m = 1ull << (s0 + b);
      // the inverse's twiddle w_{2m}^-j = -T[2m - j]: one subtraction more where a multiply happens
      const uint32_t* tj = tw + 8 * (INV ? 2 * m - j : m + j);
      if (DIF) {
        const Fr d = a - c;
        a = a + c;
        c = j ? (INV ? Fr::zero() - d * ld_fr(tj) : d * ld_fr(tj)) : d;
      } else {
        const Fr tc = j ? (INV ? Fr::zero() - c * ld_fr(tj) : c * ld_fr(tj)) : c;
        c = a - tc;
        a = a + tc;
      }
    }
  }
#pragma unroll
  for (int u = 0; u < M; u++) {
    const int e = ((base | (u << b_lo)) << g) | col;
#pragma unroll
    for (int q = 0; q < 8; q++) sm[q * tile + e] = x[u].v[q];
  }
}

// One pass of radix-2 stages in shared memory, covering the index bits
// [s0, s0 + k) of an n = 2^log_n transform. A block holds 2^k rows (those
// bits) by 2^g columns (index bits [0, g), g <= s0) for coalescing; the other
// bits come from the block index. dif = 1: Gentleman-Sande stages from the top
// bit down, natural in -> bit-reversed out; dif = 0: Cooley-Tukey stages from
// the bottom bit up, bit-reversed in -> natural out. tw: T[m + j] = w_{2m}^j.
// The stages run R at a time in registers (ntt_group): ntt_pass_r1 is radix 2
// (62 registers, 512 threads), ntt_pass_r2 takes two stages per barrier (80
// registers, 256 threads); ntt.py RADIX_LOG picks one.
// ntt_pass_rR_inv: the inverse transform (w^-1), from the same table tw.
// shift (DIT first pass only): x[p] *= g^i / n on load, i = bitrev(p), from shift = [g^j / n for
// j < 2^shift_lo] ++ [g^(k 2^shift_lo) for the rest]; ntt_pass_rR_fs: from one table of n elements
// (a kernel of its own: the branch in the others took 82 registers against 80, a third fewer blocks per SM).
// src (DIT first pass only): load x[p] = src[bitrev(p)] (* scale when given)
// instead of data[p]: the bit reversal of a natural-order NTT rides on the
// first pass instead of a pass of its own (one read and write of the vector less).
template <int R, bool INV, bool FULL_SHIFT>
static __device__ __forceinline__ void ntt_pass_body(uint32_t* data, const uint32_t* tw, const uint32_t* shift,
                                                     int shift_lo, int log_n, int s0, int k, int g, int dif,
                                                     const uint32_t* src, const uint32_t* scale) {
  extern __shared__ uint32_t sm[];
  const int tile = 1 << (k + g);
  const int mid_bits = s0 - g;
  const u64 blk = blockIdx.x;
  const u64 mid = blk & ((1ull << mid_bits) - 1);
  const u64 hi = blk >> mid_bits;
  const u64 gmask = (1ull << g) - 1;
  for (int e = threadIdx.x; e < tile; e += blockDim.x) {
    u64 row = (u64)(e >> g), col = (u64)e & gmask;
    u64 idx = (hi << (s0 + k)) | (row << s0) | (mid << g) | col;
    Fr x = src ? ld_fr(src + 8 * bitrev64(idx, log_n)) : ld_fr(data + 8 * idx);
    if (scale) x = x * ld_fr(scale);
    if (shift) {
      const u64 i = bitrev64(idx, log_n);
      if (FULL_SHIFT)  // one table of n elements (a domain with room for it): one multiply
        x = x * ld_fr(shift + 8 * i);
      else  // g^i / n = (g^lo / n) (g^(2^shift_lo))^hi: two tables of ~sqrt(n) elements, not one of n
        x = x * ld_fr(shift + 8 * (i & ((1ull << shift_lo) - 1))) * ld_fr(shift + 8 * ((1ull << shift_lo) + (i >> shift_lo)));
    }
#pragma unroll
    for (int w = 0; w < 8; w++) sm[w * tile + e] = x.v[w];
  }
  __syncthreads();
  for (int done = 0; done < k;) {
    const int r = min(R, k - done);
    const int b_lo = dif ? (k - done - r) : done;  // the group's lowest row bit
    for (int t = threadIdx.x; t < (tile >> r); t += blockDim.x) {
      if (R >= 2 && r == 2) {
        if (dif) ntt_group<2, true, INV>(sm, tw, tile, g, mid, s0, b_lo, t);
        else ntt_group<2, false, INV>(sm, tw, tile, g, mid, s0, b_lo, t);
      } else {
        if (dif) ntt_group<1, true, INV>(sm, tw, tile, g, mid, s0, b_lo, t);
        else ntt_group<1, false, INV>(sm, tw, tile, g, mid, s0, b_lo, t);
      }
    }
    done += r;
    __syncthreads();
  }
  for (int e = threadIdx.x; e < tile; e += blockDim.x) {
    u64 row = (u64)(e >> g), col = (u64)e & gmask;
    u64 idx = (hi << (s0 + k)) | (row << s0) | (mid << g) | col;
    Fr x;
#pragma unroll
    for (int w = 0; w < 8; w++) x.v[w] = sm[w * tile + e];
    st_fr(data + 8 * idx, x);
  }
}

#define SNARKD_NTT_PASS(R, NAME, INV, FULL)                                                                    \
  extern "C" __global__ void __launch_bounds__(512) NAME(uint32_t* data, const uint32_t* tw, const uint32_t* shift, \
                                                         int shift_lo, int log_n, int s0, int k, int g, int dif,  \
                                                         const uint32_t* src, const uint32_t* scale) {            \
    ntt_pass_body<R, INV, FULL>(data, tw, shift, shift_lo, log_n, s0, k, g, dif, src, scale);                    \
  }
// forward and inverse as kernels of their own: one kernel holding both bodies takes 109 registers (76 and 80 apart)
SNARKD_NTT_PASS(1, ntt_pass_r1, false, false)
SNARKD_NTT_PASS(2, ntt_pass_r2, false, false)
SNARKD_NTT_PASS(1, ntt_pass_r1_inv, true, false)
SNARKD_NTT_PASS(2, ntt_pass_r2_inv, true, false)
SNARKD_NTT_PASS(1, ntt_pass_r1_fs, false, true)
SNARKD_NTT_PASS(2, ntt_pass_r2_fs, false, true)

// out[i] = from_mont(a[i] * b[i] - c[i]): the H MSM's plain scalars.
extern "C" __global__ void h_final(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out, u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  st_fr(out + 8 * i, (ld_fr(a + 8 * i) * ld_fr(b + 8 * i) - ld_fr(c + 8 * i)).from_mont());
}

// Sparse rows: out[r] = sum over entries e of row r of mont(val[e] * w[col[e]]),
// val = coef*R^2 (zkey), w plain: the product is coef*w in Montgomery form.
extern "C" __global__ void spmv_csr(const uint32_t* row_ptr, const uint32_t* col, const uint32_t* val,
                                    const uint32_t* wit, uint32_t* out, uint32_t nrows) {
  uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  Fr acc = Fr::zero();
  for (uint32_t e = row_ptr[r]; e < row_ptr[r + 1]; e++) {
    Fr v = Fr::load(val + 8 * (u64)e);
    v.reduce_raw();
    Fr w = Fr::load(wit + 8 * (u64)col[e]);
    w.reduce_raw();
    acc = acc + v * w;
  }
  st_fr(out + 8 * (u64)r, acc);
}

// ---------------------------------------------------------------------- MSM

#define EMPTY 0xffffffffu

// Signed c-bit digit w of a reduced scalar (carry in/out across windows): the
// bucket key (w * 2^(c-1) + |d| - 1, or |d| - 1 when every window shares one set
// of buckets: window tables) or EMPTY for a zero digit; sign set for d < 0.
static SNARKD_DI uint32_t digit_key(const Fr& s, int w, int c, int shared, uint32_t& carry, uint32_t& sign) {
  const uint32_t half = 1u << (c - 1);
  const uint32_t mask = (c == 32) ? 0xffffffffu : ((1u << c) - 1);
  const int pos = w * c, word = pos >> 5, sh = pos & 31;
  uint32_t v = 0;
  if (word < 8) {
    u64 two = s.v[word];
    if (word + 1 < 8) two |= (u64)s.v[word + 1] << 32;
    v = (uint32_t)(two >> sh) & mask;
  }
  v += carry;
  uint32_t mag;
  if (v > half) { mag = (1u << c) - v; sign = 1; carry = 1; }
  else { mag = v; sign = 0; carry = 0; }
  return mag ? (shared ? 0u : (uint32_t)w * half) + mag - 1 : EMPTY;
}

// What the sorted array holds per digit: the digit's index t = w * n + i with
// window tables (the accumulation finds row w of any table from it), else the
// scalar index i (the bucket key already names the window); sign in bit 31.
static SNARKD_DI uint32_t digit_entry(uint32_t i, int w, uint32_t n, int shared, uint32_t sign) {
  return (shared ? (uint32_t)w * n + i : i) | (sign << 31);
}

// Rank of this lane among the active lanes holding the same value v, and the
// group's leader; used for warp-aggregated atomics (one atomic per distinct v).
static SNARKD_DI uint32_t group_of(uint32_t v, uint32_t& rank, uint32_t& leader) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t grp = __match_any_sync(__activemask(), v);
  leader = __ffs(grp) - 1;
  rank = __popc(grp & ((1u << lane) - 1));
  return grp;
}

// The digit sort: digits stored (and counted per bucket key, warp-aggregated), then a global
// scatter. (A three-pass partition sort measured 2x slower on the H200: bench/gpu-notes.md, round 2.)
extern "C" __global__ void msm_digits(const uint32_t* scalars, uint32_t n, int c, int nw, int shared,
                                      uint32_t* digits, uint32_t* counts) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Fr s = Fr::load(scalars + 8 * (u64)i);
  s.reduce_raw();
  uint32_t carry = 0, sign;
  for (int w = 0; w < nw; w++) {
    const uint32_t key = digit_key(s, w, c, shared, carry, sign);
    digits[(u64)w * n + i] = key == EMPTY ? EMPTY : (key | (sign << 31));
    uint32_t rank, leader;
    const uint32_t grp = group_of(key, rank, leader);
    if (key != EMPTY && rank == 0) atomicAdd(&counts[key], __popc(grp));
  }
}

// sorted[cursor[key]++] = digit_entry(...) for every digit t = w * n + i.
extern "C" __global__ void msm_scatter(const uint32_t* digits, uint32_t n, u64 total, int shared, uint32_t* cursor,
                                       uint32_t* sorted) {
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const uint32_t d = digits[t];
  const uint32_t key = d == EMPTY ? EMPTY : (d & 0x7fffffffu);
  uint32_t rank, leader;
  const uint32_t grp = group_of(key, rank, leader);
  uint32_t base = 0;
  if (key != EMPTY && rank == 0) base = atomicAdd(&cursor[key], __popc(grp));
  base = __shfl_sync(grp, base, leader);
  if (key == EMPTY) return;
  sorted[base + rank] = digit_entry((uint32_t)(t % n), (int)(t / n), n, shared, d >> 31);
}

// item -> segment (upper_bound over item_start[0..nseg]) - 1
extern "C" __global__ void items_fill(const uint32_t* item_start, uint32_t nseg, uint32_t* item_seg, uint32_t nitems) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nitems) return;
  uint32_t lo = 0, hi = nseg + 1;  // first index with item_start > i lies in (lo, hi]
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) >> 1;
    if (item_start[mid] <= i) lo = mid; else hi = mid;
  }
  item_seg[i] = lo;
}

// Exclusive prefix sums of u32 counts, out[0] = 0 ... out[n] = total, in three launches: each
// 1024-entry tile scanned in a block (warp shuffles), the tile totals scanned by one block, the
// tile offsets added. Ours rather than CuPy's cumsum: CuPy compiles its scan and elementwise
// kernels with NVRTC on first use, 0.3-0.9 s of every fresh process's first proof.
#define SCAN_TILE 1024
__device__ __forceinline__ uint32_t block_inclusive_scan(uint32_t v, uint32_t* warp_sums) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    uint32_t t = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += t;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    uint32_t w = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      uint32_t t = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += t;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  return warp ? v + warp_sums[warp - 1] : v;
}

extern "C" __global__ void __launch_bounds__(SCAN_TILE) scan_tiles(const uint32_t* in, uint32_t* out, uint32_t n,
                                                                   uint32_t* tile_sums) {
  __shared__ uint32_t warp_sums[32];
  uint32_t i = blockIdx.x * SCAN_TILE + threadIdx.x;
  uint32_t v = block_inclusive_scan(i < n ? in[i] : 0, warp_sums);
  if (i < n) out[i + 1] = v;
  if (i == 0) out[0] = 0;
  if (threadIdx.x == SCAN_TILE - 1) tile_sums[blockIdx.x] = v;
}

extern "C" __global__ void __launch_bounds__(SCAN_TILE) scan_tile_sums(uint32_t* tile_sums, uint32_t ntiles) {
  __shared__ uint32_t warp_sums[32];
  __shared__ uint32_t chunk_total;
  uint32_t carry = 0;  // exclusive offsets, chunk by chunk (ntiles is small: one block suffices)
  for (uint32_t base = 0; base < ntiles; base += SCAN_TILE) {
    uint32_t i = base + threadIdx.x;
    uint32_t v = i < ntiles ? tile_sums[i] : 0;
    uint32_t inc = block_inclusive_scan(v, warp_sums);
    if (i < ntiles) tile_sums[i] = carry + inc - v;
    if (threadIdx.x == SCAN_TILE - 1) chunk_total = inc;
    __syncthreads();
    carry += chunk_total;
    __syncthreads();  // warp_sums and chunk_total are rewritten by the next chunk
  }
}

extern "C" __global__ void scan_add(uint32_t* out, uint32_t n, const uint32_t* tile_offsets) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i + 1] += tile_offsets[i / SCAN_TILE];
}

// items_per[s] = ceil(counts[s] / L) and info[1] = max over s (info zeroed by the caller):
// the accumulation rounds' plan without CuPy's elementwise and reduction kernels.
extern "C" __global__ void items_per_bucket(const uint32_t* counts, uint32_t nseg, uint32_t L, uint32_t* items_per,
                                            uint32_t* info) {
  uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t v = s < nseg ? (counts[s] + L - 1) / L : 0;
  if (s < nseg) items_per[s] = v;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, d));
  if ((threadIdx.x & 31) == 0 && v) atomicMax(info + 1, v);
}

// items_per[s] = the number of L-entry ranges [t L, (t + 1) L) that bucket s's
// entries [seg_start[s], seg_start[s + 1]) meet (0 when empty), info[1] = the most:
// the first accumulation round's plan when every thread takes L entries (accum_range).
extern "C" __global__ void pieces_per_bucket(const uint32_t* seg_start, uint32_t nseg, uint32_t L, uint32_t* items_per,
                                             uint32_t* info) {
  uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t v = 0;
  if (s < nseg) {
    const uint32_t b = seg_start[s], e = seg_start[s + 1];
    v = e > b ? (e - 1) / L - b / L + 1 : 0;
    items_per[s] = v;
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, d));
  if ((threadIdx.x & 31) == 0 && v) atomicMax(info + 1, v);
}

// acc += the point of sorted entry v (digit_entry), decoded against the sort's n:
// scalar i = t % n, window w = t / n (0 without tables); the point is row w of the
// table (stride points per row), index i - off, negated for a negative digit.
// Scalars below off are skipped (one sort of the witness serves the MSMs over w
// (A, B1, B2) and over w[off:] (C)), as are points at infinity.
template <class F>
static __device__ __forceinline__ void add_entry(XYZZ<F>& acc, const uint32_t* bases, uint32_t v, uint32_t n_sort,
                                                 uint32_t stride, uint32_t off) {
  const uint32_t t = v & 0x7fffffffu, w = t / n_sort, si = t - w * n_sort;
  if (si < off) return;
  Affine<F> p = Affine<F>::load(bases + ((u64)w * stride + (si - off)) * Affine<F>::WORDS);
  if (p.is_inf()) return;
  if (v >> 31) p.y = p.y.neg();
  acc.add_affine(p);
}

// The balanced first round: thread t sums exactly the sorted entries [t L, (t + 1) L)
// (the last thread fewer), crossing bucket boundaries, and writes one partial sum
// per bucket it meets, at item_start[s] + t - seg_start[s] / L (pieces_per_bucket's
// plan); later rounds add a bucket's pieces. Against one item per bucket segment (the
// accum_affine it replaced), no lane waits for a longer item of its warp: ncu showed 26.3
// of 32 lanes active there (bucket sizes vary), on a kernel bound by the multiplier.
template <class F>
static __device__ void accum_range(const uint32_t* bases, const uint32_t* sorted, const uint32_t* seg_start,
                                   uint32_t nseg, const uint32_t* item_start, uint32_t L, uint32_t nthreads,
                                   uint32_t* out, uint32_t n_sort, uint32_t stride, uint32_t off) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nthreads) return;
  const uint32_t total = seg_start[nseg];
  uint32_t pos = t * L;
  if (pos >= total) return;
  const uint32_t end = min(total, pos + L);
  uint32_t lo = 0, hi = nseg;  // the last s with seg_start[s] <= pos: then pos < seg_start[s + 1]
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) >> 1;
    if (seg_start[mid] <= pos) lo = mid; else hi = mid;
  }
  uint32_t s = lo, s_begin = seg_start[s], s_end = seg_start[s + 1];
  XYZZ<F> acc = XYZZ<F>::inf();
  // one flat loop: the bucket change is a short branch and every lane reaches each
  // iteration's add together (a loop per bucket would hold a warp's lanes at the end
  // of each piece until its longest piece ends)
  for (uint32_t k = pos; k < end; k++) {
    if (k == s_end) {  // bucket s ends here: its piece out, on to the next bucket with entries
      acc.store(out + (u64)(item_start[s] + t - s_begin / L) * XYZZ<F>::WORDS);
      acc = XYZZ<F>::inf();
      do s++; while (seg_start[s + 1] <= k);
      s_begin = seg_start[s];
      s_end = seg_start[s + 1];
    }
    add_entry(acc, bases, sorted[k], n_sort, stride, off);
  }
  acc.store(out + (u64)(item_start[s] + t - s_begin / L) * XYZZ<F>::WORDS);
}

template <class F>
static __device__ void accum_xyzz(const uint32_t* pts, const uint32_t* seg_start, const uint32_t* item_start,
                                  const uint32_t* item_seg, uint32_t L, uint32_t nitems, uint32_t* out) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nitems) return;
  const uint32_t s = item_seg[i];
  const uint32_t b = seg_start[s] + (i - item_start[s]) * L;
  const uint32_t e = min(seg_start[s + 1], b + L);
  XYZZ<F> acc = XYZZ<F>::inf();
  for (uint32_t k = b; k < e; k++) acc.add(XYZZ<F>::load(pts + (u64)k * XYZZ<F>::WORDS));
  acc.store(out + (u64)i * XYZZ<F>::WORDS);
}

// Window reduction, parallel: thread t owns buckets [lo, lo + L2) of window w
// and returns sum_{j<L2} (lo + j + 1) * B_{lo+j}, the running-sum trick plus
// lo * (sum of its buckets). Bucket s is pts[fin[s]] if fin[s+1] > fin[s],
// else infinity.
template <class F>
static __device__ void bucket_segments(const uint32_t* pts, const uint32_t* fin, uint32_t nb, uint32_t L2,
                                       uint32_t nthreads, uint32_t* out) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nthreads) return;
  const uint32_t per = nb / L2;
  const uint32_t w = t / per, q = t % per, lo = q * L2;
  XYZZ<F> run = XYZZ<F>::inf(), acc = XYZZ<F>::inf();
  for (int j = (int)L2 - 1; j >= 0; j--) {
    const uint32_t s = w * nb + lo + j;
    const uint32_t f0 = fin[s], f1 = fin[s + 1];
    if (f1 > f0) run.add(XYZZ<F>::load(pts + (u64)f0 * XYZZ<F>::WORDS));
    acc.add(run);
  }
  if (lo) {
    XYZZ<F> m = XYZZ<F>::inf();
    for (int bit = 31 - __clz(lo); bit >= 0; bit--) {
      m.dbl();
      if ((lo >> bit) & 1) m.add(run);
    }
    acc.add(m);
  }
  acc.store(out + (u64)t * XYZZ<F>::WORDS);
}

// in: ngroups groups of cnt XYZZ points; out: ngroups groups of ceil(cnt/F) sums.
template <class F>
static __device__ void sum_groups(const uint32_t* in, uint32_t cnt, uint32_t fan, uint32_t ngroups, uint32_t* out) {
  const uint32_t per = (cnt + fan - 1) / fan;
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= ngroups * per) return;
  const uint32_t gidx = t / per, q = t % per;
  const uint32_t b = q * fan, e = min(cnt, b + fan);
  XYZZ<F> acc = XYZZ<F>::inf();
  for (uint32_t k = b; k < e; k++) acc.add(XYZZ<F>::load(in + ((u64)gidx * cnt + k) * XYZZ<F>::WORDS));
  acc.store(out + (u64)t * XYZZ<F>::WORDS);
}

// Window table step: out[i] = 2^c * in[i], affine in and out (zeros =
// infinity). One inversion per point: the table is built once per key.
template <class F>
static __device__ void window_table(const uint32_t* in, uint32_t* out, uint32_t n, int c) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Affine<F> p = Affine<F>::load(in + (u64)i * Affine<F>::WORDS);
  F x = F::zero(), y = F::zero();
  if (!p.is_inf()) {
    XYZZ<F> acc;
    acc.set_dbl_affine(p);
    for (int k = 1; k < c; k++) acc.dbl();
    if (!acc.is_inf()) {
      const F t = (acc.ZZ * acc.ZZZ).inv();
      x = acc.X * (acc.ZZZ * t);
      y = acc.Y * (acc.ZZ * t);
    }
  }
  x.store(out + (u64)i * Affine<F>::WORDS);
  y.store(out + (u64)i * Affine<F>::WORDS + F::N);
}

// Blocks per SM asked of ptxas for the G1 accumulation kernel (128 threads):
// SNARKD_G1_ACCUM_MINB=N caps its registers at 65536 / (128 N). BN254: 8 (64
// registers, 16 bytes of spills, 50 % occupancy instead of 37 %: accumulate
// -2 % at 2^24 on the H200); BLS12-381 none (capped at 64 it spills and ran 3.5 %
// slower). -DSNARKD_G1_ACCUM_MINB=N overrides (timing variants).
#if defined(SNARKD_BN254) && !defined(SNARKD_G1_ACCUM_MINB)
#define SNARKD_G1_ACCUM_MINB 8
#endif
#if defined(SNARKD_G1_ACCUM_MINB)
#define SNARKD_G1_ACCUM_BOUNDS __launch_bounds__(128, SNARKD_G1_ACCUM_MINB)
#else
#define SNARKD_G1_ACCUM_BOUNDS
#endif

// The same for the G2 accumulation kernels: BN254 3 (170 registers: accum_range
// would take 186 and drop to 2 blocks per SM); BLS12-381 none (its G2 kernels need
// more than 200).
#if defined(SNARKD_BN254) && !defined(SNARKD_G2_ACCUM_MINB)
#define SNARKD_G2_ACCUM_MINB 3
#endif
#if defined(SNARKD_G2_ACCUM_MINB)
#define SNARKD_G2_ACCUM_BOUNDS __launch_bounds__(128, SNARKD_G2_ACCUM_MINB)
#else
#define SNARKD_G2_ACCUM_BOUNDS
#endif

#define SNARKD_GROUP_KERNELS(G, F, B)                                                                             \
  extern "C" __global__ void B G##_accum_range(const uint32_t* bases, const uint32_t* sorted,                    \
                                             const uint32_t* seg_start, uint32_t nseg, const uint32_t* item_start, \
                                             uint32_t L, uint32_t nthreads, uint32_t* out, uint32_t n_sort,       \
                                             uint32_t stride, uint32_t off) {                                     \
    accum_range<F>(bases, sorted, seg_start, nseg, item_start, L, nthreads, out, n_sort, stride, off);           \
  }                                                                                                              \
  extern "C" __global__ void G##_accum_xyzz(const uint32_t* pts, const uint32_t* seg_start,                    \
                                            const uint32_t* item_start, const uint32_t* item_seg, uint32_t L,    \
                                            uint32_t nitems, uint32_t* out) {                                    \
    accum_xyzz<F>(pts, seg_start, item_start, item_seg, L, nitems, out);                                        \
  }                                                                                                              \
  extern "C" __global__ void G##_bucket_segments(const uint32_t* pts, const uint32_t* fin, uint32_t nb,        \
                                                 uint32_t L2, uint32_t nthreads, uint32_t* out) {                \
    bucket_segments<F>(pts, fin, nb, L2, nthreads, out);                                                        \
  }                                                                                                              \
  extern "C" __global__ void G##_sum_groups(const uint32_t* in, uint32_t cnt, uint32_t fan, uint32_t ngroups,  \
                                            uint32_t* out) {                                                     \
    sum_groups<F>(in, cnt, fan, ngroups, out);                                                                   \
  }                                                                                                              \
  extern "C" __global__ void G##_window_table(const uint32_t* in, uint32_t* out, uint32_t n, int c) {            \
    window_table<F>(in, out, n, c);                                                                              \
  }

SNARKD_GROUP_KERNELS(g1, Fq, SNARKD_G1_ACCUM_BOUNDS)
SNARKD_GROUP_KERNELS(g2, Fq2, SNARKD_G2_ACCUM_BOUNDS)
