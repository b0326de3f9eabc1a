// The wasm MVP's integer instructions (i32/i64 tests, comparisons, arithmetic, shifts, rotations,
// wraps and extensions), exactly as the spec defines them, traps included: the interpreter's
// (interp.hpp) plain arithmetic, which no circom value flows through.
#pragma once
#include <climits>
#include <cstdint>

namespace snarkd::witness {

inline const char* const NOT_NUMERIC = "not an integer instruction";  // the decoder's bug, not a trap

// One MVP integer instruction (tests, comparisons, arithmetic, conversions) on the operand stack
// S[0, sp). Returns nullptr, or the trap's text (the caller raises it).
inline const char* wasm_numeric(uint16_t op, uint64_t* S, uint32_t& sp) {
#define I32(x) uint32_t(x)
#define I64(x) uint64_t(x)
  switch (op) {
    case 0x45: S[sp - 1] = I32(S[sp - 1]) == 0; return nullptr;
    case 0x50: S[sp - 1] = S[sp - 1] == 0; return nullptr;
#define CMP32(OPC, EXPR) case OPC: { uint32_t b = I32(S[--sp]), a = I32(S[sp - 1]); (void)a; (void)b; S[sp - 1] = (EXPR) ? 1 : 0; return nullptr; }
    CMP32(0x46, a == b) CMP32(0x47, a != b) CMP32(0x48, int32_t(a) < int32_t(b)) CMP32(0x49, a < b)
    CMP32(0x4A, int32_t(a) > int32_t(b)) CMP32(0x4B, a > b) CMP32(0x4C, int32_t(a) <= int32_t(b))
    CMP32(0x4D, a <= b) CMP32(0x4E, int32_t(a) >= int32_t(b)) CMP32(0x4F, a >= b)
#undef CMP32
#define CMP64(OPC, EXPR) case OPC: { uint64_t b = S[--sp], a = S[sp - 1]; S[sp - 1] = (EXPR) ? 1 : 0; return nullptr; }
    CMP64(0x51, a == b) CMP64(0x52, a != b) CMP64(0x53, int64_t(a) < int64_t(b)) CMP64(0x54, a < b)
    CMP64(0x55, int64_t(a) > int64_t(b)) CMP64(0x56, a > b) CMP64(0x57, int64_t(a) <= int64_t(b))
    CMP64(0x58, a <= b) CMP64(0x59, int64_t(a) >= int64_t(b)) CMP64(0x5A, a >= b)
#undef CMP64
    case 0x67: { uint32_t a = I32(S[sp - 1]); S[sp - 1] = a ? __builtin_clz(a) : 32; return nullptr; }
    case 0x68: { uint32_t a = I32(S[sp - 1]); S[sp - 1] = a ? __builtin_ctz(a) : 32; return nullptr; }
    case 0x69: S[sp - 1] = __builtin_popcount(I32(S[sp - 1])); return nullptr;
    case 0x79: { uint64_t a = S[sp - 1]; S[sp - 1] = a ? __builtin_clzll(a) : 64; return nullptr; }
    case 0x7A: { uint64_t a = S[sp - 1]; S[sp - 1] = a ? __builtin_ctzll(a) : 64; return nullptr; }
    case 0x7B: S[sp - 1] = __builtin_popcountll(S[sp - 1]); return nullptr;
#define BIN32(OPC, EXPR) case OPC: { uint32_t b = I32(S[--sp]), a = I32(S[sp - 1]); S[sp - 1] = I32(EXPR); return nullptr; }
    BIN32(0x6A, a + b) BIN32(0x6B, a - b) BIN32(0x6C, a * b)
    case 0x6D: {
      int32_t b = int32_t(S[--sp]), a = int32_t(S[sp - 1]);
      if (b == 0) return "integer divide by zero";
      if (a == INT32_MIN && b == -1) return "integer overflow";
      S[sp - 1] = I32(a / b);
      return nullptr;
    }
    case 0x6E: { uint32_t b = I32(S[--sp]), a = I32(S[sp - 1]); if (!b) return "integer divide by zero"; S[sp - 1] = a / b; return nullptr; }
    case 0x6F: {
      int32_t b = int32_t(S[--sp]), a = int32_t(S[sp - 1]);
      if (b == 0) return "integer divide by zero";
      S[sp - 1] = (b == -1) ? 0 : I32(a % b);
      return nullptr;
    }
    case 0x70: { uint32_t b = I32(S[--sp]), a = I32(S[sp - 1]); if (!b) return "integer divide by zero"; S[sp - 1] = a % b; return nullptr; }
    BIN32(0x71, a & b) BIN32(0x72, a | b) BIN32(0x73, a ^ b) BIN32(0x74, a << (b & 31))
    BIN32(0x75, uint32_t(int32_t(a) >> (b & 31))) BIN32(0x76, a >> (b & 31))
    BIN32(0x77, (a << (b & 31)) | (a >> ((32 - (b & 31)) & 31)))
    BIN32(0x78, (a >> (b & 31)) | (a << ((32 - (b & 31)) & 31)))
#undef BIN32
#define BIN64(OPC, EXPR) case OPC: { uint64_t b = S[--sp], a = S[sp - 1]; S[sp - 1] = I64(EXPR); return nullptr; }
    BIN64(0x7C, a + b) BIN64(0x7D, a - b) BIN64(0x7E, a * b)
    case 0x7F: {
      int64_t b = int64_t(S[--sp]), a = int64_t(S[sp - 1]);
      if (b == 0) return "integer divide by zero";
      if (a == INT64_MIN && b == -1) return "integer overflow";
      S[sp - 1] = I64(a / b);
      return nullptr;
    }
    case 0x80: { uint64_t b = S[--sp], a = S[sp - 1]; if (!b) return "integer divide by zero"; S[sp - 1] = a / b; return nullptr; }
    case 0x81: {
      int64_t b = int64_t(S[--sp]), a = int64_t(S[sp - 1]);
      if (b == 0) return "integer divide by zero";
      S[sp - 1] = (b == -1) ? 0 : I64(a % b);
      return nullptr;
    }
    case 0x82: { uint64_t b = S[--sp], a = S[sp - 1]; if (!b) return "integer divide by zero"; S[sp - 1] = a % b; return nullptr; }
    BIN64(0x83, a & b) BIN64(0x84, a | b) BIN64(0x85, a ^ b) BIN64(0x86, a << (b & 63))
    BIN64(0x87, uint64_t(int64_t(a) >> (b & 63))) BIN64(0x88, a >> (b & 63))
    BIN64(0x89, (a << (b & 63)) | (a >> ((64 - (b & 63)) & 63)))
    BIN64(0x8A, (a >> (b & 63)) | (a << ((64 - (b & 63)) & 63)))
#undef BIN64
    case 0xA7: S[sp - 1] = I32(S[sp - 1]); return nullptr;  // i32.wrap_i64
    case 0xAC: S[sp - 1] = I64(int64_t(int32_t(I32(S[sp - 1])))); return nullptr;  // i64.extend_i32_s
    case 0xAD: S[sp - 1] = I64(I32(S[sp - 1])); return nullptr;  // i64.extend_i32_u
    case 0xC0: S[sp - 1] = I32(int32_t(int8_t(S[sp - 1]))); return nullptr;
    case 0xC1: S[sp - 1] = I32(int32_t(int16_t(S[sp - 1]))); return nullptr;
    case 0xC2: S[sp - 1] = I64(int64_t(int8_t(S[sp - 1]))); return nullptr;
    case 0xC3: S[sp - 1] = I64(int64_t(int16_t(S[sp - 1]))); return nullptr;
    case 0xC4: S[sp - 1] = I64(int64_t(int32_t(S[sp - 1]))); return nullptr;
    default: return NOT_NUMERIC;
  }
#undef I32
#undef I64
}

}  // namespace snarkd::witness
