// SHA-256 (FIPS 180-4), for the digests a one-shot `snarkd witness` takes: the circuit .wasm's (the program
// file's binding) and the HMAC tags of this user's cache files. Python's hashlib would do them, but importing it
// loads OpenSSL's libcrypto, ~4 ms of that command's ~70 ms whole-process CPU; here the x86 SHA extensions
// (sha256rnds2, ~2 GB/s) where the CPU has them, else the portable rounds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace snarkd {

alignas(16) inline constexpr uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t sha256_rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// `blocks` 64-byte blocks at p into the state h[8] (a, ..., h).
inline void sha256_blocks_portable(uint32_t h[8], const uint8_t* p, size_t blocks) {
  for (; blocks; --blocks, p += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)
      w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; ++t) {
      uint32_t s0 = sha256_rotr(w[t - 15], 7) ^ sha256_rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = sha256_rotr(w[t - 2], 17) ^ sha256_rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; ++t) {
      uint32_t t1 = k + (sha256_rotr(e, 6) ^ sha256_rotr(e, 11) ^ sha256_rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                    kSha256K[t] + w[t];
      uint32_t t2 = (sha256_rotr(a, 2) ^ sha256_rotr(a, 13) ^ sha256_rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpu_has_sha_ni() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9))) return false;  // SSE4.1, SSSE3
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));                          // SHA
}

// The SHA extensions keep the state as two vectors, ABEF and CDGH, and take four rounds' message words
// (plus their constants) per pair of sha256rnds2; sha256msg1/msg2 extend the schedule four words at a time.
__attribute__((target("sha,sse4.1,ssse3"))) inline void sha256_blocks_ni(uint32_t h[8], const uint8_t* p,
                                                                        size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128((const __m128i*)&h[0]);
  __m128i hgfe = _mm_loadu_si128((const __m128i*)&h[4]);
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks; --blocks, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w[4];  // the schedule's last 16 words, four to a vector, as a ring
    for (int i = 0; i < 16; ++i) {
      __m128i& cur = w[i & 3];
      if (i < 4) {
        cur = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(p + 16 * i)), bswap);
      } else {  // words 4i..4i+3 from those 16, 15, 7 and 2 back (w[i&3] still holds group i-4)
        __m128i t = _mm_sha256msg1_epu32(cur, w[(i - 3) & 3]);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w[(i - 1) & 3], w[(i - 2) & 3], 4));
        cur = _mm_sha256msg2_epu32(t, w[(i - 1) & 3]);
      }
      __m128i m = _mm_add_epi32(cur, _mm_load_si128((const __m128i*)&kSha256K[4 * i]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i*)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i*)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

inline void sha256_blocks(uint32_t h[8], const uint8_t* p, size_t blocks) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool ni = cpu_has_sha_ni();
  if (ni) return sha256_blocks_ni(h, p, blocks);
#endif
  sha256_blocks_portable(h, p, blocks);
}

// A running SHA-256: update with the parts in order, then final.
struct Sha256 {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf[64];
  size_t held = 0;     // bytes in buf
  uint64_t total = 0;  // bytes fed

  void update(const uint8_t* p, size_t n) {
    total += n;
    if (held) {
      size_t take = n < 64 - held ? n : 64 - held;
      std::memcpy(buf + held, p, take);
      held += take, p += take, n -= take;
      if (held < 64) return;
      sha256_blocks(h, buf, 1);
      held = 0;
    }
    sha256_blocks(h, p, n / 64);
    p += n / 64 * 64, n %= 64;
    std::memcpy(buf, p, n);
    held = n;
  }

  void final(uint8_t out[32]) {
    uint64_t bits = total * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (held < 56 ? 56 : 120) - held;
    for (int i = 0; i < 8; ++i) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    update(pad, padlen + 8);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
  }
};

}  // namespace snarkd
