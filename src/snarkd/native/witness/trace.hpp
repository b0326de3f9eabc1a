// The recorded witness program ("trace"): a straight-line SSA list of circom field operations on
// the circuit's inputs, with guards where the wasm's control flow or memory addressing depended on
// a value, and the witness as value ids. record.hpp builds it; program.hpp compiles it for replay.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "witness/big_vec.hpp"

namespace snarkd::witness {

enum TOp : uint8_t {
  T_NONE = 0,
  T_CONST,   // a = index in consts
  T_INPUT,   // a = input index (signal position - first input position)
  T_ADD, T_SUB, T_MUL, T_NEG, T_DIV, T_INV, T_IDIV, T_MOD, T_POW,
  T_EQ, T_NEQ, T_LT, T_GT, T_LEQ, T_GEQ, T_LAND, T_LOR, T_LNOT,
  T_BAND, T_BOR, T_BXOR, T_BNOT, T_SHL, T_SHR,
  T_SELECT,       // isTrue(a) ? b : c
  T_GUARD_TRUE,   // the recording needed isTrue(a)
  T_GUARD_FALSE,  // the recording needed !isTrue(a)
  T_GUARD_INT,    // the recording needed toInt(a) == (int32) b
  T_LOG_STR,      // a log() text: a = index in strings
  T_LOG_VAL,      // a log() value: a = value
  T_COUNT
};

inline int top_arity(uint8_t op) {
  switch (op) {
    case T_CONST: case T_INPUT: case T_LOG_STR: return 0;
    case T_NEG: case T_INV: case T_LNOT: case T_BNOT: case T_GUARD_TRUE: case T_GUARD_FALSE: case T_GUARD_INT:
    case T_LOG_VAL: return 1;
    case T_SELECT: return 3;
    default: return 2;
  }
}
inline bool top_has_value(uint8_t op) {
  return !(op == T_GUARD_TRUE || op == T_GUARD_FALSE || op == T_GUARD_INT || op == T_LOG_STR || op == T_LOG_VAL ||
           op == T_NONE);
}
inline bool top_is_effect(uint8_t op) { return !top_has_value(op) && op != T_NONE; }

struct TNode {
  uint8_t op;
  uint32_t a, b, c;
};

template <class F>
struct Trace {
  PodVec<TNode> nodes{TNode{T_NONE, 0, 0, 0}};  // id 0: "no value" (a concrete element)
  PodVec<F> consts;
  std::vector<std::string> strings;
  Big<uint32_t> witness;  // value id of each witness element
  uint32_t n_inputs = 0;
};

}  // namespace snarkd::witness
