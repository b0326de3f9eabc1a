// SHA-256 (FIPS 180-4) for the witness module, so that a one-shot `snarkd witness` process can hash the .wasm and
// check its cache files' HMAC tags without loading OpenSSL (Python's _hashlib: ~2.1 ms of a ~70 ms process on the
// RSA verifier, round 35). Used only where the CPU has the SHA extensions (sha_ni()): there it hashes as fast as
// OpenSSL; elsewhere Python keeps OpenSSL (formats/file_trust.py), so the portable block function below is the
// reference the tests hold the SHA-NI one to, and a fallback, not a path any process is meant to take.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SNARKD_SHA_X86 1
#endif

namespace snarkd::sha256 {

alignas(16) inline constexpr uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// the compression function over `blocks` 64-byte blocks, portable form
inline void blocks_portable(uint32_t h[8], const uint8_t* p, size_t blocks) {
  for (; blocks; --blocks, p += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)
      w[t] = uint32_t(p[4 * t]) << 24 | uint32_t(p[4 * t + 1]) << 16 | uint32_t(p[4 * t + 2]) << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; ++t) {
      const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; ++t) {
      const uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
}

#ifdef SNARKD_SHA_X86
// The SHA extensions' form: the state as two lanes-of-four registers (A,B,E,F) and (C,D,G,H), as sha256rnds2 takes
// them; the message schedule kept as four registers of four words, each group of four new words from the four before
// it (W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16]: msg1 gives the s0 and W[t-16] terms, the W[t-7] words are
// the last group's first word after the one before's last three, msg2 adds the s1 terms).
__attribute__((target("sha,sse4.1,ssse3"))) inline void blocks_ni(uint32_t h[8], const uint8_t* p, size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));      // lanes A B C D
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4));  // lanes E F G H
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks; --blocks, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i m[4];
    for (int g = 0; g < 16; ++g) {
      __m128i& cur = m[g & 3];
      if (g < 4) {
        cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), bswap);
      } else {
        const __m128i prev = m[(g + 3) & 3];
        const __m128i w7 = _mm_alignr_epi8(prev, m[(g + 2) & 3], 4);
        cur = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(cur, m[(g + 1) & 3]), w7), prev);
      }
      const __m128i k = _mm_add_epi32(cur, _mm_load_si128(reinterpret_cast<const __m128i*>(K + 4 * g)));
      // two rounds: the new (A,B,E,F) goes into cdgh's register, and the old one, in abef's, is the new (C,D,G,H);
      // two more with the roles of the registers crossed put both back where their names say
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), hgfe);
}
#endif

// whether this CPU has the SHA extensions (CPUID leaf 7, EBX bit 29) and SSE4.1 (leaf 1, ECX bit 19)
inline bool sha_ni() {
#ifdef SNARKD_SHA_X86
  static const bool has = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9))) return false;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return bool(b & (1u << 29));
  }();
  return has;
#else
  return false;
#endif
}

// A running SHA-256: update any number of times, then digest (the object stays usable: digest copies the state).
struct State {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf[64];
  size_t used = 0;
  uint64_t total = 0;
  bool portable = false;  // the reference form, whatever the CPU (the tests' second opinion)

  void blocks(const uint8_t* p, size_t n) {
#ifdef SNARKD_SHA_X86
    if (!portable && sha_ni()) return blocks_ni(h, p, n);
#endif
    blocks_portable(h, p, n);
  }

  void update(const uint8_t* p, size_t n) {
    total += n;
    if (used) {
      const size_t take = n < 64 - used ? n : 64 - used;
      std::memcpy(buf + used, p, take);
      used += take, p += take, n -= take;
      if (used < 64) return;
      blocks(buf, 1);
      used = 0;
    }
    if (n >= 64) {
      blocks(p, n / 64);
      p += n / 64 * 64, n %= 64;
    }
    std::memcpy(buf, p, n);
    used = n;
  }

  void digest(uint8_t out[32]) const {
    State s = *this;
    const uint64_t bits = total * 8;
    const uint8_t pad = 0x80;
    s.update(&pad, 1);
    const uint8_t zeros[64] = {};
    s.update(zeros, (s.used <= 56 ? 56 : 120) - s.used);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(bits >> (56 - 8 * i));
    s.update(len, 8);
    for (int i = 0; i < 8; ++i)
      out[4 * i] = uint8_t(s.h[i] >> 24), out[4 * i + 1] = uint8_t(s.h[i] >> 16), out[4 * i + 2] = uint8_t(s.h[i] >> 8),
      out[4 * i + 3] = uint8_t(s.h[i]);
  }
};

}  // namespace snarkd::sha256
