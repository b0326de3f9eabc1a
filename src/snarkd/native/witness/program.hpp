// The native witness program: a recorded Trace compiled into a compact straight-line program, and
// its replay.
//
// Compilation: dead values are dropped (only the witness, guards and logs keep values alive),
// every witness element computes straight into its own slot, and every other value gets a
// register by liveness (a register is reused as soon as its last reader has run), so a replay
// touches the witness plus a small register file, not one slot per intermediate. Constants live
// in a pool shared by all replays.
//
// A Program holds one or more Paths: each is the trace of one run of the wasm's control flow.
// A replay tries them in turn; a guard that fails (an input took the wasm another way) moves to
// the next, and when none fits the caller records the request anew and adds its path.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ff/simd52.hpp"
#include "witness/circom_field.hpp"
#include "witness/record.hpp"
#include "witness/trace.hpp"

namespace snarkd::witness {

// Replay opcodes. Values are held in one of two forms: Montgomery ("M", what field products want)
// or plain ("N", what circom's integer operators, comparisons and the witness itself want). The
// compiler (below) picks each value's form and inserts conversions only where a reader needs the
// other one, once per value: a bit extracted from a word stays plain from the shift to the
// witness, a product of a plain and a Montgomery value is plain without any conversion.
enum ROp : uint16_t {
  R_ADD, R_SUB, R_NEG,            // either form (both operands in it)
  R_MUL,                          // M*M -> M, N*M -> N
  R_DIV,                          // a * b^-1: b M, a either (result in a's form)
  R_INV,                          // M -> M
  R_POW,                          // a M, b (exponent) N -> M
  R_EQ, R_NEQ,                    // same form -> N boolean
  R_LT, R_GT, R_LEQ, R_GEQ,       // N -> N boolean
  R_LAND, R_LOR, R_LNOT,          // either -> N boolean
  R_BAND, R_BOR, R_BXOR, R_BNOT, R_SHL, R_SHR,  // N -> N
  R_IDIV, R_MOD,                  // N -> N (trap on 0)
  R_BIT,                          // N: (a >> b) & 1, b an immediate < bitlen(p)
  R_SELECT,                       // isTrue(a) ? b : (next EXT's a); b and c in one form
  R_MADD,                         // a * b + (next EXT's a): a product read once, by a sum
  R_MADD2,                        // a * b + (EXT's a) + (EXT's b): such a sum read once, by another
  R_GUARD_TRUE, R_GUARD_FALSE,    // either
  R_GUARD_INT,                    // N: toInt(a) == (int32) b
  R_GUARD_EQ, R_GUARD_NE,         // same form
  R_LOG_STR, R_LOG_VAL,           // LOG_VAL: N
  R_LOADIN,                       // d = input a (plain)
  R_SETC, R_COPY,                 // d = const a / d = a
  R_TONORM, R_TOMONT,             // form conversions
  R_EXT,                          // third (a) and fourth (b) operands of the previous instruction
  R_COUNT
};

// The instruction set's version: part of every program file's identity (witness/program_file.py), so a
// program written by another build is rebuilt, never replayed with other meanings. Bump it with any change
// to ROp, PIns or what an instruction does.
inline constexpr int PROGRAM_FORMAT = 3;  // 3: instructions and conversions delta-coded on disk (program.hpp, end)

// One replay instruction (16 bytes). k: bit 0 = a is a constant, bit 1 = b is a constant (an index
// into the path's pool, which holds each constant in the form its readers want).
struct PIns {
  uint16_t op, k;
  uint32_t d, a, b;
};
static_assert(sizeof(PIns) == 16, "PIns is 16 bytes");

enum ReplayStatus : int { REPLAY_OK = 0, REPLAY_MISS = 1, REPLAY_TRAP = 2 };

struct LogEvent {
  bool is_value;
  uint32_t str;                   // index into the path's strings
  std::array<uint64_t, 4> value;  // plain limbs
};

template <class F>
struct Path {
  PodVec<F> consts;  // each in the form its readers want (Montgomery or plain)
  PodVec<PIns> code;
  std::vector<std::string> strings;
  PodVec<uint32_t> to_plain;  // witness slots left in Montgomery form: converted at the end, 8 at a time
  uint32_t n_regs = 0;
  uint32_t n_guards = 0;
  std::atomic<uint64_t> hits{0};  // replays that took this path (most used first)
};

template <class P>
class Compiler {
 public:
  using F = Mont<P>;
  using CF = CircomField<P>;
  enum Form : uint8_t { M = 0, NF = 1 };

  // Consumes the trace's nodes (read by lowering only: freed before emit, inside a build's BigScope their
  // pages serve emit's tables).
  static std::shared_ptr<Path<F>> compile(Trace<F>& t, uint32_t witness_size) {
    Compiler c(t, witness_size);
    c.lower();
    t.nodes = PodVec<TNode>();
    return c.emit();
  }

 private:
  // A value of the lowered program: an op on earlier values (or constants), in a form.
  struct XNode {
    uint16_t op;
    Form form;
    uint32_t a, b, c;  // XNode ids, or CONST_BIT | pool index (the pool holds both forms)
    uint32_t imm;      // GUARD_INT's value, BIT's position, LOG_STR's string, LOADIN's input
    uint32_t e = 0;    // MADD2's fourth operand
  };
  const Trace<F>& t_;
  const uint32_t W_;
  const uint32_t nc_;  // constants per form
  PodVec<XNode> x_{XNode{R_COUNT, M, 0, 0, 0, 0}};  // id 0 unused
  Big<uint32_t> map_;     // trace id -> XNode id
  PodVec<uint32_t> other_;   // XNode id -> its conversion to the other form (0: none yet)

  Compiler(const Trace<F>& t, uint32_t w) : t_(t), W_(w), nc_(uint32_t(t.consts.size())) {}

  static bool is_node(uint32_t id) { return id && !(id & CONST_BIT); }
  static int trace_operands(uint8_t op) {
    switch (op) {
      case T_INPUT: case T_LOG_STR: case T_NONE: case T_CONST: return 0;
      case T_GUARD_INT: return 1;
      default: return top_arity(op);
    }
  }
  Form form_of(uint32_t xid) const { return x_[xid].form; }
  uint32_t add(uint16_t op, Form f, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0, uint32_t imm = 0) {
    x_.push_back(XNode{op, f, a, b, c, imm});
    other_.resize(x_.size(), 0);
    return uint32_t(x_.size() - 1);
  }
  // An operand in form f: constants come in both; values are converted once.
  uint32_t in_form(uint32_t ref, Form f) {
    if (ref & CONST_BIT) return CONST_BIT | ((ref & ~CONST_BIT) + (f == NF ? nc_ : 0));
    if (form_of(ref) == f) return ref;
    if (!other_[ref]) {
      uint32_t c = add(f == NF ? R_TONORM : R_TOMONT, f, ref);
      other_[ref] = c;
      other_[c] = ref;
    }
    return other_[ref];
  }
  // A trace operand as an XNode ref (constants stay tagged, form unchosen).
  uint32_t ref(uint32_t tid) const { return (tid & CONST_BIT) ? tid : map_[tid]; }
  bool has(uint32_t r, Form f) const {  // available in form f without a new conversion
    return (r & CONST_BIT) || form_of(r) == f || other_[r] != 0;
  }
  // The common form for two operands of a form-agnostic op (add, select, eq): the one both
  // already have, else plain (the witness wants plain).
  Form common(uint32_t a, uint32_t b) const {
    bool ca = a & CONST_BIT, cb = b & CONST_BIT;
    if (ca && cb) return NF;
    if (ca) return form_of(b);
    if (cb) return form_of(a);
    if (form_of(a) == form_of(b)) return form_of(a);
    if (has(a, NF) && has(b, NF)) return NF;
    if (has(a, M) && has(b, M)) return M;
    // convert the older value: it is the one likely read again (an input, a running sum), so
    // its conversion is reused, where a fresh value's would be paid at every step of a chain
    return form_of(a < b ? b : a);
  }

  void lower() {
    const auto& nodes = t_.nodes;
    const size_t n = nodes.size();
    // liveness: the witness, guards and logs keep values alive
    Big<uint8_t> live(n, 0);
    for (uint32_t id : t_.witness)
      if (is_node(id)) live[id] = 1;
    for (size_t k = 1; k < n; k++)
      if (top_is_effect(nodes[k].op)) live[k] = 1;
    for (size_t k = n; k-- > 1;) {
      if (!live[k]) continue;
      const TNode& nd = nodes[k];
      const uint32_t ops[3] = {nd.a, nd.b, nd.c};
      for (int i = 0; i < trace_operands(nd.op); i++)
        if (is_node(ops[i])) live[ops[i]] = 1;
    }
    map_.assign(n, 0);
    for (size_t k = 1; k < n; k++) {
      if (!live[k]) continue;
      const TNode& nd = nodes[k];
      uint32_t a = trace_operands(nd.op) >= 1 ? ref(nd.a) : 0;
      uint32_t b = trace_operands(nd.op) >= 2 ? ref(nd.b) : 0;
      uint32_t r = 0;
      switch (nd.op) {
        case T_INPUT: r = add(R_LOADIN, NF, 0, 0, 0, nd.a); break;
        case T_ADD: case T_SUB: {
          Form f = common(a, b);
          r = add(nd.op == T_ADD ? R_ADD : R_SUB, f, in_form(a, f), in_form(b, f));
          break;
        }
        case T_NEG: r = add(R_NEG, (a & CONST_BIT) ? NF : form_of(a), in_form(a, (a & CONST_BIT) ? NF : form_of(a))); break;
        case T_MUL: r = lower_mul(a, b); break;
        case T_DIV: {
          Form f = (a & CONST_BIT) ? M : form_of(a);
          r = add(R_DIV, f, in_form(a, f), in_form(b, M));
          break;
        }
        case T_INV: r = add(R_INV, M, in_form(a, M)); break;
        case T_POW: r = add(R_POW, M, in_form(a, M), in_form(b, NF)); break;
        case T_EQ: case T_NEQ: {
          Form f = common(a, b);
          r = add(nd.op == T_EQ ? R_EQ : R_NEQ, NF, in_form(a, f), in_form(b, f));
          break;
        }
        case T_LT: case T_GT: case T_LEQ: case T_GEQ: {
          static const uint16_t ops[] = {R_LT, R_GT, R_LEQ, R_GEQ};
          r = add(ops[nd.op - T_LT], NF, in_form(a, NF), in_form(b, NF));
          break;
        }
        case T_LAND: case T_LOR: {
          Form fa = (a & CONST_BIT) ? NF : form_of(a), fb = (b & CONST_BIT) ? NF : form_of(b);
          r = add(nd.op == T_LAND ? R_LAND : R_LOR, NF, in_form(a, fa), in_form(b, fb));
          break;
        }
        case T_LNOT: r = add(R_LNOT, NF, in_form(a, (a & CONST_BIT) ? NF : form_of(a))); break;
        case T_BAND: {
          // (x >> c) & 1, the shift read only here: one bit extraction
          if (bit_extraction(nd, r)) break;
          r = add(R_BAND, NF, in_form(a, NF), in_form(b, NF));
          break;
        }
        case T_BOR: r = add(R_BOR, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_BXOR: r = add(R_BXOR, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_BNOT: r = add(R_BNOT, NF, in_form(a, NF)); break;
        case T_SHL: r = add(R_SHL, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_SHR: r = add(R_SHR, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_IDIV: r = add(R_IDIV, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_MOD: r = add(R_MOD, NF, in_form(a, NF), in_form(b, NF)); break;
        case T_SELECT: {
          uint32_t c = ref(nd.c);
          Form f = common(b, c);
          Form fa = (a & CONST_BIT) ? NF : form_of(a);
          r = add(R_SELECT, f, in_form(a, fa), in_form(b, f), in_form(c, f));
          break;
        }
        case T_GUARD_TRUE: case T_GUARD_FALSE: {
          // guard(eq(x, y)): compare in place
          const TNode* e = is_node(nd.a) ? &nodes[nd.a] : nullptr;
          if (e && (e->op == T_EQ || e->op == T_NEQ)) {
            uint32_t ea = ref(e->a), eb = ref(e->b);
            Form f = common(ea, eb);
            bool want_equal = (e->op == T_EQ) == (nd.op == T_GUARD_TRUE);
            add(want_equal ? R_GUARD_EQ : R_GUARD_NE, NF, in_form(ea, f), in_form(eb, f));
            break;
          }
          add(nd.op == T_GUARD_TRUE ? R_GUARD_TRUE : R_GUARD_FALSE, NF,
              in_form(a, (a & CONST_BIT) ? NF : form_of(a)));
          break;
        }
        case T_GUARD_INT: add(R_GUARD_INT, NF, in_form(a, NF), 0, 0, nd.b); break;
        case T_LOG_STR: add(R_LOG_STR, NF, 0, 0, 0, nd.a); break;
        case T_LOG_VAL: add(R_LOG_VAL, NF, in_form(a, NF)); break;
        default: throw Unsupported("internal: trace op " + std::to_string(nd.op));
      }
      map_[k] = r;
    }
    // Values folded into a later instruction (an eq a guard compares in place, a shift a bit
    // extraction reads through) were lowered anyway: emit drops those nobody reads.
  }

  bool bit_extraction(const TNode& nd, uint32_t& r) {
    // nd: band(a, b) with one side the constant 1 and the other shr(x, const c), c < bitlen
    uint32_t s = nd.a, one = nd.b;
    if (!(one & CONST_BIT)) std::swap(s, one);
    if (!(one & CONST_BIT) || !is_node(s)) return false;
    const F& k1 = t_.consts[one & ~CONST_BIT];
    if (!(k1 == F::one())) return false;
    const TNode& sh = t_.nodes[s];
    if (sh.op != T_SHR || !(sh.b & CONST_BIT)) return false;
    F amount = t_.consts[sh.b & ~CONST_BIT].from_mont();
    bool left;
    unsigned cnt;
    CF::shift_amount(amount, false, left, cnt);
    if (left || cnt >= CF::BITS) return false;
    r = add(R_BIT, NF, in_form(ref(sh.a), NF), 0, 0, cnt);
    return true;
  }

  uint32_t lower_mul(uint32_t a, uint32_t b) {
    bool ca = a & CONST_BIT, cb = b & CONST_BIT;
    if (ca && cb) return add(R_MUL, M, in_form(a, M), in_form(b, M));
    if (ca || cb) {  // value * constant: keep the value's form (the constant's Montgomery form)
      uint32_t v = ca ? b : a, k = ca ? a : b;
      static const F two = CF::from_u64(2);
      if (t_.consts[k & ~CONST_BIT] == two) return add(R_ADD, form_of(v), v, v);
      return add(R_MUL, form_of(v), v, in_form(k, M));
    }
    Form fa = form_of(a), fb = form_of(b);
    if (fa != fb) return add(R_MUL, NF, fa == NF ? a : b, fa == NF ? b : a);  // N * M -> N
    if (fa == M) return add(R_MUL, M, a, b);
    // x * x: square in Montgomery form (a chain of squares then converts nothing on its way)
    if (a == b) {
      uint32_t m = in_form(a, M);
      return add(R_MUL, M, m, m);
    }
    // N * N: one operand to Montgomery (one that has it already, if any)
    if (other_[b] && !other_[a]) std::swap(a, b);
    return add(R_MUL, NF, b, in_form(a, M));
  }

  // Which nodes are live (a witness signal's home, an effect, or read by a live node), walking from the
  // last node back; `read(k, o)` sees each live node k's read of node o, last reader first. Counts on the
  // way the instructions the live nodes make (two where a fourth-operand EXT follows) and their constant
  // operands.
  template <class Opnds, class IsEffect, class Read>
  Big<uint8_t> walk_live(const Big<uint32_t>& home, Opnds opnds, IsEffect is_effect, Read read,
                         size_t* instructions = nullptr, size_t* const_reads = nullptr) {
    const size_t n = x_.size();
    Big<uint8_t> live(n, 0);
    for (size_t k = 1; k < n; k++)
      if (home[k] != ~0u || is_effect(x_[k].op)) live[k] = 1;
    size_t ins = 0, consts = 0;
    for (size_t k = n; k-- > 1;) {
      if (!live[k]) continue;
      uint32_t o[4];
      int c = opnds(x_[k], o);
      ins += c >= 3 ? 2 : 1;
      for (int i = 0; i < c; i++) {
        if (is_node(o[i])) {
          live[o[i]] = 1;
          read(uint32_t(k), o[i]);
        } else {
          consts += (o[i] & CONST_BIT) != 0;
        }
      }
    }
    if (instructions) *instructions = ins;
    if (const_reads) *const_reads = consts;
    return live;
  }

  // x * y + z where the product has no other reader (a linear combination's terms, a square plus
  // a constant): one instruction instead of two, and no register for the product.
  template <class Opnds, class IsEffect>
  void fuse_multiply_adds(const Big<uint32_t>& home, Opnds opnds, IsEffect is_effect) {
    const size_t n = x_.size();
    Big<uint32_t> readers(n, 0);
    Big<uint8_t> live = walk_live(home, opnds, is_effect, [&](uint32_t, uint32_t o) { readers[o]++; });
    // x * y + z: the product's operands move into the sum
    fuse_adds(R_MUL, live, readers, home, [](const XNode& sum, const XNode& mul, uint32_t other) {
      return XNode{R_MADD, sum.form, mul.a, mul.b, other, 0};
    });
    // x * y + z + w (a square plus an input plus a constant: a chain's step): one instruction
    fuse_adds(R_MADD, live, readers, home, [](const XNode& sum, const XNode& madd, uint32_t other) {
      return XNode{R_MADD2, sum.form, madd.a, madd.b, madd.c, 0, other};
    });
  }

  // Each live sum one of whose operands is a `producer` node no other node reads (nor the witness) becomes
  // make(the sum, that node, the other operand): the producer is then unread.
  template <class Make>
  void fuse_adds(uint16_t producer, const Big<uint8_t>& live, Big<uint32_t>& readers,
                 const Big<uint32_t>& home, Make make) {
    auto fusable = [&](uint32_t r) {
      return is_node(r) && x_[r].op == producer && readers[r] == 1 && home[r] == ~0u;
    };
    for (size_t k = 1; k < x_.size(); k++) {
      XNode& x = x_[k];
      if (!live[k] || x.op != R_ADD) continue;
      uint32_t p = fusable(x.a) ? x.a : fusable(x.b) ? x.b : 0;
      if (!p) continue;
      x = make(x, x_[p], p == x.a ? x.b : x.a);
      readers[p] = 0;
    }
  }

  // Liveness on the lowered program, registers, instructions.
  std::shared_ptr<Path<F>> emit() {
    const size_t n = x_.size();
    auto opnds = [&](const XNode& x, uint32_t out[4]) -> int {
      int k = 0;
      switch (x.op) {
        case R_LOADIN: case R_LOG_STR: return 0;
        case R_SELECT: case R_MADD: out[k++] = x.a; out[k++] = x.b; out[k++] = x.c; return k;
        case R_MADD2: out[k++] = x.a; out[k++] = x.b; out[k++] = x.c; out[k++] = x.e; return k;
        case R_NEG: case R_INV: case R_LNOT: case R_BNOT: case R_BIT: case R_GUARD_TRUE: case R_GUARD_FALSE:
        case R_GUARD_INT: case R_LOG_VAL: case R_TONORM: case R_TOMONT:
          out[k++] = x.a; return k;
        default: out[k++] = x.a; out[k++] = x.b; return k;
      }
    };
    auto is_effect = [](uint16_t op) {
      return op == R_GUARD_TRUE || op == R_GUARD_FALSE || op == R_GUARD_INT || op == R_GUARD_EQ ||
             op == R_GUARD_NE || op == R_LOG_STR || op == R_LOG_VAL;
    };
    // homes: each witness element computes into its own slot
    Big<uint32_t> home(n, ~0u);
    for (uint32_t i = 0; i < t_.witness.size(); i++) {
      uint32_t id = t_.witness[i];
      if (is_node(id)) {
        uint32_t xid = map_[id];
        if (home[xid] == ~0u) home[xid] = i;
      }
    }
    fuse_multiply_adds(home, opnds, is_effect);
    Big<uint32_t> last(n, 0);
    size_t n_ins = 0, n_const_reads = 0;
    Big<uint8_t> live = walk_live(home, opnds, is_effect, [&](uint32_t k, uint32_t o) {
      if (!last[o]) last[o] = k;
    }, &n_ins, &n_const_reads);
    auto path = std::make_shared<Path<F>>();
    // the pool holds the constants live instructions read, each in the form they read it
    Big<uint32_t> pool_index(2 * size_t(nc_), ~0u);  // trace pool index (+ nc_: plain) -> path pool
    auto pooled = [&](uint32_t tagged) -> uint32_t {
      uint32_t& at = pool_index[tagged];
      if (at != ~0u) return at;
      const F& v = t_.consts[tagged < nc_ ? tagged : tagged - nc_];
      path->consts.push_back(tagged < nc_ ? v : v.from_mont());
      return at = uint32_t(path->consts.size() - 1);
    };
    path->strings = t_.strings;
    auto& code = path->code;
    // room for the whole program up front (one block, from the build's freed ones where one fits), never
    // regrown: a constant or a copy per witness element at most besides the live values' instructions
    code.reserve(n_ins + t_.witness.size());
    path->consts.reserve(std::min<size_t>(2 * size_t(nc_), n_const_reads + t_.witness.size()));
    for (uint32_t i = 0; i < t_.witness.size(); i++) {
      uint32_t id = t_.witness[i];
      if (!is_node(id)) code.push_back(PIns{R_SETC, 1, i, pooled(nc_ + (id & ~CONST_BIT)), 0});
    }
    Big<uint32_t> slot(n, ~0u);
    std::vector<uint32_t> free_regs;
    uint32_t n_regs = 0;
    auto operand = [&](uint32_t r, uint16_t& k, int bit) -> uint32_t {
      if (r & CONST_BIT) {
        k |= uint16_t(1 << bit);
        return pooled(r & ~CONST_BIT);
      }
      return slot[r];
    };
    for (size_t k = 1; k < n; k++) {
      if (!live[k]) continue;
      const XNode& x = x_[k];
      PIns in{x.op, 0, 0, 0, 0};
      uint32_t o[4];
      int c = opnds(x, o);
      uint32_t ext = 0, ext2 = 0;
      uint16_t ext_k = 0;
      if (c >= 1) in.a = operand(o[0], in.k, 0);
      if (c >= 2) in.b = operand(o[1], in.k, 1);
      if (c >= 3) ext = operand(o[2], ext_k, 0);
      if (c >= 4) ext2 = operand(o[3], ext_k, 1);
      switch (x.op) {
        case R_LOADIN: case R_LOG_STR: in.a = x.imm; break;
        case R_GUARD_INT: case R_BIT: in.b = x.imm; break;
        default: break;
      }
      for (int i = 0; i < c; i++)  // last reads free registers (the result may take one)
        if (is_node(o[i]) && last[o[i]] == k && home[o[i]] == ~0u && slot[o[i]] != ~0u) {
          free_regs.push_back(slot[o[i]]);
          slot[o[i]] = ~0u;
        }
      if (is_effect(x.op)) {
        if (x.op != R_LOG_STR && x.op != R_LOG_VAL) path->n_guards++;
      } else {
        if (home[k] != ~0u) slot[k] = home[k];
        else if (!free_regs.empty()) { slot[k] = free_regs.back(); free_regs.pop_back(); }
        else slot[k] = W_ + n_regs++;
        in.d = slot[k];
      }
      code.push_back(in);
      if (c >= 3) code.push_back(PIns{R_EXT, ext_k, 0, ext, ext2});
    }
    // the witness leaves plain: repeats copy their home, and every slot holding a Montgomery value
    // is converted after the program (ToPlain: a batch, not one instruction each)
    for (uint32_t i = 0; i < t_.witness.size(); i++) {
      uint32_t id = t_.witness[i];
      if (!is_node(id)) continue;
      if (home[map_[id]] != i) code.push_back(PIns{R_COPY, 0, i, home[map_[id]], 0});
      if (form_of(map_[id]) == M) path->to_plain.push_back(i);
    }
    path->n_regs = n_regs;
    return path;
  }
};

// Montgomery -> plain for a list of frame slots: eight at a time on AVX-512 IFMA where the CPU has
// it (a product by 1 in the 8-lane field: a quarter of the scalar cost), the rest one by one. A
// chain circuit's witness is all Montgomery values: this was a third of its replay.
template <class P>
struct ToPlain {
  using F = Mont<P>;
  static void run(F* frame, const uint32_t* slots, size_t n) {
    size_t i = 0;
#if defined(SNARKD_SIMD52)
    if (g_use_simd52) i = eight_at_a_time(frame, slots, n);
#endif
    F one = F::zero();
    one.v[0] = 1;
    for (; i < n; i++) frame[slots[i]] = F::mul(frame[slots[i]], one);
  }
#if defined(SNARKD_SIMD52)
  SNARKD_SIMD52_TARGET static size_t eight_at_a_time(F* frame, const uint32_t* slots, size_t n) {
    using Pr = simd52::Params<P, 64 * P::N>;
    static constexpr u64 ONE[P::N] = {1};
    const simd52::Fe<Pr> one = simd52::broadcast<Pr>(ONE);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint8_t* at[8];
      for (int k = 0; k < 8; k++) at[k] = reinterpret_cast<uint8_t*>(frame + slots[i + k]);
      simd52::V w[P::N];
      simd52::load_rows<P::N>(at, w);
      // a < p, 1 < p: the product a / R is < 2p; one subtraction makes it canonical
      simd52::to_words<Pr>(simd52::csub<1>(simd52::mul(simd52::from_words<Pr>(w), one)), w);
      simd52::store_rows<P::N>(at, w, 0xff);
    }
    return i;
  }
#endif
};

template <class P>
struct Replay {
  using F = Mont<P>;
  using CF = CircomField<P>;

  // Run one path. frame: witness_size + n_regs elements; inputs: plain limbs. The witness ends
  // plain in frame[0, witness_size). Returns REPLAY_OK, or REPLAY_MISS / REPLAY_TRAP with *at.
  static int run(const Path<F>& p, F* frame, const uint64_t* inputs, size_t n_inputs, size_t* at,
                 std::vector<LogEvent>* log) {
    const F* C = p.consts.data();
    const PIns* code = p.code.data();
    const size_t n = p.code.size();
    F one_plain = F::zero();
    one_plain.v[0] = 1;
    const F r2 = F::from_limbs(P::R2);
    for (size_t i = 0; i < n; i++) {
      const PIns& in = code[i];
      const uint16_t k = in.k;
#define OPA (k & 1 ? C[in.a] : frame[in.a])
#define OPB (k & 2 ? C[in.b] : frame[in.b])
      switch (in.op) {
        case R_ADD: frame[in.d] = OPA + OPB; break;
        case R_SUB: frame[in.d] = OPA - OPB; break;
        case R_NEG: frame[in.d] = OPA.neg(); break;
        case R_MUL: frame[in.d] = OPA * OPB; break;
        case R_DIV: frame[in.d] = OPA * OPB.inv(); break;
        case R_INV: frame[in.d] = OPA.inv(); break;
        case R_POW: frame[in.d] = CF::pow_n(OPA, OPB); break;
        case R_EQ: frame[in.d] = CF::n_bool(OPA == OPB); break;
        case R_NEQ: frame[in.d] = CF::n_bool(OPA != OPB); break;
        case R_LT: frame[in.d] = CF::n_bool(CF::n_less(OPA, OPB)); break;
        case R_GT: frame[in.d] = CF::n_bool(CF::n_less(OPB, OPA)); break;
        case R_LEQ: frame[in.d] = CF::n_bool(!CF::n_less(OPB, OPA)); break;
        case R_GEQ: frame[in.d] = CF::n_bool(!CF::n_less(OPA, OPB)); break;
        case R_LAND: frame[in.d] = CF::n_bool(CF::is_true(OPA) && CF::is_true(OPB)); break;
        case R_LOR: frame[in.d] = CF::n_bool(CF::is_true(OPA) || CF::is_true(OPB)); break;
        case R_LNOT: frame[in.d] = CF::n_bool(!CF::is_true(OPA)); break;
        case R_BAND: frame[in.d] = CF::n_band(OPA, OPB); break;
        case R_BOR: frame[in.d] = CF::n_bor(OPA, OPB); break;
        case R_BXOR: frame[in.d] = CF::n_bxor(OPA, OPB); break;
        case R_BNOT: frame[in.d] = CF::n_bnot(OPA); break;
        case R_SHL: frame[in.d] = CF::n_shl(OPA, OPB); break;
        case R_SHR: frame[in.d] = CF::n_shr(OPA, OPB); break;
        case R_IDIV: case R_MOD: {
          F r;
          if ((in.op == R_IDIV ? CF::n_idiv(OPA, OPB, r) : CF::n_mod(OPA, OPB, r))) { *at = i; return REPLAY_TRAP; }
          frame[in.d] = r;
          break;
        }
        case R_BIT: frame[in.d] = CF::n_bit(OPA, in.b); break;
        case R_SELECT: {
          const PIns& e = code[++i];
          const F& c = e.k & 1 ? C[e.a] : frame[e.a];
          frame[in.d] = CF::is_true(OPA) ? OPB : c;
          break;
        }
        case R_MADD: {
          const PIns& e = code[++i];
          const F& c = e.k & 1 ? C[e.a] : frame[e.a];
          frame[in.d] = OPA * OPB + c;
          break;
        }
        case R_MADD2: {
          const PIns& e = code[++i];
          const F& c = e.k & 1 ? C[e.a] : frame[e.a];
          const F& d = e.k & 2 ? C[e.b] : frame[e.b];
          frame[in.d] = OPA * OPB + c + d;
          break;
        }
        case R_GUARD_TRUE: if (!CF::is_true(OPA)) { *at = i; return REPLAY_MISS; } break;
        case R_GUARD_FALSE: if (CF::is_true(OPA)) { *at = i; return REPLAY_MISS; } break;
        case R_GUARD_INT: if (CF::n_to_int32(OPA) != int32_t(in.b)) { *at = i; return REPLAY_MISS; } break;
        case R_GUARD_EQ: if (OPA != OPB) { *at = i; return REPLAY_MISS; } break;
        case R_GUARD_NE: if (OPA == OPB) { *at = i; return REPLAY_MISS; } break;
        case R_LOG_STR: if (log) log->push_back(LogEvent{false, in.a, {}}); break;
        case R_LOG_VAL:
          if (log) {
            const F& v = OPA;
            log->push_back(LogEvent{true, 0, {v.v[0], v.v[1], v.v[2], v.v[3]}});
          }
          break;
        case R_LOADIN: {
          if (in.a >= n_inputs) { *at = i; return REPLAY_TRAP; }
          std::memcpy(frame[in.d].v, inputs + 4 * size_t(in.a), sizeof(F));
          break;
        }
        case R_SETC: frame[in.d] = C[in.a]; break;
        case R_COPY: frame[in.d] = frame[in.a]; break;
        case R_TONORM: frame[in.d] = F::mul(OPA, one_plain); break;
        case R_TOMONT: frame[in.d] = F::mul(OPA, r2); break;
        default: *at = i; return REPLAY_TRAP;
      }
#undef OPA
#undef OPB
    }
    ToPlain<P>::run(frame, p.to_plain.data(), p.to_plain.size());
    return REPLAY_OK;
  }
};

// -- serialization ----------------------------------------------------------------------------------

// Writes into a buffer of the exact size (a first pass with no buffer counts it): a large program goes
// once into the bytes object that leaves for Python, never through a growing string and a copy.
class ByteWriter {
 public:
  explicit ByteWriter(uint8_t* at = nullptr) : at_(at) {}
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void raw(const void* p, size_t n) {
    if (at_ && n) std::memcpy(at_ + size_, p, n);
    size_ += n;
  }
  size_t size() const { return size_; }

 private:
  uint8_t* at_;
  size_t size_ = 0;
};
class ByteReader {
 public:
  ByteReader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  uint32_t u32() { uint32_t v; std::memcpy(&v, take(4), 4); return v; }
  uint64_t u64() { uint64_t v; std::memcpy(&v, take(8), 8); return v; }
  const uint8_t* take(size_t n) {
    if (size_t(end_ - p_) < n) throw std::runtime_error("truncated native witness program");
    const uint8_t* r = p_;
    p_ += n;
    return r;
  }
  bool done() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// On disk, instructions are delta-coded: a byte op | k << 6, then d, a and b each as the zigzag varint of
// its difference from the same field of the last instruction with the same op. A program's instructions
// of one kind walk the frame in step (a chain's step: d, a and b one slot on, its EXT's constant one
// index on), so most fields take one byte: a 2^20 chain's 2,097,151 instructions, 33.5 MB in memory, are
// 8.4 MB on disk, and its program file 71 -> 46 MB (writing it was a tenth of the build). The witness
// slots left in Montgomery form (ascending) are varint gaps. The reader decodes into the same PIns and
// checks every operand as before.
namespace coding {
inline uint8_t* put_varint(uint8_t* o, uint32_t v) {
  while (v >= 0x80) {
    *o++ = uint8_t(v | 0x80);
    v >>= 7;
  }
  *o++ = uint8_t(v);
  return o;
}
inline uint32_t zigzag(uint32_t delta) { return (delta << 1) ^ uint32_t(int32_t(delta) >> 31); }
inline uint32_t unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1)); }

// Encoded instructions (at most 16 bytes each).
inline PodVec<uint8_t> encode_code(const PodVec<PIns>& code) {
  PodVec<uint8_t> out;
  out.reserve(code.size() * 16 + 1);
  uint8_t* o = out.data();
  PIns prev[64] = {};
  for (const PIns& in : code) {
    if (in.op >= 64 || in.k > 3) throw std::runtime_error("internal: instruction not codable");
    PIns& pv = prev[in.op];
    *o++ = uint8_t(in.op | (in.k << 6));
    o = put_varint(o, zigzag(in.d - pv.d));
    o = put_varint(o, zigzag(in.a - pv.a));
    o = put_varint(o, zigzag(in.b - pv.b));
    pv = in;
  }
  out.assume_filled(size_t(o - out.data()));
  return out;
}
inline PodVec<uint8_t> encode_gaps(const PodVec<uint32_t>& xs) {
  PodVec<uint8_t> out;
  out.reserve(xs.size() * 5 + 1);
  uint8_t* o = out.data();
  uint32_t prev = 0;
  for (uint32_t x : xs) {
    o = put_varint(o, zigzag(x - prev));
    prev = x;
  }
  out.assume_filled(size_t(o - out.data()));
  return out;
}

class VarintReader {
 public:
  VarintReader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  const uint8_t* at() const { return p_; }
  size_t left() const { return size_t(end_ - p_); }
  void skip(size_t n) { p_ += n; }  // n <= left()
  uint8_t byte() {
    if (p_ == end_) bad();
    return *p_++;
  }
  uint32_t varint() {
    uint32_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const uint8_t b = byte();
      if (shift == 28 && b > 0x0F) bad();  // more than 32 bits
      v |= uint32_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  bool done() const { return p_ == end_; }
  [[noreturn]] static void bad() { throw std::runtime_error("native witness program: malformed instruction coding"); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// encode_code's inverse: the next n instructions into out (room for n, not initialized). Most instructions are four
// bytes (every delta one byte: the head and three varints below 0x80), read as one word; the rest go byte by
// byte. A load is mostly this loop (a SHA-256 program: 628,430 instructions), on every `snarkd witness`.
struct CodeDecoder {
  PIns prev[64] = {};  // the last instruction of each op (what the deltas are from)
  void decode(VarintReader& c, PIns* out, size_t n);
};
inline void CodeDecoder::decode(VarintReader& c, PIns* out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    PIns in;
    if (c.left() >= 4) {
      uint32_t w;
      std::memcpy(&w, c.at(), 4);
      if (!(w & 0x80808000u)) {  // bytes 1-3 each a whole varint (over half the instructions)
        PIns& pv = prev[w & 63];
        in.op = uint16_t(w & 63);
        in.k = uint16_t((w >> 6) & 3);
        in.d = pv.d + unzigzag((w >> 8) & 0x7F);
        in.a = pv.a + unzigzag((w >> 16) & 0x7F);
        in.b = pv.b + unzigzag(w >> 24);
        pv = in;
        out[i] = in;
        c.skip(4);
        continue;
      }
    }
    const uint8_t head = c.byte();
    PIns& pv = prev[head & 63];
    in.op = uint16_t(head & 63);
    in.k = uint16_t(head >> 6);
    in.d = pv.d + unzigzag(c.varint());
    in.a = pv.a + unzigzag(c.varint());
    in.b = pv.b + unzigzag(c.varint());
    pv = in;
    out[i] = in;
  }
}
}  // namespace coding

// W: ByteWriter, or anything with u32, u64 and raw (the module's file writer)
template <class W, class F>
void write_path(W& w, const Path<F>& p) {
  w.u32(uint32_t(p.consts.size()));
  w.u32(uint32_t(p.code.size()));
  w.u32(p.n_regs);
  w.u32(p.n_guards);
  w.u32(uint32_t(p.strings.size()));
  w.u64(p.hits.load());
  w.raw(p.consts.data(), p.consts.size() * sizeof(F));
  const PodVec<uint8_t> code = coding::encode_code(p.code);
  w.u64(code.size());
  w.raw(code.data(), code.size());
  for (auto& s : p.strings) {
    w.u32(uint32_t(s.size()));
    w.raw(s.data(), s.size());
  }
  w.u32(uint32_t(p.to_plain.size()));
  const PodVec<uint8_t> gaps = coding::encode_gaps(p.to_plain);
  w.u64(gaps.size());
  w.raw(gaps.data(), gaps.size());
}

// What the load's check asks of each op's fields: d a frame slot (CK_D); a and b operands, each a frame slot or,
// where its k bit says so, a constant (CK_A, CK_B); a a frame slot whatever k says (CK_AF, a copy); followed by its
// EXT, whose a (CK_EXT) and b (CK_EXT_B) are operands. CK_OTHER: checked one by one (rare ops, unknown ones).
// Table-driven because this runs over every instruction of every load (most of a load's time was the switch).
enum : uint8_t { CK_D = 1, CK_A = 2, CK_B = 4, CK_AF = 8, CK_EXT = 16, CK_EXT_B = 32, CK_OTHER = 64 };
constexpr std::array<uint8_t, 64> make_check_table() {
  std::array<uint8_t, 64> t{};
  for (auto& m : t) m = CK_OTHER;
  for (uint16_t op : {R_ADD, R_SUB, R_MUL, R_DIV, R_POW, R_EQ, R_NEQ, R_LT, R_GT, R_LEQ, R_GEQ, R_LAND, R_LOR,
                      R_BAND, R_BOR, R_BXOR, R_SHL, R_SHR, R_IDIV, R_MOD})
    t[op] = CK_D | CK_A | CK_B;
  for (uint16_t op : {R_NEG, R_INV, R_LNOT, R_BNOT, R_TONORM, R_TOMONT}) t[op] = CK_D | CK_A;
  for (uint16_t op : {R_LOG_VAL, R_GUARD_TRUE, R_GUARD_FALSE, R_GUARD_INT}) t[op] = CK_A;
  for (uint16_t op : {R_GUARD_EQ, R_GUARD_NE}) t[op] = CK_A | CK_B;
  t[R_SELECT] = t[R_MADD] = CK_D | CK_A | CK_B | CK_EXT;
  t[R_MADD2] = CK_D | CK_A | CK_B | CK_EXT | CK_EXT_B;
  t[R_COPY] = CK_D | CK_AF;
  return t;  // R_LOADIN, R_SETC, R_LOG_STR, R_BIT, R_EXT (never alone) and unknown ops: CK_OTHER
}
inline constexpr std::array<uint8_t, 64> CHECK_TABLE = make_check_table();

// Every operand index of code[from, n) against the frame (frame slots), pool (nc constants), strings (ns) and
// inputs: a damaged program is refused at its load, never replayed out of bounds. Returns where it stopped: n, or
// (more: the code goes on past n, not yet decoded) an instruction whose EXT is at n.
inline size_t check_code(const PIns* code, size_t from, size_t n, bool more, uint64_t frame, uint32_t nc, uint32_t ns,
                         uint32_t n_inputs) {
  auto operand = [&](uint32_t x, bool is_const) { return uint64_t(x) < (is_const ? uint64_t(nc) : frame); };
  for (size_t i = from; i < n; i++) {
    const PIns& in = code[i];
    const uint8_t m = in.op < 64 ? CHECK_TABLE[in.op] : uint8_t(CK_OTHER);
    bool ok;
    if (!(m & CK_OTHER)) {
      ok = (!(m & CK_D) || in.d < frame) & (!(m & CK_A) || operand(in.a, in.k & 1)) &
           (!(m & CK_B) || operand(in.b, in.k & 2)) & (!(m & CK_AF) || in.a < frame);
      if (ok && (m & CK_EXT)) {
        if (more && i + 1 == n) return i;
        ok = i + 1 < n;
        if (ok) {
          const PIns& e = code[++i];
          ok = e.op == R_EXT && operand(e.a, e.k & 1) && (!(m & CK_EXT_B) || operand(e.b, e.k & 2));
        }
      }
    } else {
      switch (in.op) {
        case R_LOADIN: ok = in.d < frame && in.a < n_inputs; break;
        case R_SETC: ok = in.d < frame && in.a < nc; break;
        case R_LOG_STR: ok = in.a < ns; break;
        case R_BIT: ok = in.d < frame && operand(in.a, in.k & 1) && in.b < 64 * 4; break;
        default: ok = false;  // R_EXT only after a select or a multiply-add; unknown ops
      }
    }
    if (!ok) throw std::runtime_error("native witness program: instruction " + std::to_string(i) + " is malformed");
  }
  return n;
}

// Reads a path and checks every operand index against its pool/frame: a damaged file is refused
// here, never replayed out of bounds.
template <class F>
std::shared_ptr<Path<F>> read_path(ByteReader& r, uint32_t witness_size, uint32_t n_inputs) {
  auto p = std::make_shared<Path<F>>();
  uint32_t nc = r.u32(), ni = r.u32();
  p->n_regs = r.u32();
  p->n_guards = r.u32();
  uint32_t ns = r.u32();
  p->hits.store(r.u64());
  if (nc > (1u << 30) || ni > (1u << 31) / sizeof(PIns) || p->n_regs > (1u << 30) || ns > (1u << 24))
    throw std::runtime_error("native witness program: implausible sizes");
  p->consts.resize(nc);
  std::memcpy(p->consts.data(), r.take(size_t(nc) * sizeof(F)), size_t(nc) * sizeof(F));
  for (auto& c : p->consts)
    if (!c.is_canonical()) throw std::runtime_error("native witness program: a constant is not reduced");
  {
    const uint64_t len = r.u64();
    if (len > uint64_t(ni) * 16) throw std::runtime_error("native witness program: implausible code length");
    coding::VarintReader c(r.take(size_t(len)), size_t(len));
    p->code.reserve(ni);  // not zeroed: every instruction is decoded into it (or this throws, the path dropped)
    PIns* code = p->code.data();
    advise_huge_pages(code, size_t(ni) * sizeof(PIns));
    // decoded and checked a block at a time, the check reading what the decoder just wrote while it is in
    // the cache (one pass over a large program's code, not two)
    coding::CodeDecoder dec;
    const uint64_t frame = uint64_t(witness_size) + p->n_regs;
    size_t checked = 0;
    for (size_t at = 0; at < ni;) {
      const size_t end = std::min(size_t(ni), at + 4096);
      dec.decode(c, code + at, end - at);
      checked = check_code(code, checked, end, end < ni, frame, nc, ns, n_inputs);
      at = end;
    }
    p->code.assume_filled(ni);
    if (!c.done()) coding::VarintReader::bad();
  }
  for (uint32_t k = 0; k < ns; k++) {
    uint32_t len = r.u32();
    if (len > (1u << 24)) throw std::runtime_error("native witness program: implausible string");
    const uint8_t* s = r.take(len);
    p->strings.emplace_back((const char*)s, len);
  }
  uint32_t nt = r.u32();
  if (nt > witness_size) throw std::runtime_error("native witness program: implausible conversion list");
  {
    const uint64_t len = r.u64();
    if (len > uint64_t(nt) * 5) throw std::runtime_error("native witness program: implausible conversion list");
    coding::VarintReader c(r.take(size_t(len)), size_t(len));
    p->to_plain.resize(nt);
    uint32_t prev = 0;
    for (uint32_t& x : p->to_plain) x = prev = prev + coding::unzigzag(c.varint());
    if (!c.done()) coding::VarintReader::bad();
  }
  for (uint32_t x : p->to_plain)
    if (x >= witness_size) throw std::runtime_error("native witness program: a conversion outside the witness");
  return p;
}

}  // namespace snarkd::witness
