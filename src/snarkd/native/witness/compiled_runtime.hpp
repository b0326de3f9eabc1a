// The runtime of a compiled witness program (snarkd.witness.compiled): the generated C++ (translate.py) includes it.
// The linear memory, wasm's numeric helpers, circom's host imports, and circom's ffwasm field functions done natively
// on the wasm memory's element layout ([int32 short][uint32 type: 0x80000000 long, 0x40000000 Montgomery][4 x u64
// value]) with snarkd's Montgomery core (ff/mont.hpp, witness/circom_field.hpp). Built at run time by the user's C++
// compiler, so shipped with the package (RUNTIME_VERSION: bump on any change of meaning; the library file is bound to
// the digest of every header it was built from anyway).
//
// Safety (round 27): every access of the linear memory is checked against its current size (a wasm trap past it),
// memory.grow is bounded by the caller's limit, recursion by the stack left (checked in every function's prologue,
// on a thread of its own with a large stack), loops and calls by fuel; every trap is a C++ exception caught at the
// entry (compiled_entry.hpp) and returned as an error. Field: BN254's scalar field, or BLS12-381's with
// -DSNARKD_WC_BLS12_381.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>

// Round 33: the fast tier (-Og, compiled/__init__.py TIERS) defines SNARKD_WC_RUNTIME_O3: everything below (the field
// arithmetic, snarkd's Montgomery core, the memory and its checks) is optimised as the full tier's -O3 while the
// generated code stays at -Og, and its native field functions (gathered at the end of this file) come from a runtime
// object compiled at -O3 once and kept. A witness spends most of its time in them (the RSA verifier's -O3 library:
// nat_Fr_mul 15%, add 11%, sub 7%, the inverse, from_mont): its fast library then runs as the -O3 one (37.3 ms a
// witness against 36.8; all at -Og 46.9). GCC only (clang has no per-function level); popped at the end.
#if defined(SNARKD_WC_RUNTIME_O3) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3", "no-strict-aliasing")
#define SNARKD_WC_RUNTIME_O3_PUSHED
#endif

#ifdef SNARKD_WC_BLS12_381
#include "curves/bls12_381.hpp"
#else
#include "curves/bn254.hpp"
#endif
#include "witness/circom_field.hpp"

int32_t exp_getMessageChar();
int32_t exp_readSharedRWMemory(int32_t);

namespace rt {
using namespace snarkd;
constexpr int RUNTIME_VERSION = 2;  // 2: the memory kept per copy between runs (round 29)
struct Trap {
  std::string what;
  int code;
};
[[noreturn]] __attribute__((noinline, cold)) inline void trap(const char* w, int code = 0) { throw Trap{w, code}; }

inline uint32_t pages = 0;
inline uint64_t mem_bytes = 0;       // pages * 65536: every access is checked against it
inline uint32_t max_pages = 65536;   // memory.grow's bound (the caller's memory limit)
inline uintptr_t stack_limit = 0;    // a frame below this address: the call stack is exhausted (a trap)
inline int64_t fuel = INT64_MAX;     // loop iterations and calls left (a trap at 0)
constexpr uint64_t RESERVE = (uint64_t(1) << 32) + (uint64_t(1) << 20);

struct DataSeg {
  uint32_t off;
  const unsigned char* bytes;
  uint32_t n;
};
extern const DataSeg DATA[];
extern const uint32_t NDATA, MEM_PAGES, TABLE_N;
extern void* const TABLE[];
extern const int TABLE_TYPE[];

[[noreturn]] __attribute__((noinline, cold)) inline void oob() { trap("out of bounds memory access"); }
inline __attribute__((always_inline)) void chk(uint64_t a, uint64_t n) {
#ifndef SNARKD_WC_BENCH_NO_BOUNDS_CHECKS  // (bench/wasm_compile only, to measure what the checks cost; never the product)
  if (__builtin_expect(a + n > mem_bytes, 0)) oob();
#else
  (void)a, (void)n;
#endif
}

// The linear memory: one reservation of 4 GiB + 1 MiB per loaded copy, made at its first run and kept (pages touched
// on demand; accesses checked against the current size, not the reservation). Round 29: a reservation mapped and
// unmapped per run cost a daemon's synthesis workers twice (16 threads of one process: 71-89 ms a run against ~40
// alone): each munmap of touched pages is a TLB shootdown to every core running the process, and each run faulted its
// ~9 MB in again under the process's shared mm lock. A run now starts from the state a fresh instance has: what any
// earlier run could have written (below the high-water mark of the memory's size, `dirty`: every access is checked
// against the current size, so nothing above it was ever written) is zeroed, then the data segments are copied in.
inline uint8_t* M = nullptr;
inline uint64_t dirty = 0;           // bytes of M that a run since the last zeroing may have written
inline bool advised = false;         // the reservation has MADV_HUGEPAGE
// zeroed in place up to this, beyond it given back after the run (MADV_DONTNEED): memset makes resident what it
// clears, so a memory that is large but little written (a big initial size) is not cleared whole in place
constexpr uint64_t KEEP = uint64_t(16) << 20;

inline void note_size() {
  if (mem_bytes > dirty) dirty = mem_bytes;
}
// After a run: a memory grown past KEEP gives its pages beyond it back at once (MADV_DONTNEED leaves them reading as
// zero), so a copy kept between runs holds at most KEEP; below it, the next run zeroes what was written.
inline void release() {
  if (M && dirty > KEEP) {
    if (madvise(M + KEEP, dirty - KEEP, MADV_DONTNEED) != 0) {  // cannot fail on an anonymous private mapping;
      munmap(M, RESERVE);                                          // if it did, no copy is kept
      M = nullptr;
    }
    dirty = KEEP;
  }
  pages = 0;
  mem_bytes = 0;
}
// huge_pages: MADV_HUGEPAGE on the reservation ([cpu] huge_pages; transparent huge pages where the kernel has them,
// on request): the RSA verifier's run touches ~9 MB, 2,250 faults of 4 KiB against a handful (round 28). A
// reservation made with the other setting is replaced (a switch is rare; a fresh mapping is what "no advice" means).
inline void instantiate(bool huge_pages) {
  pages = 0, mem_bytes = 0;
  if (MEM_PAGES > max_pages) trap("the module's initial memory passes the memory limit");
  if (M && advised != huge_pages) {
    munmap(M, RESERVE);
    M = nullptr;
  }
  if (!M) {
    void* p = mmap(nullptr, RESERVE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) trap("cannot reserve the linear memory");
    if (huge_pages) madvise(p, RESERVE, MADV_HUGEPAGE);  // a hint: no failure to handle
    M = static_cast<uint8_t*>(p);
    advised = huge_pages;
    dirty = 0;
  } else if (dirty) {
#ifndef SNARKD_WC_BENCH_RESET_DONTNEED  // (bench/ only: the other reset, to measure it; never the product)
    std::memset(M, 0, dirty);  // at most KEEP (release): a few MB written by the last run, cheaper than a shootdown
#else
    madvise(M, dirty, MADV_DONTNEED);
#endif
    dirty = 0;
  }
  pages = MEM_PAGES;
  mem_bytes = uint64_t(pages) * 65536;
  note_size();
  for (uint32_t k = 0; k < NDATA; k++) {
    chk(DATA[k].off, DATA[k].n);
    std::memcpy(M + DATA[k].off, DATA[k].bytes, DATA[k].n);
  }
}
template <class T>
inline __attribute__((always_inline)) T ld(const uint8_t* mb, uint64_t a) {
  chk(a, sizeof(T));
  T v;
  std::memcpy(&v, mb + a, sizeof v);
  return v;
}
template <class T>
inline __attribute__((always_inline)) void st(uint8_t* mb, uint64_t a, T v) {
  chk(a, sizeof(T));
  std::memcpy(mb + a, &v, sizeof v);
}
inline int32_t mem_size() { return int32_t(pages); }
inline int32_t mem_grow(int32_t n) {
  uint32_t old = pages;
  if (uint64_t(old) + uint32_t(n) > max_pages) return -1;
  pages += uint32_t(n);
  mem_bytes = uint64_t(pages) * 65536;
  note_size();
  return int32_t(old);
}
inline void mem_copy(int32_t d, int32_t s, int32_t n) {
  chk(uint32_t(d), uint32_t(n)), chk(uint32_t(s), uint32_t(n));
  std::memmove(M + uint32_t(d), M + uint32_t(s), uint32_t(n));
}
inline void mem_fill(int32_t d, int32_t v, int32_t n) {
  chk(uint32_t(d), uint32_t(n));
  std::memset(M + uint32_t(d), v, uint32_t(n));
}
inline void* table_fn(int32_t i, int type) {
  if (uint32_t(i) >= TABLE_N || !TABLE[i]) trap("undefined table element");
  if (TABLE_TYPE[i] != type) trap("indirect call type mismatch");
  return TABLE[i];
}
// every translated function's prologue: the stack left and the fuel
inline __attribute__((always_inline)) void enter() {
  if (__builtin_expect(uintptr_t(__builtin_frame_address(0)) < stack_limit, 0)) trap("call stack exhausted");
  if (__builtin_expect(--fuel < 0, 0)) trap("all fuel consumed");
}
inline __attribute__((always_inline)) void tick() {  // every loop iteration
  if (__builtin_expect(--fuel < 0, 0)) trap("all fuel consumed");
}

#define RT_DIV(B, S, U)                                                                          \
  inline S divs_##B(S a, S b) {                                                                 \
    if (!b) trap("integer divide by zero");                                                     \
    if (b == -1 && a == (S)((U)1 << (B - 1))) trap("integer overflow");                         \
    return a / b;                                                                                \
  }                                                                                              \
  inline S divu_##B(S a, S b) {                                                                 \
    if (!b) trap("integer divide by zero");                                                     \
    return (S)((U)a / (U)b);                                                                     \
  }                                                                                              \
  inline S rems_##B(S a, S b) {                                                                 \
    if (!b) trap("integer divide by zero");                                                     \
    if (b == -1) return 0;                                                                       \
    return a % b;                                                                                \
  }                                                                                              \
  inline S remu_##B(S a, S b) {                                                                 \
    if (!b) trap("integer divide by zero");                                                     \
    return (S)((U)a % (U)b);                                                                     \
  }                                                                                              \
  inline U rotl_##B(U a, U b) { b &= B - 1; return b ? (a << b) | (a >> (B - b)) : a; }        \
  inline U rotr_##B(U a, U b) { b &= B - 1; return b ? (a >> b) | (a << (B - b)) : a; }
RT_DIV(32, int32_t, uint32_t)
RT_DIV(64, int64_t, uint64_t)
inline uint32_t clz32(uint32_t a) { return a ? __builtin_clz(a) : 32; }
inline uint32_t ctz32(uint32_t a) { return a ? __builtin_ctz(a) : 32; }
inline uint64_t clz64(uint64_t a) { return a ? __builtin_clzll(a) : 64; }
inline uint64_t ctz64(uint64_t a) { return a ? __builtin_ctzll(a) : 64; }

// --- circom's host imports ---
inline std::string message() {
  std::string s;
  for (int32_t c; (c = exp_getMessageChar()) != 0;) {
    if (s.size() >= (1u << 20)) trap("a message of more than 1 MiB");
    s += char(c);
  }
  return s;
}
inline std::string err_str, msg_str, log_str;  // log_str: log()'s lines, each ended by "\n"
inline void host_exceptionHandler(int32_t code) { trap("circom exception", code); }
inline void host_printErrorMessage() {
  if (err_str.size() < (1u << 20)) err_str += message() + "\n";
}
inline void host_writeBufferMessage() {  // as witness_calculator.js: texts joined by spaces, a line per "\n"
  std::string m = message();
  if (log_str.size() + msg_str.size() > (64u << 20)) trap("more than 64 MiB of log() output");
  if (m == "\n") {
    log_str += msg_str + "\n";
    msg_str.clear();
  } else {
    if (!msg_str.empty()) msg_str += " ";
    msg_str += m;
  }
}
// log() of a value: the shared RW memory's 8 words as one integer, in decimal, appended as writeBufferMessage's texts
inline void host_showSharedRWMemory() {
  uint64_t w[4];
  for (int k = 0; k < 4; k++)
    w[k] = uint64_t(uint32_t(exp_readSharedRWMemory(2 * k))) | uint64_t(uint32_t(exp_readSharedRWMemory(2 * k + 1))) << 32;
  char buf[96];
  int n = 0;
  while (w[0] | w[1] | w[2] | w[3]) {  // divide by 10^19, the remainder's 19 digits (the last without leading zeros)
    unsigned __int128 rem = 0;
    for (int k = 3; k >= 0; k--) {
      const unsigned __int128 cur = (rem << 64) | w[k];
      w[k] = uint64_t(cur / 10000000000000000000ull);
      rem = cur % 10000000000000000000ull;
    }
    uint64_t r = uint64_t(rem);
    const bool last = !(w[0] | w[1] | w[2] | w[3]);
    for (int d = 0; d < 19 && (!last || r); d++) buf[n++] = char('0' + r % 10), r /= 10;
  }
  if (!n) buf[n++] = '0';
  std::string v(buf, buf + n);
  std::string text(v.rbegin(), v.rend());
  if (log_str.size() + msg_str.size() > (64u << 20)) trap("more than 64 MiB of log() output");
  if (!msg_str.empty()) msg_str += " ";
  msg_str += text;
}

// --- circom's field functions, natively ---
#ifdef SNARKD_WC_BLS12_381
using P = bls12_381::FrP;
#else
using P = bn254::FrP;
#endif
using F = Mont<P>;
using CF = snarkd::witness::CircomField<P>;
constexpr uint32_t LONG = 0x80000000u, MONT = 0x40000000u;

struct Hdr {
  int32_t sv;
  uint32_t type;
};
inline __attribute__((always_inline)) Hdr hdr(int32_t a) {
  chk(uint32_t(a), 40);  // every field function reads its operands' headers first: the whole element checked here
  uint64_t h;
  std::memcpy(&h, M + uint32_t(a), 8);
  return Hdr{int32_t(uint32_t(h)), uint32_t(h >> 32)};
}
inline __attribute__((always_inline)) F limbs(int32_t a) {
  chk(uint32_t(a), 40);
  F v;
  std::memcpy(v.v, M + uint32_t(a) + 8, 32);
  return v;
}
inline __attribute__((always_inline)) F short_normal(int32_t sv) {
  F v = F::zero();
  if (sv >= 0) {
    v.v[0] = uint64_t(sv);
    return v;
  }
  v.v[0] = uint64_t(-int64_t(sv));
  return v.neg();  // p - |sv|
}
inline __attribute__((always_inline)) F from_i64(int64_t x) {
  F v = F::zero();
  v.v[0] = uint64_t(x < 0 ? -x : x);
  return x < 0 ? v.neg() : v;
}
// Is the element's Montgomery form at hand (long Montgomery, or circom's literal: short with bit 30 and its
// Montgomery form kept)?
inline __attribute__((always_inline)) bool has_mont(uint32_t type) { return type & MONT; }
inline __attribute__((always_inline)) bool is_long(uint32_t type) { return type & LONG; }
// the value in Montgomery form
inline F read_mont(int32_t a) {
  Hdr h = hdr(a);
  if (h.type & MONT) return limbs(a);
  if (h.type & LONG) return limbs(a).to_mont();
  return short_normal(h.sv).to_mont();
}
// the value in normal form
inline F read_normal(int32_t a) {
  Hdr h = hdr(a);
  if (!(h.type & LONG)) return short_normal(h.sv);
  if (h.type & MONT) return limbs(a).from_mont();
  return limbs(a);
}
inline __attribute__((always_inline)) void write_short(int32_t r, int32_t sv) {
  chk(uint32_t(r), 8);
  uint64_t h = uint32_t(sv);
  std::memcpy(M + uint32_t(r), &h, 8);
}
inline __attribute__((always_inline)) void write_long(int32_t r, const F& v, bool mont) {
  chk(uint32_t(r), 40);
  uint64_t h = uint64_t(mont ? (LONG | MONT) : LONG) << 32;
  std::memcpy(M + uint32_t(r), &h, 8);
  std::memcpy(M + uint32_t(r) + 8, v.v, 32);
}
inline __attribute__((always_inline)) void write_i64(int32_t r, int64_t x) {
  if (x >= INT32_MIN && x <= INT32_MAX) return write_short(r, int32_t(x));
  write_long(r, from_i64(x), false);
}

inline __attribute__((always_inline)) void nat_Fr_copy(int32_t r, int32_t a) {
  chk(uint32_t(r), 40), chk(uint32_t(a), 40);
  std::memcpy(M + uint32_t(r), M + uint32_t(a), 40); }
// --- plain values as four scalars (L4), for the hot forms: the F (Mont) objects of the generic paths live in
// memory, built and copied in 8- and 16-byte pieces that defeat store-to-load forwarding (perf annotate: the
// stalls on those copies were most of Fr_sub's samples). Every load and store here is 8 bytes, values in registers.
struct L4 {
  u64 a0, a1, a2, a3;
};
inline __attribute__((always_inline)) L4 load4(int32_t a) {
  chk(uint32_t(a), 40);
  const uint8_t* p = M + uint32_t(a) + 8;
  L4 v;
  std::memcpy(&v.a0, p, 8), std::memcpy(&v.a1, p + 8, 8), std::memcpy(&v.a2, p + 16, 8), std::memcpy(&v.a3, p + 24, 8);
  return v;
}
inline __attribute__((always_inline)) void store4(int32_t r, const L4& v, uint32_t type) {
  chk(uint32_t(r), 40);
  uint8_t* p = M + uint32_t(r);
  const u64 h = u64(type) << 32;
  std::memcpy(p, &h, 8);
  std::memcpy(p + 8, &v.a0, 8), std::memcpy(p + 16, &v.a1, 8), std::memcpy(p + 24, &v.a2, 8), std::memcpy(p + 32, &v.a3, 8);
}
inline __attribute__((always_inline)) L4 short4(int32_t sv) {  // plain value of a short: sv, or p - |sv|
  if (sv >= 0) return L4{u64(sv), 0, 0, 0};
  const u64 s = u64(-int64_t(sv));
  u64 b;
  L4 v;
  b = __builtin_sub_overflow(P::MOD[0], s, &v.a0);
  v.a1 = P::MOD[1] - b;  // (no further borrow: MOD[1..3] are not 0)
  v.a2 = P::MOD[2];
  v.a3 = P::MOD[3];
  return v;
}
inline __attribute__((always_inline)) L4 f_to4(const F& f) { return L4{f.v[0], f.v[1], f.v[2], f.v[3]}; }
// the plain value of an element: short, long normal, or (rarely, a conversion) long Montgomery
inline __attribute__((always_inline)) L4 plain4(int32_t a, Hdr h) {
  if (!(h.type & LONG)) return short4(h.sv);
  if (!(h.type & MONT)) return load4(a);
  return f_to4(limbs(a).from_mont());
}
inline __attribute__((always_inline)) L4 add4(const L4& x, const L4& y) {  // (x + y) mod p, x, y < p
  u64 c = 0;
  L4 s;
  unsigned long long t;
  c = __builtin_uaddll_overflow(x.a0, y.a0, &t), s.a0 = t;
  c = __builtin_uaddll_overflow(x.a1, y.a1, &t) | __builtin_uaddll_overflow(t, c, &t), s.a1 = t;
  c = __builtin_uaddll_overflow(x.a2, y.a2, &t) | __builtin_uaddll_overflow(t, c, &t), s.a2 = t;
  s.a3 = x.a3 + y.a3 + c;  // < 2p < 2^255: no carry out
  L4 d;
  u64 b;
  b = __builtin_usubll_overflow(s.a0, P::MOD[0], &t), d.a0 = t;
  b = __builtin_usubll_overflow(s.a1, P::MOD[1], &t) | __builtin_usubll_overflow(t, b, &t), d.a1 = t;
  b = __builtin_usubll_overflow(s.a2, P::MOD[2], &t) | __builtin_usubll_overflow(t, b, &t), d.a2 = t;
  b = __builtin_usubll_overflow(s.a3, P::MOD[3], &t) | __builtin_usubll_overflow(t, b, &t), d.a3 = t;
  return b ? s : d;
}
inline __attribute__((always_inline)) L4 sub4(const L4& x, const L4& y) {  // (x - y) mod p
  L4 d;
  unsigned long long t;
  u64 b;
  b = __builtin_usubll_overflow(x.a0, y.a0, &t), d.a0 = t;
  b = __builtin_usubll_overflow(x.a1, y.a1, &t) | __builtin_usubll_overflow(t, b, &t), d.a1 = t;
  b = __builtin_usubll_overflow(x.a2, y.a2, &t) | __builtin_usubll_overflow(t, b, &t), d.a2 = t;
  b = __builtin_usubll_overflow(x.a3, y.a3, &t) | __builtin_usubll_overflow(t, b, &t), d.a3 = t;
  if (!b) return d;
  L4 s;
  u64 c;
  c = __builtin_uaddll_overflow(d.a0, P::MOD[0], &t), s.a0 = t;
  c = __builtin_uaddll_overflow(d.a1, P::MOD[1], &t) | __builtin_uaddll_overflow(t, c, &t), s.a1 = t;
  c = __builtin_uaddll_overflow(d.a2, P::MOD[2], &t) | __builtin_uaddll_overflow(t, c, &t), s.a2 = t;
  s.a3 = d.a3 + P::MOD[3] + c;
  return s;
}
inline __attribute__((always_inline)) bool lt4(const L4& x, const L4& y) {
  if (x.a3 != y.a3) return x.a3 < y.a3;
  if (x.a2 != y.a2) return x.a2 < y.a2;
  if (x.a1 != y.a1) return x.a1 < y.a1;
  return x.a0 < y.a0;
}
inline __attribute__((always_inline)) bool eq4(const L4& x, const L4& y) {
  return !((x.a0 ^ y.a0) | (x.a1 ^ y.a1) | (x.a2 ^ y.a2) | (x.a3 ^ y.a3));
}
constexpr L4 HALF4 = {(P::MOD[0] >> 1) | (P::MOD[1] << 63), (P::MOD[1] >> 1) | (P::MOD[2] << 63),
                      (P::MOD[2] >> 1) | (P::MOD[3] << 63), P::MOD[3] >> 1};  // (p - 1) / 2
inline __attribute__((always_inline)) bool neg4(const L4& x) { return lt4(HALF4, x); }
// val(x) < val(y), val(x) = x - p above (p - 1) / 2
inline __attribute__((always_inline)) bool less4(const L4& x, const L4& y) {
  const bool nx = neg4(x), ny = neg4(y);
  if (nx != ny) return nx;
  return lt4(x, y);
}

// Forms (as snarkd's control-flow run, witness/plain_forms.hpp): a value stays in the form the operation that
// made it left it in. + and -: both Montgomery stays Montgomery, else plain (a Montgomery operand converted);
// *: Montgomery x Montgomery is Montgomery, plain x Montgomery the plain product (one Montgomery product),
// plain x plain the integer product when below p, else one operand converted. circom's literals (short with bit
// 30) carry both forms.
inline __attribute__((always_inline)) F plain_of(int32_t a, Hdr h) {
  if (!(h.type & LONG)) return short_normal(h.sv);
  if (h.type & MONT) return limbs(a).from_mont();
  return limbs(a);
}
template <bool SUB>
inline __attribute__((always_inline)) void addsub(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG)) return write_i64(r, SUB ? int64_t(x.sv) - y.sv : int64_t(x.sv) + y.sv);
  if (has_mont(x.type) && has_mont(y.type)) {
    const L4 u = load4(a), v = load4(b);
    return store4(r, SUB ? sub4(u, v) : add4(u, v), LONG | MONT);
  }
  const L4 u = plain4(a, x), v = plain4(b, y);
  store4(r, SUB ? sub4(u, v) : add4(u, v), LONG);
}
// plain x plain: the integer product when both have two limbs at most and it is below p
inline __attribute__((always_inline)) bool small_product(const F& a, const F& b, F& out) {
  if (a.v[2] | a.v[3] | b.v[2] | b.v[3]) return false;
  const u64 a0 = a.v[0], a1 = a.v[1], b0 = b.v[0], b1 = b.v[1];
  const u128 t00 = u128(a0) * b0, t01 = u128(a0) * b1, t10 = u128(a1) * b0, t11 = u128(a1) * b1;
  const u128 mid = (t00 >> 64) + u64(t01) + u64(t10);
  const u128 hi = (mid >> 64) + (t01 >> 64) + (t10 >> 64) + u64(t11);
  out.v[0] = u64(t00), out.v[1] = u64(mid), out.v[2] = u64(hi), out.v[3] = u64(hi >> 64) + u64(t11 >> 64);
  return F::lt_mod(out.v);
}
constexpr L4 ZERO4 = {0, 0, 0, 0};
// u * v for u, v below 2^128, when the product is below p
inline __attribute__((always_inline)) bool small_mul4(const L4& u, const L4& v, L4& pr) {
  const u128 t00 = u128(u.a0) * v.a0, t01 = u128(u.a0) * v.a1, t10 = u128(u.a1) * v.a0, t11 = u128(u.a1) * v.a1;
  const u128 mid = (t00 >> 64) + u64(t01) + u64(t10);
  const u128 hi = (mid >> 64) + (t01 >> 64) + (t10 >> 64) + u64(t11);
  pr = L4{u64(t00), u64(mid), u64(hi), u64(hi >> 64) + u64(t11 >> 64)};
  return lt4(pr, L4{P::MOD[0], P::MOD[1], P::MOD[2], P::MOD[3]});
}
// a / b: b's inverse remembered (64 divisors, direct-mapped by a hash of the value: circom's bigint code divides
// by the same few values again and again)
struct InvMemo {
  F key[64], inv[64];
  bool used[64] = {};
};
inline InvMemo inv_memo;
inline F inverse(const F& m) {
  const unsigned h = unsigned((m.v[0] ^ (m.v[0] >> 29) ^ m.v[1] ^ (m.v[3] >> 7)) * 0x9E3779B97F4A7C15ull >> 58);
  if (inv_memo.used[h] && inv_memo.key[h] == m) return inv_memo.inv[h];
  const F i = CF::inv(m);
  inv_memo.key[h] = m, inv_memo.inv[h] = i, inv_memo.used[h] = true;
  return i;
}
// \ and % of two plain values below 2^128 (the integers: x in [0, p)): the 128-bit division
template <bool MOD>
inline __attribute__((always_inline)) bool divmod128(int32_t r, int32_t a, Hdr x, int32_t b, Hdr y) {
  if ((x.type & MONT && x.type & LONG) || (y.type & MONT && y.type & LONG)) return false;
  const L4 u = plain4(a, x), v = plain4(b, y);
  if (u.a2 | u.a3 | v.a2 | v.a3 || !(v.a0 | v.a1)) return false;
  const u128 n = u128(u.a1) << 64 | u.a0, d = u128(v.a1) << 64 | v.a0;
  const u128 o = MOD ? n % d : n / d;
  store4(r, L4{u64(o), u64(o >> 64), 0, 0}, LONG);
  return true;
}
inline __attribute__((always_inline)) bool is_true(int32_t a) {
  Hdr x = hdr(a);
  if (!(x.type & LONG)) return x.sv != 0;
  return !limbs(a).is_zero();
}
inline __attribute__((always_inline)) int32_t nat_Fr_isTrue(int32_t a) { return is_true(a); }
inline __attribute__((always_inline)) int32_t nat_Fr_toInt(int32_t a) {
  Hdr x = hdr(a);
  if (!(x.type & LONG)) return x.sv;
  if (!(x.type & MONT)) {  // long plain: a small non-negative one directly
    const L4 v = load4(a);
    if (!(v.a1 | v.a2 | v.a3) && v.a0 < (u64(1) << 31)) return int32_t(v.a0);
  }
  return CF::n_to_int32(read_normal(a));
}
// val(a) < val(b) (comparisons on val: x - p for x > (p-1)/2)
inline bool less(int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG)) return x.sv < y.sv;
  return less4(plain4(a, x), plain4(b, y));
}
inline bool equal(int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG)) return x.sv == y.sv;
  if (has_mont(x.type) && has_mont(y.type)) return eq4(load4(a), load4(b));
  return eq4(plain4(a, x), plain4(b, y));
}

// The native field functions (the generated code's calls of circom's ffwasm functions), gathered here, after every
// helper they use, so that the fast tier can take them from a prebuilt object (round 33, compiled/__init__.py):
// SNARKD_WC_RUNTIME_EXTERN (the generated units) declares them only, SNARKD_WC_RUNTIME_OBJECT (the runtime object,
// one translation unit) defines them out of line; otherwise (the full tier, one build) they are inline here.
#if defined(SNARKD_WC_RUNTIME_EXTERN)
void nat_Fr_copyn(int32_t r, int32_t a, int32_t n);
void nat_Fr_add(int32_t r, int32_t a, int32_t b);
void nat_Fr_sub(int32_t r, int32_t a, int32_t b);
void nat_Fr_neg(int32_t r, int32_t a);
void nat_Fr_mul(int32_t r, int32_t a, int32_t b);
void nat_Fr_square(int32_t r, int32_t a);
void nat_Fr_div(int32_t r, int32_t a, int32_t b);
void nat_Fr_inv(int32_t r, int32_t a);
void nat_Fr_pow(int32_t r, int32_t a, int32_t b);
void nat_Fr_idiv(int32_t r, int32_t a, int32_t b);
void nat_Fr_mod(int32_t r, int32_t a, int32_t b);
void nat_Fr_eq(int32_t r, int32_t a, int32_t b);
void nat_Fr_neq(int32_t r, int32_t a, int32_t b);
void nat_Fr_lt(int32_t r, int32_t a, int32_t b);
void nat_Fr_gt(int32_t r, int32_t a, int32_t b);
void nat_Fr_leq(int32_t r, int32_t a, int32_t b);
void nat_Fr_geq(int32_t r, int32_t a, int32_t b);
void nat_Fr_land(int32_t r, int32_t a, int32_t b);
void nat_Fr_lor(int32_t r, int32_t a, int32_t b);
void nat_Fr_lnot(int32_t r, int32_t a);
void nat_Fr_band(int32_t r, int32_t a, int32_t b);
void nat_Fr_bnot(int32_t r, int32_t a);
void nat_Fr_shl(int32_t r, int32_t a, int32_t b);
void nat_Fr_shr(int32_t r, int32_t a, int32_t b);
void nat_Fr_bor(int32_t r, int32_t a, int32_t b);
void nat_Fr_bxor(int32_t r, int32_t a, int32_t b);
#else
#if defined(SNARKD_WC_RUNTIME_OBJECT)
#define SNARKD_WC_NAT
#else
#define SNARKD_WC_NAT inline
#endif
SNARKD_WC_NAT void nat_Fr_copyn(int32_t r, int32_t a, int32_t n) {
  for (uint32_t k = 0; int64_t(k) < int64_t(n); k++)  // (wrapping as the wasm's i32 arithmetic does)
    nat_Fr_copy(int32_t(uint32_t(r) + 40u * k), int32_t(uint32_t(a) + 40u * k));
}
SNARKD_WC_NAT void nat_Fr_add(int32_t r, int32_t a, int32_t b) { addsub<false>(r, a, b); }
SNARKD_WC_NAT void nat_Fr_sub(int32_t r, int32_t a, int32_t b) { addsub<true>(r, a, b); }
SNARKD_WC_NAT void nat_Fr_neg(int32_t r, int32_t a) {
  Hdr x = hdr(a);
  if (!(x.type & LONG)) return write_i64(r, -int64_t(x.sv));
  write_long(r, limbs(a).neg(), has_mont(x.type));
}
SNARKD_WC_NAT void nat_Fr_mul(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG)) return write_i64(r, int64_t(x.sv) * y.sv);
  const bool la = is_long(x.type), lb = is_long(y.type);
  const bool ma = has_mont(x.type), mb = has_mont(y.type);
  // Montgomery at hand on both, and at least one a long Montgomery value: Montgomery product
  if (ma && mb && ((la && ma) || (lb && mb))) return write_long(r, limbs(a) * limbs(b), true);
  // one long Montgomery, the other plain (or a literal: its plain value): the plain product in one step
  if (la && ma) return write_long(r, limbs(a) * (lb ? limbs(b) : short_normal(y.sv)), false);
  if (lb && mb) return write_long(r, (la ? limbs(a) : short_normal(x.sv)) * limbs(b), false);
  // both plain: the integer product when both have two limbs at most and it is below p (in registers)
  const L4 u = la ? load4(a) : short4(x.sv), v = lb ? load4(b) : short4(y.sv);
  L4 pr;
  if (!(u.a2 | u.a3 | v.a2 | v.a3) && small_mul4(u, v, pr)) return store4(r, pr, LONG);
  // circom's negative values (p - m, m small: carries, signed limbs): the product of the magnitudes, negated
  {
    const bool nu = neg4(u), nv = neg4(v);
    if (nu || nv) {
      const L4 mu = nu ? sub4(ZERO4, u) : u, mv = nv ? sub4(ZERO4, v) : v;
      if (!(mu.a2 | mu.a3 | mv.a2 | mv.a3) && small_mul4(mu, mv, pr))
        return store4(r, nu != nv ? sub4(ZERO4, pr) : pr, LONG);
    }
  }
  F uf, vf;
  uf.v[0] = u.a0, uf.v[1] = u.a1, uf.v[2] = u.a2, uf.v[3] = u.a3;
  vf.v[0] = v.a0, vf.v[1] = v.a1, vf.v[2] = v.a2, vf.v[3] = v.a3;
  if (!la && ma) return write_long(r, limbs(a) * vf, false);  // a literal: its Montgomery form at hand
  if (!lb && mb) return write_long(r, uf * limbs(b), false);
  write_long(r, uf.to_mont() * vf, false);
}
SNARKD_WC_NAT void nat_Fr_square(int32_t r, int32_t a) { nat_Fr_mul(r, a, a); }
SNARKD_WC_NAT void nat_Fr_div(int32_t r, int32_t a, int32_t b) { write_long(r, read_mont(a) * inverse(read_mont(b)), true); }
SNARKD_WC_NAT void nat_Fr_inv(int32_t r, int32_t a) { write_long(r, CF::inv(read_mont(a)), true); }
SNARKD_WC_NAT void nat_Fr_pow(int32_t r, int32_t a, int32_t b) {
  const F e = read_normal(b), base = read_normal(a);
  if (!(e.v[1] | e.v[2] | e.v[3]) && e.v[0] < 128 && !(base.v[1] | base.v[2] | base.v[3]) && base.v[0] < (u64(1) << 32)) {
    u128 acc = 1;
    bool ok = true;
    for (u64 k = 0; k < e.v[0] && ok; k++) ok = !__builtin_mul_overflow(acc, base.v[0], &acc);
    if (ok) {  // below 2^128 < p
      F o = F::zero();
      o.v[0] = u64(acc), o.v[1] = u64(acc >> 64);
      return write_long(r, o, false);
    }
  }
  write_long(r, CF::pow_n(read_mont(a), e), true);
}
SNARKD_WC_NAT void nat_Fr_idiv(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv > 0) return write_short(r, x.sv / y.sv);
  if (divmod128<false>(r, a, x, b, y)) return;
  F q;
  if (CF::n_idiv(read_normal(a), read_normal(b), q)) trap("division by zero");
  write_long(r, q, false);
}
SNARKD_WC_NAT void nat_Fr_mod(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv > 0) return write_short(r, x.sv % y.sv);
  if (divmod128<true>(r, a, x, b, y)) return;
  F q;
  if (CF::n_mod(read_normal(a), read_normal(b), q)) trap("division by zero");
  write_long(r, q, false);
}
SNARKD_WC_NAT void nat_Fr_eq(int32_t r, int32_t a, int32_t b) { write_short(r, equal(a, b)); }
SNARKD_WC_NAT void nat_Fr_neq(int32_t r, int32_t a, int32_t b) { write_short(r, !equal(a, b)); }
SNARKD_WC_NAT void nat_Fr_lt(int32_t r, int32_t a, int32_t b) { write_short(r, less(a, b)); }
SNARKD_WC_NAT void nat_Fr_gt(int32_t r, int32_t a, int32_t b) { write_short(r, less(b, a)); }
SNARKD_WC_NAT void nat_Fr_leq(int32_t r, int32_t a, int32_t b) { write_short(r, !less(b, a)); }
SNARKD_WC_NAT void nat_Fr_geq(int32_t r, int32_t a, int32_t b) { write_short(r, !less(a, b)); }
SNARKD_WC_NAT void nat_Fr_land(int32_t r, int32_t a, int32_t b) { write_short(r, is_true(a) && is_true(b)); }
SNARKD_WC_NAT void nat_Fr_lor(int32_t r, int32_t a, int32_t b) { write_short(r, is_true(a) || is_true(b)); }
SNARKD_WC_NAT void nat_Fr_lnot(int32_t r, int32_t a) { write_short(r, !is_true(a)); }
SNARKD_WC_NAT void nat_Fr_band(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv >= 0) return write_short(r, x.sv & y.sv);
  const L4 u = plain4(a, x), v = plain4(b, y);  // both below p: so is u & v (no mask, no reduction)
  store4(r, L4{u.a0 & v.a0, u.a1 & v.a1, u.a2 & v.a2, u.a3 & v.a3}, LONG);
}
// bit operations on the integers: normal form in and out
#define RT_BITOP(NAME, FN, OP)                                                                    \
  SNARKD_WC_NAT void nat_Fr_##NAME(int32_t r, int32_t a, int32_t b) {                                    \
    Hdr x = hdr(a), y = hdr(b);                                                                   \
    if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv >= 0) return write_short(r, x.sv OP y.sv); \
    write_long(r, CF::FN(read_normal(a), read_normal(b)), false);                                 \
  }
RT_BITOP(bor, n_bor, |)
RT_BITOP(bxor, n_bxor, ^)
SNARKD_WC_NAT void nat_Fr_bnot(int32_t r, int32_t a) { write_long(r, CF::n_bnot(read_normal(a)), false); }
SNARKD_WC_NAT void nat_Fr_shl(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv >= 0 && y.sv < 32)
    return write_i64(r, int64_t(uint64_t(uint32_t(x.sv)) << y.sv));
  // a plain value (short >= 0 or long plain) by 0 <= k < 256 whose result stays below 2^(BITS - 1) < p: the limbs
  // shifted (no mask, no reduction)
  if (!(y.type & LONG) && y.sv >= 0 && y.sv < 256 && !((x.type & LONG) && (x.type & MONT)) &&
      ((x.type & LONG) || x.sv >= 0)) {
    const L4 u = (x.type & LONG) ? load4(a) : L4{u64(uint32_t(x.sv)), 0, 0, 0};
    const unsigned len = u.a3 ? 256 - __builtin_clzll(u.a3) : u.a2 ? 192 - __builtin_clzll(u.a2)
                       : u.a1 ? 128 - __builtin_clzll(u.a1) : u.a0 ? 64 - __builtin_clzll(u.a0) : 0;
    if (len + unsigned(y.sv) < CF::BITS) {
      u64 w[8] = {0, 0, 0, 0, u.a0, u.a1, u.a2, u.a3};
      const unsigned q = unsigned(y.sv) / 64, k = unsigned(y.sv) % 64;
      L4 o;
      u64* t[4] = {&o.a0, &o.a1, &o.a2, &o.a3};
      for (unsigned i = 0; i < 4; i++) *t[i] = k ? (w[4 + i - q] << k) | (w[3 + i - q] >> (64 - k)) : w[4 + i - q];
      return store4(r, o, LONG);
    }
  }
  write_long(r, CF::n_shl(read_normal(a), read_normal(b)), false);
}
SNARKD_WC_NAT void nat_Fr_shr(int32_t r, int32_t a, int32_t b) {
  Hdr x = hdr(a), y = hdr(b);
  if (!((x.type | y.type) & LONG) && x.sv >= 0 && y.sv >= 0) return write_short(r, y.sv >= 31 ? 0 : x.sv >> y.sv);
  if (!(y.type & LONG) && y.sv >= 0 && y.sv < 256 && (x.type & LONG) && !(x.type & MONT)) {
    // a long plain value by 0 <= k < 256 (the result is below the value, so below p: no adjustment)
    const L4 u = load4(a);
    u64 w[8] = {u.a0, u.a1, u.a2, u.a3, 0, 0, 0, 0};
    const unsigned q = unsigned(y.sv) / 64, k = unsigned(y.sv) % 64;
    L4 o;
    u64* t[4] = {&o.a0, &o.a1, &o.a2, &o.a3};
    for (unsigned i = 0; i < 4; i++)
      *t[i] = k ? (w[i + q] >> k) | (w[i + q + 1] << (64 - k)) : w[i + q];
    return store4(r, o, LONG);
  }
  write_long(r, CF::n_shr(read_normal(a), read_normal(b)), false);
}
#undef SNARKD_WC_NAT
#endif
}  // namespace rt

#ifdef SNARKD_WC_RUNTIME_O3_PUSHED
#pragma GCC pop_options
#undef SNARKD_WC_RUNTIME_O3_PUSHED
#endif
