// CRC-32C (Castagnoli), the checksum of the prepared-key sidecar's blocks: the
// SSE4.2 crc32 instruction where the CPU has it (~10 GB/s, so checking a few MB
// at every load costs well under a millisecond), else a table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace snarkd {

inline uint32_t crc32c_table_update(uint32_t crc, const uint8_t* p, size_t n) {
  static const auto table = [] {
    struct T { uint32_t v[256]; } t{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
      t.v[i] = c;
    }
    return t;
  }();
  for (size_t i = 0; i < n; i++) crc = table.v[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpu_has_sse42() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 20));
}
__attribute__((target("sse4.2"))) inline uint32_t crc32c_hw_update(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
  }
  uint32_t c32 = (uint32_t)c;
  for (; n; n--, p++) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
#endif

// A running crc32c: start from 0xffffffff, feed the parts in order, xor the end with 0xffffffff.
inline uint32_t crc32c_update(uint32_t crc, const uint8_t* p, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool hw = cpu_has_sse42();
  if (hw) return crc32c_hw_update(crc, p, n);
#endif
  return crc32c_table_update(crc, p, n);
}

// crc32c of [p, p + n) (standard: initial and final xor with 0xffffffff)
inline uint32_t crc32c(const uint8_t* p, size_t n) {
  uint32_t crc = 0xffffffffu;
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool hw = cpu_has_sse42();
  if (hw) return ~crc32c_hw_update(crc, p, n);
#endif
  return ~crc32c_table_update(crc, p, n);
}

}  // namespace snarkd
