// The recorder: runs a circom witness generator's wasm in our own interpreter, with circom's field
// functions (Fr_add, Fr_isTrue, ...) done natively, and writes down what the run computed from the
// inputs as a Trace (trace.hpp).
//
// How values are tracked. Field elements live in the wasm's linear memory as circom lays them out
// (40 bytes: a short int, a type word, 32 bytes); every element our Fr functions write is stored
// in ffwasm's long Montgomery form, so any raw read still sees the right value. A shadow word per
// 4 bytes of memory holds the id of the trace value an element holds (0: a value that does not
// depend on the inputs). Ops on constants fold; ops on traced values become trace nodes.
//
// Where a value decides control flow or an address (Fr_isTrue, Fr_toInt) the trace gets a guard:
// the replay checks it and, on a miss, the request is recorded anew (a new path). An `if` whose
// condition is Fr_isTrue of a traced value (circom's ternaries: `in != 0 ? 1/in : 0`) is instead
// run both ways: both arms are executed from the same state with every memory write journaled,
// and where their results differ only in field elements the merged state holds select(cond, a, b)
// (if-conversion): one path for every input. An `if` whose arm reports an error is circom's
// `assert`/`===`: it becomes a guard that the check passes.
//
// Anything the recorder cannot follow exactly (raw reads of traced bytes, an unsupported
// instruction) fails the recording with Unsupported, and the circuit stays on the wasm engine.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "witness/circom_field.hpp"
#include "witness/trace.hpp"
#include "witness/wasm_module.hpp"
#include "witness/wasm_numeric.hpp"

namespace snarkd::witness {

inline constexpr uint32_t CONST_BIT = 0x80000000u;
inline constexpr int MAX_MESSAGE = 1 << 16;  // characters of one circom message read through getMessageChar
// The control-flow run's mark of a value computed from the inputs (in place of a trace id: no trace is kept).
inline constexpr uint32_t TAINT = 1;

// The recording cannot follow this circuit natively (the wasm engine serves it).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The circuit's own failure: an assert, a trap, circom's exceptionHandler (the wasm engine
// reports it with circom's message).
struct CircuitFailure : std::runtime_error {
  int code;
  CircuitFailure(int c, const std::string& m) : std::runtime_error(m), code(c) {}
};

namespace detail {
struct ArmAbort {
  const char* why;
};
}  // namespace detail

enum HostFn : uint8_t {
  H_NONE = 0,
  H_COPY, H_COPYN, H_ADD, H_SUB, H_MUL, H_SQUARE, H_NEG, H_DIV, H_INV, H_IDIV, H_MOD, H_POW,
  H_EQ, H_NEQ, H_LT, H_GT, H_LEQ, H_GEQ, H_LAND, H_LOR, H_LNOT, H_BAND, H_BOR, H_BXOR, H_BNOT,
  H_SHL, H_SHR, H_ISTRUE, H_TOINT, H_EQR, H_TO_REPR, H_TO_LONG_NORMAL, H_INT_COPY,
  // imports
  H_EXCEPTION, H_PRINT_ERROR, H_WRITE_BUFFER, H_SHOW_SHARED, H_IMPORT_NOP, H_IMPORT_ERROR,
};

struct HostSpec {
  const char* name;
  HostFn fn;
  int params, results;
};
inline const HostSpec* host_specs() {
  static const HostSpec specs[] = {
      {"Fr_copy", H_COPY, 2, 0},      {"Fr_copyn", H_COPYN, 3, 0},    {"Fr_add", H_ADD, 3, 0},
      {"Fr_sub", H_SUB, 3, 0},        {"Fr_mul", H_MUL, 3, 0},        {"Fr_square", H_SQUARE, 2, 0},
      {"Fr_neg", H_NEG, 2, 0},        {"Fr_div", H_DIV, 3, 0},        {"Fr_inv", H_INV, 2, 0},
      {"Fr_idiv", H_IDIV, 3, 0},      {"Fr_mod", H_MOD, 3, 0},        {"Fr_pow", H_POW, 3, 0},
      {"Fr_eq", H_EQ, 3, 0},          {"Fr_neq", H_NEQ, 3, 0},        {"Fr_lt", H_LT, 3, 0},
      {"Fr_gt", H_GT, 3, 0},          {"Fr_leq", H_LEQ, 3, 0},        {"Fr_geq", H_GEQ, 3, 0},
      {"Fr_land", H_LAND, 3, 0},      {"Fr_lor", H_LOR, 3, 0},        {"Fr_lnot", H_LNOT, 2, 0},
      {"Fr_band", H_BAND, 3, 0},      {"Fr_bor", H_BOR, 3, 0},        {"Fr_bxor", H_BXOR, 3, 0},
      {"Fr_bnot", H_BNOT, 2, 0},      {"Fr_shl", H_SHL, 3, 0},        {"Fr_shr", H_SHR, 3, 0},
      {"Fr_isTrue", H_ISTRUE, 1, 1},  {"Fr_toInt", H_TOINT, 1, 1},    {"Fr_eqR", H_EQR, 2, 1},
      {"Fr_toNormal", H_TO_REPR, 1, 0}, {"Fr_toMontgomery", H_TO_REPR, 1, 0},
      {"Fr_toLongNormal", H_TO_LONG_NORMAL, 1, 0},
      // circom 2.0.x: getWitness and log() copy an element's 32-byte body (after Fr_toLongNormal) to
      // the shared memory with ffwasm's Fr_int_copy(src, dst) instead of copying the element
      {"Fr_int_copy", H_INT_COPY, 2, 0},
      {nullptr, H_NONE, 0, 0}};
  return specs;
}

// circom's binary field functions (pR, pA, pB) but + and - (interp.hpp runs them as one)
inline bool binary_field_fn(HostFn h) {
  switch (h) {
    case H_MUL: case H_DIV: case H_IDIV: case H_MOD: case H_POW: case H_EQ: case H_NEQ: case H_LT: case H_GT:
    case H_LEQ: case H_GEQ: case H_LAND: case H_LOR: case H_BAND: case H_BOR: case H_BXOR: case H_SHL: case H_SHR:
      return true;
    default:
      return false;
  }
}

// Which of circom's field functions f is (by its name and signature), else H_NONE: the Recorder's calls and
// fuse_field_calls's fused ones agree on it.
inline HostFn circom_field_fn(const Module& m, uint32_t f) {
  const Func& fn = m.funcs[f];
  if (fn.imported) return H_NONE;
  for (const HostSpec* s = host_specs(); s->name; s++) {
    if (fn.name == s->name) {
      const FuncType& t = m.type_of(f);
      return int(t.params.size()) == s->params && int(t.results.size()) == s->results ? s->fn : H_NONE;
    }
  }
  return H_NONE;
}

// The calls of circom's commonest field functions with their arguments from locals, each one handler
// (Module::fuse_field_calls, OP_F_COPY...; interp.hpp runs them): once, before the module is shared.
inline void fuse_field_calls(Module& m) {
  std::vector<uint16_t> op(m.funcs.size(), 0), tag(m.funcs.size(), 0);
  for (uint32_t f = 0; f < m.funcs.size(); f++) {
    const HostFn h = circom_field_fn(m, f);
    tag[f] = h;
    switch (h) {
      case H_COPY: op[f] = OP_F_COPY; break;
      case H_ADD: case H_SUB: op[f] = OP_F_ADDSUB; break;
      case H_ISTRUE: op[f] = OP_F_ISTRUE; break;
      case H_TOINT: op[f] = OP_F_TOINT; break;
      default: op[f] = binary_field_fn(h) ? OP_F_BINARY : 0; break;
    }
  }
  m.fuse_field_calls(op, tag);
}

// Limits of one recording (the daemon's [limits] apply to it as to the wasm engine's run).
// Every buffer a recording grows is bounded by one of these: a hostile or broken wasm gets a clean
// refusal (Unsupported, or the circuit's failure), never an allocation that takes the process down.
struct RecordLimits {
  uint64_t max_memory = uint64_t(4) << 30;  // linear memory bytes; the trace (nodes and constants) too
  uint64_t max_steps = uint64_t(1) << 34;   // loop iterations and calls
  uint64_t arm_steps = uint64_t(1) << 16;   // loop iterations and calls in one arm of an if-converted `if`
  uint64_t arm_journal = uint64_t(1) << 22; // memory words one if-converted `if` may write (journaled)
  uint64_t max_frames = 20000;              // call depth (wasmtime's default stack ends about there too)
  uint64_t max_stack_words = uint64_t(1) << 24;  // operand and locals stacks, each (128 MiB)
  uint64_t max_log_bytes = uint64_t(64) << 20;   // log() texts kept in the trace
  uint64_t max_error_bytes = uint64_t(64) << 10; // circom's error messages (the rest is cut)
};

// UNTRACED: the control-flow run. Nothing is traced: a value computed from the inputs carries the mark TAINT
// instead of a trace id, and where a recording would put a guard (a branch, a loop bound, an index decided by
// such a value) the run simply goes the way this request's value says (no guard, no if-conversion). Everything
// a recording refuses about such values (their raw bytes read, Fr_eqR on them, ...) is refused the same way:
// the run follows exactly what a recording follows, for this request. An instantiation of its own, so that its
// shadow is a byte per word (it only ever holds 0, TAINT and LIMB | TAINT): a quarter of a recording's shadow
// to fault in, fill and compare, and no code for the trace on its hot paths.
template <class P, bool UNTRACED = false>
class Recorder {
 public:
  using F = Mont<P>;
  using CF = CircomField<P>;
  static constexpr uint32_t ELEM = 8 + 8 * P::N;  // circom's element: short, type, long
  // A shadow word per 4 bytes of memory: the trace id of the element it is part of (a recording), or its mark.
  using Shadow = std::conditional_t<UNTRACED, uint8_t, uint32_t>;
  // A shadow word with this bit names no element: it is part of the plain 32-byte body of value (id & ~LIMB)
  // that Fr_int_copy copied out of its element (circom 2.0.x's getWitness and log()).
  static constexpr Shadow LIMB = Shadow(Shadow(1) << (8 * sizeof(Shadow) - 1));
  // The control-flow run keeps a word's native-form bit (native_form_) in its shadow byte: one byte to write, and
  // one to test on a raw access. A recording keeps them apart (its shadow words hold whole trace ids).
  static constexpr Shadow NATIVE_FORM = UNTRACED ? 0x40 : 0;
  // The control-flow run's mark of a circom short literal read_elem has checked (its Montgomery limbs are its short
  // value's) and nothing has touched since: every shadow byte of the element LITERAL alone, so the next read takes
  // its short value without the checks (a literal is read again and again: a loop's bound, a shift, 1). Any store
  // over it rewrites or clears its shadow bytes (raw_write, write_value, copy_elem) or drops the mark
  // (set_native_form); it names no value (shadow_id ignores it) and the bytes are the wasm's own (raw reads pass).
  static constexpr Shadow LITERAL = UNTRACED ? 0x20 : 0;
  static_assert(!UNTRACED || !((TAINT | LIMB | NATIVE_FORM) & LITERAL), "the literal mark is a bit of its own");
  // The control-flow run's mark of the first shadow byte of an element write_elem wrote (beside NATIVE_FORM): own_elem
  // takes an element without its checks only where its first word starts one and no other word does. Without it, an
  // element written at a and another at a + 4 (never in circom's wasm; a hostile module's) left every shadow byte at a
  // NATIVE_FORM, and a read at a took the mixed bytes as a checked value where the wasm's functions decode them
  // otherwise (a silently different witness). shadow_id ignores it; copy_elem copies it with the element.
  static constexpr Shadow START = UNTRACED ? 0x10 : 0;
  static_assert(!UNTRACED || !((TAINT | LIMB | NATIVE_FORM | LITERAL) & START), "the start mark is a bit of its own");
  static_assert(UNTRACED ? TAINT < LIMB : CONST_BIT <= LIMB, "a shadow word holds a mark or a node id below LIMB");

  struct Val {
    uint32_t id;  // 0: concrete
    F v;
    // v's form: Montgomery (a recording's every value), or plain (plain_forms.hpp: the control-flow run keeps a value
    // in the form the operation that made it left it in, and converts only where an operation needs the other)
    bool plain = false;
  };
  struct InputSignal {
    uint64_t hash;
    uint32_t pos, size;
  };

  Recorder(const Module& m, RecordLimits lim, bool force_asserts) : m_(m), lim_(lim), force_(force_asserts) {
    for (uint32_t f = 0; f < m_.funcs.size(); f++) {
      const Func& fn = m_.funcs[f];
      HostFn h = H_NONE;
      if (fn.imported) {
        if (fn.import_module != "runtime") throw Unsupported("import " + fn.import_module + "." + fn.name);
        if (fn.name == "exceptionHandler") h = H_EXCEPTION;
        else if (fn.name == "printErrorMessage") h = H_PRINT_ERROR;
        else if (fn.name == "writeBufferMessage") h = H_WRITE_BUFFER;
        else if (fn.name == "showSharedRWMemory") h = H_SHOW_SHARED;
        else if (fn.name == "error") h = H_IMPORT_ERROR;  // circom_runtime's: the circuit fails (the wasm engine says how)
        else if (is_debug_hook(fn.name)) h = H_IMPORT_NOP;  // circom 2.0.x debug hooks, no-ops as in the wasm engine
        else throw Unsupported("import runtime." + fn.name + " (not a circom 2 witness generator?)");
        // the four callbacks take what circom passes them (the exception code, nothing) and return nothing
        const FuncType& t = m_.type_of(f);
        if (h != H_IMPORT_NOP && h != H_IMPORT_ERROR && (t.params.size() != (h == H_EXCEPTION ? 1u : 0u) || !t.results.empty()))
          throw Unsupported("import runtime." + fn.name + " has another signature than circom's");
      } else {
        h = circom_field_fn(m_, f);
      }
      host_.push_back(h);
    }
    // the wasm engine's contract (wasm_runtime.REQUIRED_EXPORTS): what it refuses, the native engine refuses too
    for (const char* e : {"getVersion", "readSharedRWMemory", "writeSharedRWMemory", "init", "setInputSignal",
                          "getInputSignalSize", "getRawPrime", "getFieldNumLen32", "getWitnessSize", "getInputSize",
                          "getWitness", "getMessageChar", "getSharedRWMemoryStart"})
      if (!m_.exports.count(e)) throw Unsupported(std::string("no export ") + e + " (not a circom 2 witness generator?)");
    if (!m_.memory_exported) throw Unsupported("no exported memory (not a circom 2 witness generator?)");
    f_set_input_ = need("setInputSignal");
    f_get_witness_ = need("getWitness");
    f_init_ = need("init");
    f_msg_char_ = need("getMessageChar");
    f_shared_ = need("getSharedRWMemoryStart");
    f_map_pos_ = m_.find_func("getInputSignalMapPosition");
    frames_.reserve(lim_.max_frames + 1);
    trace_.nodes.reserve(1 << 16);
    if (m_.funcs[f_msg_char_].imported) throw Unsupported("getMessageChar is imported");
    instantiate();
  }

  // --- module facts -------------------------------------------------------------------------------
  uint32_t n32() { return uint32_t(call_export("getFieldNumLen32", {})); }
  uint32_t witness_size() { return uint32_t(call_export("getWitnessSize", {})); }
  uint32_t input_size() { return uint32_t(call_export("getInputSize", {})); }
  uint32_t version() { return uint32_t(call_export("getVersion", {})); }
  // circom 2.0.x before 2.0.? has no minor and patch getters (the wasm engine calls them where they are)
  uint32_t minor_version() { return m_.exports.count("getMinorVersion") ? uint32_t(call_export("getMinorVersion", {})) : 0; }
  uint32_t patch_version() { return m_.exports.count("getPatchVersion") ? uint32_t(call_export("getPatchVersion", {})) : 0; }
  std::vector<uint32_t> raw_prime() {
    call_export("getRawPrime", {});
    const uint32_t n = n32();
    if (n == 0 || n > 64) throw Unsupported("getFieldNumLen32 says " + std::to_string(n) + " words");
    bounds_or_unsupported(shared_, 4 * uint64_t(n), "the prime in the shared memory");
    std::vector<uint32_t> w(n);
    for (size_t j = 0; j < w.size(); j++) w[j] = load32(shared_ + 4 * uint32_t(j));
    return w;
  }
  // The input signals: circom's hash map (256 entries of hash, signal position, size), found by
  // watching the first load getInputSignalMapPosition makes for hash 0 (entry 0's address).
  std::vector<InputSignal> input_signals() {
    if (f_map_pos_ < 0) throw Unsupported("no getInputSignalMapPosition in the name section");
    watch_load_ = true;
    watched_ = ~0ull;
    call((uint32_t)f_map_pos_, {0});
    watch_load_ = false;
    if (watched_ == ~0ull) throw Unsupported("cannot locate the input signal map");
    bounds_or_unsupported(watched_, 16 * 256, "the input signal map");
    std::vector<InputSignal> out;
    for (uint32_t k = 0; k < 256; k++) {
      uint32_t e = uint32_t(watched_) + 16 * k;
      uint64_t h = load64(e);
      if (h) out.push_back({h, load32(e + 8), load32(e + 12)});
    }
    return out;
  }
  // Requests are checked against that table (NativeCalculator), not by the wasm's own lookup: they must agree.
  void check_input_signals(const std::vector<InputSignal>& table) {
    for (const InputSignal& s : table)
      if (uint32_t(call_export("getInputSignalSize", {s.hash >> 32, s.hash & 0xFFFFFFFFu})) != s.size)
        throw Unsupported("the input signal map disagrees with getInputSignalSize");
  }

  // --- recording ----------------------------------------------------------------------------------
  // inputs: for each input signal given, its hash and values (plain, < p); input_base: the first
  // input signal position. Runs init, sets every value, reads the witness.
  void record(bool sanity_check, const std::vector<std::pair<uint64_t, std::vector<F>>>& inputs,
              const std::vector<InputSignal>& table, uint32_t input_base, uint32_t n_inputs) {
    trace_.n_inputs = n_inputs;
    call(uint32_t(f_init_), {sanity_check ? 1u : 0u});
    for (auto& [hash, values] : inputs) {
      const InputSignal* sig = nullptr;
      for (auto& t : table)
        if (t.hash == hash) sig = &t;
      if (!sig) throw CircuitFailure(1, "Signal not found.\n");
      for (uint32_t i = 0; i < values.size(); i++) {
        uint32_t idx = sig->pos + i - input_base;
        uint32_t id = (i < sig->size && idx < n_inputs) ? (UNTRACED ? TAINT : node(T_INPUT, idx, 0, 0)) : 0;
        write_elem(shared_elem_, Val{id, values[i]});
        input_copy_due_ = false;
        call(uint32_t(f_set_input_), {uint32_t(hash >> 32), uint32_t(hash), i});
        if (input_copy_due_) throw Unsupported("setInputSignal does not copy the input after Fr_eqR (circom's does)");
      }
    }
    uint32_t n = witness_size();
    if (uint64_t(n) * (sizeof(uint32_t) + sizeof(F)) > lim_.max_memory)
      throw Unsupported("a witness of " + std::to_string(n) + " values passes the memory limit");
    // the control-flow run (UNTRACED) traces no witness; the concrete one is appended (reserved, not zeroed first:
    // its block's pages are faulted in once, by the values)
    if (!UNTRACED) trace_.witness.resize(n);
    if (!force_) {  // a build from placeholder inputs (force) has no witness to give
      concrete_.reserve(n);
      advise_huge_pages(concrete_.data(), n * sizeof(F));  // written whole, once: as a program's code (program.hpp)
    }
    const CircomGetWitness gw = UNTRACED ? circom_get_witness() : CircomGetWitness{};
    for (uint32_t i = 0; i < n; i++) {
      charge(1);  // a call, as the wasm's own
      if constexpr (UNTRACED) {
        if (gw.ok) read_witness(gw, i);
        else call(uint32_t(f_get_witness_), {i});
      } else {
        call(uint32_t(f_get_witness_), {i});
      }
      Val v = read_shared_value(host_seq_);
      if (!UNTRACED) trace_.witness[i] = v.id ? v.id : const_id(v.v);
      if (!force_) concrete_.push_back(UNTRACED ? plain_of(v) : v.v);  // (the control-flow run's witness: plain)
    }
  }

  // getWitness(i) as circom 2.1+ writes it, recognized by its body's bytes: the signal's address from the witness's
  // table of signal indices (table + 4 i: an i32.load), Fr_copy of that element into the shared element, then
  // Fr_toLongNormal of it. The control-flow run reads 190 K such values in the RSA verifier, and each call through the
  // interpreter (call, enter, ~8 dispatches, host_call, leave) was ~12% of the run; read_witness takes the same steps
  // natively, in their order, through the same checks (raw_read, copy_elem, to_long_normal), the host calls counted
  // as the interpreter counts them. Any other body (circom 2.0.x's Fr_int_copy, a changed or mutated module) is run.
  struct CircomGetWitness {
    bool ok = false;
    uint32_t table = 0, signals = 0, shared = 0;  // the body's three constants
  };
  CircomGetWitness circom_get_witness() const {
    static_assert(ELEM < 64, "the element size is one byte of signed LEB128");
    CircomGetWitness g;
    const Func& fn = m_.funcs[uint32_t(f_get_witness_)];
    const FuncType& t = m_.type_of(uint32_t(f_get_witness_));
    if (fn.imported || !fn.decoded || !fn.body || t.params.size() != 1 || t.params[0] != 0x7F || !t.results.empty())
      return g;
    try {
      Reader r(fn.body, fn.body_len);
      auto bytes = [&](std::initializer_list<uint8_t> want) {
        for (uint8_t b : want)
          if (r.byte() != b) return false;
        return true;
      };
      auto i32_const = [&](uint32_t& v) {
        if (r.byte() != 0x41) return false;
        v = uint32_t(int32_t(r.sleb(32)));
        return true;
      };
      auto call_to = [&](HostFn h) {
        if (r.byte() != 0x10) return false;
        const uint64_t f = r.uleb();
        return f < host_.size() && host_[f] == h;
      };
      uint32_t shared2 = 0;
      g.ok = bytes({0x01, 0x01, 0x7F}) && i32_const(g.table) &&   // one i32 local; table
             bytes({0x20, 0x00, 0x41, 0x02, 0x74, 0x6A, 0x28, 0x02, 0x00}) &&  // + (i << 2), i32.load
             bytes({0x41, uint8_t(ELEM), 0x6C}) && i32_const(g.signals) &&  // * ELEM + signals
             bytes({0x6A, 0x21, 0x01}) && i32_const(g.shared) && bytes({0x20, 0x01}) && call_to(H_COPY) &&
             i32_const(shared2) && shared2 == g.shared && call_to(H_TO_LONG_NORMAL) && bytes({0x0B}) && r.done();
    } catch (const WasmError&) {
      g.ok = false;
    }
    return g;
  }
  void read_witness(const CircomGetWitness& g, uint32_t i) {
    const uint64_t ea = uint32_t(g.table + (i << 2));  // i32 arithmetic; the load's offset 0
    raw_read(ea, 4);
    uint32_t index;
    std::memcpy(&index, mem_.data() + ea, 4);
    const uint32_t src = uint32_t(index * ELEM + g.signals);
    host_seq_++;  // Fr_copy (L_COPY_ARGS: getWitness is not setInputSignal)
    copy_elem(g.shared, src);
    host_seq_++;  // Fr_toLongNormal (host_call)
    to_long_normal(g.shared);
    long_normal_ = HostEvent{g.shared, host_seq_};
  }

  Trace<F>& trace() { return trace_; }
  // empty when force; Montgomery, but plain from the control-flow run (UNTRACED), which writes it out as it is
  const Big<F>& concrete_witness() const { return concrete_; }
  // What a recording leaves for the compiler, taken out so the recorder (its memory and shadow) can go first.
  Trace<F> take_trace() { return std::move(trace_); }
  Big<F> take_concrete_witness() { return std::move(concrete_); }
  uint64_t steps() const { return steps_; }
  uint64_t converted_ifs() const { return converted_; }
  uint64_t guards() const { return guards_; }

 private:
  const Module& m_;
  RecordLimits lim_;
  bool force_;
  std::vector<HostFn> host_;
  int f_set_input_, f_get_witness_, f_init_, f_msg_char_, f_shared_, f_map_pos_;
  uint32_t shared_ = 0, shared_elem_ = 0;

  ZeroedPodVec<uint8_t> mem_;  // fresh zero pages: what the circuit never touches is never faulted in
  ZeroedPodVec<Shadow> shadow_;  // per 4-byte word (Shadow)
  // A bit per 4-byte word (a recording's; the control-flow run keeps them as NATIVE_FORM in shadow_): its bytes are
  // the native Fr functions' own form of an element (write_elem: short word 0, long Montgomery), which need not be
  // the bytes the wasm's Fr functions leave there for the same value (a short form, the short word of a value made
  // long kept, normal or Montgomery). The value is the same, the raw bytes are not: a raw load of them (i32.load,
  // memory.copy, Fr_int_copy's plain copy) is refused instead of followed.
  // Found by the wasm fuzz (seed 13): a getWitnessSize that says 39 for 21 made getWitness read its signal
  // index past the witness list, from the short word of a signal, and take another signal than the wasm did.
  ZeroedPodVec<uint64_t> native_form_;
  std::vector<uint64_t> globals_;

  struct Frame {
    uint32_t func, pc, locals, base;
  };
  // The operand stack and the locals: fresh zero pages (ZeroedPodVec), faulted in only as deep as the calls go (a
  // std::vector's zeroing touched all 640 KiB: ~160 page faults of a one-shot process). Neither needs zeros (a slot
  // is written before it is read; enter zeroes a frame's locals), so any contents would do.
  ZeroedPodVec<uint64_t> stk_;
  uint32_t sp_ = 0;
  ZeroedPodVec<uint64_t> loc_;
  uint32_t lp_ = 0;
  std::vector<Frame> frames_;
  uint64_t steps_ = 0;

  Trace<F> trace_;
  // Constants by value -> pool index, for the constants seen lately: a 4-way set-associative table of 2^12
  // sets (128 KiB, in cache), each slot the value's 32-bit fingerprint over its pool index + 1 (0: empty),
  // newest first; the pool is read only where a fingerprint matches. A value not found is appended (and
  // the set's oldest slot dropped). An exact table over the whole pool cost a cache and TLB miss per lookup
  // (~190 ns; a chain circuit interns a new constant per step: 13% of its build) and bought nothing the
  // replay sees: a constant that left this table and comes back is pooled twice, both copies exact.
  // circom's constants repeat close together (round constants, masks, shift counts), so the pools stay
  // as they were (SHA-256 170, Poseidon 396, EdDSA 4,718 constants: the same; an EdDSA signer 4,365 -> 4,369).
  static constexpr unsigned RECENT_SETS_BITS = 12, RECENT_WAYS = 4;
  Big<uint64_t> const_slots_ = Big<uint64_t>(RECENT_WAYS << RECENT_SETS_BITS, 0);
  static uint32_t fingerprint(const F& v) {
    u64 h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < P::N; i++) h = (h ^ v.v[i]) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return uint32_t(h >> 32);
  }
  Big<F> concrete_;
  uint64_t converted_ = 0, guards_ = 0;

  // if-conversion state
  struct JEntry {
    uint32_t addr, word, shadow;
    bool native_form;  // the word's native_form_ bit before: an undone arm leaves the bits as it found them
  };
  std::vector<JEntry> journal_;
  std::vector<uint32_t> elem_log_;
  int arm_depth_ = 0;
  // Running an arm of an if-converted `if` (never in the control-flow run: it converts no `if`).
  bool in_arm() const { return !UNTRACED && arm_depth_; }
  uint64_t arm_steps_left_ = 0;
  struct Pending {
    bool valid = false;
    size_t depth;
    uint32_t if_pc, id;
    bool negate;
    uint64_t step;  // the if must follow its isTrue within two instructions
  } pending_;

  // load watching (locating the input map)
  bool watch_load_ = false;
  uint64_t watched_ = ~0ull;

  std::string err_text_;
  // setInputSignal's Fr_eqR is answered "not small" so that its long copy (Fr_copy from the shared memory) keeps
  // the input traced: exact only if that copy follows, as in circom's code (a module that skips it is refused)
  bool input_copy_due_ = false;
  uint64_t log_bytes_ = 0;
  bool in_message_ = false;  // reading circom's message buffer (getMessageChar must not ask for another)

  // The order of host calls, to know what put the value in the shared memory that getWitness and log()
  // leave for their reader: circom 2.1+ copies the element there and calls Fr_toLongNormal on it; circom
  // 2.0.x calls Fr_toLongNormal on the element where it lies, then Fr_int_copy on its body.
  uint64_t host_seq_ = 0;
  struct HostEvent {
    uint32_t addr = 0;
    uint64_t seq = ~0ull;
  };
  HostEvent long_normal_;  // the last Fr_toLongNormal
  HostEvent shared_body_;  // the last Fr_int_copy into the shared memory

  static bool is_debug_hook(const std::string& n) {
    return n == "log" || n == "printDebug" || n == "logGetSignal" || n == "logSetSignal" || n == "logStartComponent" ||
           n == "logFinishComponent";
  }
  int need(const char* name) {
    int f = m_.find_func(name);
    if (f < 0) throw Unsupported(std::string("no function ") + name + " (not a circom 2 witness generator?)");
    return f;
  }

  // --- memory ---------------------------------------------------------------------------------------
  void instantiate() {
    uint64_t bytes = uint64_t(m_.mem_initial) << 16;
    if (bytes > lim_.max_memory) throw CircuitFailure(5, "the circuit's initial memory is larger than its limit");
    size_memory(bytes);
    for (auto& d : m_.data) {
      if (uint64_t(d.offset) + d.len > mem_.size()) throw Unsupported("data segment outside memory");
      std::memcpy(mem_.data() + d.offset, d.bytes, d.len);
    }
    for (auto& g : m_.globals) globals_.push_back(g.init);
    stk_.resize(1 << 14);
    loc_.resize(1 << 16);
    shared_ = uint32_t(call(uint32_t(f_shared_), {}));
    // the shared memory is the 32-byte body of the element in front of it (8-byte header)
    if (shared_ < 8 || (shared_ & 3)) throw Unsupported("shared memory at an unexpected address");
    shared_elem_ = shared_ - 8;
    runtime_end_ = shared_elem_;
    elem_window();
  }
  void size_memory(uint64_t bytes) {  // at instantiation, and memory.grow
    mem_.resize(bytes);
    shadow_.resize(bytes / 4);
    // The control-flow run's memory in 2 MiB pages where it spans them: circom's memory is dense (a run touches 90% of
    // the RSA verifier's 9.3 MiB and its shadow, all of SHA-256's 24.6), and a 4 KiB fault costs ~1.4 us on this VM
    // against ~0.35 us per 4 KiB cleared in a 2 MiB page (RSA: 4,365 -> 1,949 faults, ~3.5 ms of a ~110 ms run; SHA-256
    // run in process 93 -> 82 ms). A recording keeps 4 KiB pages (big_vec.hpp: its blocks were slower with them).
    if (UNTRACED) {
      advise_huge_pages(mem_.data(), mem_.size());
      advise_huge_pages(shadow_.data(), shadow_.size() * sizeof(Shadow));
    }
    if constexpr (!NATIVE_FORM) native_form_.resize(bytes / 256 + 1);
    elem_window();
  }
  // The element accesses' address tests (bounds, ffwasm's constants and scratch, alignment: three compares and
  // branches on every read and write, ~8% of the RSA verifier's control-flow run) as one: an element address is
  // good when a - elem_lo_, rotated right by 2, is below elem_slots_. A misaligned offset rotates its low bits to the
  // top (>= 2^30, above any slot count of a memory of at most 4 GiB); an address below elem_lo_ wraps to at least
  // 2^32 - elem_lo_, above every slot. So a pass implies the three tests pass; anything else runs them in their
  // order (read_checks, write_checks), so their errors stay theirs. Kept by size_memory and instantiate, the only places that
  // change the memory's size or runtime_end_.
  uint32_t elem_lo_ = 0;     // runtime_end_ rounded up to a word
  uint64_t elem_slots_ = 0;  // the aligned element addresses from elem_lo_ that lie inside the memory
  void elem_window() {
    const uint64_t lo = (runtime_end_ + 3) & ~uint64_t(3);
    elem_lo_ = uint32_t(lo);
    elem_slots_ = lo + ELEM <= mem_.size() ? (mem_.size() - ELEM - lo) / 4 + 1 : 0;
  }
  __attribute__((always_inline)) bool elem_address_ok(uint32_t a) const {
    const uint32_t d = a - elem_lo_;
    return uint64_t((d >> 2) | (d << 30)) < elem_slots_;
  }
  [[noreturn]] void trap(const std::string& what) {
    if (in_arm()) throw detail::ArmAbort{"trap"};
    throw CircuitFailure(0, "wasm trap: " + what);
  }
  __attribute__((always_inline)) void bounds(uint64_t addr, uint64_t n) {
    if (addr + n > mem_.size()) out_of_bounds();
  }
  [[noreturn]] __attribute__((noinline, cold)) void out_of_bounds() { trap("out of bounds memory access"); }
  void bounds_or_unsupported(uint64_t addr, uint64_t n, const char* what) {
    if (addr + n > mem_.size()) throw Unsupported(std::string(what) + " lies outside the memory");
  }
  // Where the recorder is, for its messages (a host function, or the recorder itself between calls).
  std::string where() const {
    if (frames_.empty()) return "reading the witness";
    const Func& fn = m_.funcs[frames_.back().func];
    return "function " + (fn.name.empty() ? "#" + std::to_string(frames_.back().func) : fn.name);
  }
  inline uint32_t load32(uint32_t a) {
    uint32_t v;
    std::memcpy(&v, mem_.data() + a, 4);
    return v;
  }
  inline uint64_t load64(uint32_t a) {
    uint64_t v;
    std::memcpy(&v, mem_.data() + a, 8);
    return v;
  }
  // A raw (non-Fr) read: its bytes must not belong to a traced element.
  inline void raw_read(uint64_t addr, uint32_t n) {
    bounds(addr, n);
    if (watch_load_ && watched_ == ~0ull && n == 8) watched_ = addr;
    uint64_t w0 = addr >> 2, w1 = (addr + n - 1) >> 2;
    for (uint64_t w = w0; w <= w1; w++)
      if (shadow_[w] & Shadow(~LITERAL)) raw_read_refused(addr, w0, w1);  // an id, or (the control-flow run's) NATIVE_FORM
    if constexpr (!NATIVE_FORM)
      if (any_native_form(w0, w1)) unsupported_native_form(addr);
  }
  [[noreturn]] __attribute__((noinline, cold)) void raw_read_refused(uint64_t addr, uint64_t w0, uint64_t w1) {
    for (uint64_t w = w0; w <= w1; w++)
      if (shadow_id(w)) unsupported_raw();
    unsupported_native_form(addr);
  }
  // The trace id (or mark) a shadow word holds, with LIMB.
  Shadow shadow_id(uint64_t w) const { return Shadow(shadow_[w] & ~(NATIVE_FORM | LITERAL | START)); }
  [[noreturn]] __attribute__((noinline, cold)) void unsupported_raw() {
    throw Unsupported(where() + " reads the bytes of a field element computed from the inputs");
  }
  [[noreturn]] __attribute__((noinline, cold)) void unsupported_native_form(uint64_t addr) {
    throw Unsupported(where() + " reads the raw bytes at " + std::to_string(addr) +
                      " of a field element the native Fr functions wrote (the wasm's own bytes for that value may "
                      "differ in form)");
  }
  // native_form_ over words [w0, w1]: set, cleared, or any set
  static uint64_t word_mask(uint64_t lo, uint64_t hi) {  // bits lo..hi of one 64-bit word (0 <= lo <= hi < 64)
    return (hi == 63 ? ~uint64_t(0) : (uint64_t(1) << (hi + 1)) - 1) & ~((uint64_t(1) << lo) - 1);
  }
  inline void set_native_form(uint64_t w0, uint64_t w1, bool on) {
    if constexpr (NATIVE_FORM != 0) {
      for (uint64_t w = w0; w <= w1; w++) shadow_[w] = on ? Shadow(shadow_id(w) | NATIVE_FORM) : shadow_id(w);
    } else {
      for (uint64_t k = w0 >> 6; k <= w1 >> 6; k++) {
        const uint64_t m = word_mask(k == w0 >> 6 ? w0 & 63 : 0, k == w1 >> 6 ? w1 & 63 : 63);
        native_form_[k] = on ? native_form_[k] | m : native_form_[k] & ~m;
      }
    }
  }
  inline bool any_native_form(uint64_t w0, uint64_t w1) {
    if constexpr (NATIVE_FORM != 0) {
      for (uint64_t w = w0; w <= w1; w++)
        if (shadow_[w] & NATIVE_FORM) return true;
    } else {
      for (uint64_t k = w0 >> 6; k <= w1 >> 6; k++)
        if (native_form_[k] & word_mask(k == w0 >> 6 ? w0 & 63 : 0, k == w1 >> 6 ? w1 & 63 : 63)) return true;
    }
    return false;
  }
  inline void journal_word(uint32_t w) {
    if (in_arm()) {
      if (journal_.size() >= lim_.arm_journal) throw detail::ArmAbort{"writes too much memory"};
      journal_.push_back({w, load32(w * 4), shadow_[w], bool(native_form_[w >> 6] >> (w & 63) & 1)});
    }
  }
  // ffwasm keeps its constants (the prime, Montgomery's) and scratch below the shared memory, circom its stack
  // pointer in the first word: the wasm's field functions read them, ours do not, so a store there (a broken
  // or hostile module) would make the wasm compute something else than the recording. Refused.
  uint64_t runtime_end_ = 0;  // shared_elem_ once known
  inline void not_in_runtime(uint64_t addr, uint64_t n) {
    if (addr < runtime_end_ && addr + n > 8) runtime_write(addr);
  }
  [[noreturn]] __attribute__((noinline, cold)) void runtime_write(uint64_t addr) {
    throw Unsupported(where() + " writes into ffwasm's constants (address " + std::to_string(addr) + ")");
  }
  [[noreturn]] __attribute__((noinline, cold)) void runtime_read(uint64_t addr) {
    throw Unsupported(where() + " takes a field element from ffwasm's constants and scratch (address " +
                      std::to_string(addr) + ")");
  }
  // A raw store: the bytes it covers stop being a traced element.
  inline void raw_write(uint64_t addr, uint32_t n) {
    bounds(addr, n);
    not_in_runtime(addr, n);
    uint64_t w0 = addr >> 2, w1 = (addr + n - 1) >> 2;
    for (uint64_t w = w0; w <= w1; w++) {
      journal_word(uint32_t(w));
      shadow_[w] = 0;  // (NATIVE_FORM in it cleared too)
    }
    if constexpr (!NATIVE_FORM) set_native_form(w0, w1, false);  // the bytes the wasm stores, as it stores them
  }

  __attribute__((always_inline)) Val read_elem(uint32_t a) {
    if (!elem_address_ok(a)) read_checks(a);
    const uint32_t w0 = a >> 2;
    const uint8_t* p = mem_.data() + a;
    Val out;  // one object for every return (a second one was copied into it: a wide load of narrow stores again)
    [[maybe_unused]] uint64_t head;  // (the control-flow run's: the first eight shadow bytes)
    if constexpr (UNTRACED) {
      // An element write_elem wrote and nothing has touched since (a raw store clears its words' shadow bytes,
      // to_long_normal and int_copy write others): every shadow byte NATIVE_FORM with one mark. Its value is then
      // canonical and its type write_elem's, so the checks below cannot fail: two compares instead of them (they
      // were a fifth of the RSA verifier's control-flow run).
      if (own_elem(w0, head)) {
        uint32_t type;
        std::memcpy(&type, p + 4, 4);
        put(out.v, reinterpret_cast<const u64*>(p + 8));
        out.id = uint32_t(head & TAINT);
        out.plain = !(type & 0x40000000u);
        return out;
      }
      if (head == repeated(LITERAL) && shadow_tail(w0) == (head & SHADOW_TAIL)) {  // a literal checked before
        int32_t sv;
        std::memcpy(&sv, p, 4);
        put_small(out.v, uint64_t(sv));  // (0 <= sv < SMALL_LITERALS: only those are marked)
        out.id = 0;
        out.plain = true;
        return out;
      }
    }
    const Shadow id = shadow_id(w0);
    if (id & LIMB) partly_overwritten(a);
    uint64_t marks = 0;  // the element's shadow bytes ORed (elem_shadow_is): any NATIVE_FORM among them
    if (!elem_shadow_is(w0, id, marks)) partly_overwritten(a);  // every shadow word of the element names the same value
    if constexpr (UNTRACED)
      if (marks & repeated(NATIVE_FORM)) native_bytes_mixed(w0, p, a);  // else the wasm's own bytes
    uint32_t type;
    std::memcpy(&type, p + 4, 4);
    out.id = id;
    // long Montgomery: what our Fr functions write; long normal too in the control-flow run (its plain values)
    if (type == 0xC0000000u || (UNTRACED && type == 0x80000000u)) {
      std::memcpy(out.v.v, p + 8, sizeof out.v.v);
      if (!F::lt_mod(out.v.v)) not_circoms(a);
      out.plain = type == 0x80000000u;
      return out;
    }
    if constexpr (UNTRACED) {  // short forms taken as the plain values they are
      int32_t sv;
      std::memcpy(&sv, p, 4);
      if (type == 0x40000000u && sv >= 0 && sv < SMALL_LITERALS) {  // circom's usual literal: decode_plain, inline
        const F& m = small_literals()[sv];  // (its Montgomery form, kept beside it, must be sv's: as decode_plain)
        u64 diff = 0;
        for (size_t k = 0; k < P::N; k++) {  // wasm memory: elements 4-byte aligned, so limbs read by memcpy
          u64 limb;
          std::memcpy(&limb, p + 8 + 8 * k, 8);
          diff |= m.v[k] ^ limb;
        }
        if (diff) not_circoms(a);
        // no mark, no NATIVE_FORM on any word (the wasm's own bytes): marked LITERAL for the next read
        if (head == 0 && shadow_tail(w0) == 0) set_elem_shadow(w0, LITERAL);
        put_small(out.v, uint64_t(sv));
        out.plain = true;
        return out;
      }
      put(out.v, decode_plain(p, a).v);
      out.plain = true;
      return out;
    }
    out.v = decode_other(p, a);
    return out;
  }
  // read_elem's address tests, in their order (elem_address_ok failed: one of them fails, or a module's odd layout)
  __attribute__((noinline)) void read_checks(uint32_t a) {
    bounds(a, ELEM);
    if (a < runtime_end_) runtime_read(a);  // ffwasm's scratch: the wasm's bytes there are not ours
    if (a & 3) unaligned_elem();
  }
  // write_value's and copy_elem's
  __attribute__((noinline)) void write_checks(uint32_t a) {
    bounds(a, ELEM);
    not_in_runtime(a, ELEM);
    if (a & 3) throw Unsupported("unaligned field element");
  }
  // read_elem's test (the control-flow run): the element at word w0 write_elem wrote and nothing has touched since
  // (every shadow byte NATIVE_FORM with one mark, START on the first alone); head: its first eight shadow bytes
  __attribute__((always_inline)) bool own_elem(uint32_t w0, uint64_t& head) const {
    static_assert(ELEM_SHADOW_BYTES > 8 && ELEM_SHADOW_BYTES <= 16, "the shadow bytes of one element: 8 + a tail");
    constexpr uint64_t OWN = repeated(NATIVE_FORM) | START, OWN_TAINTED = repeated(NATIVE_FORM | TAINT) | START;
    const uint8_t* s = reinterpret_cast<const uint8_t*>(shadow_.data() + w0);
    std::memcpy(&head, s, 8);
    return (head == OWN || head == OWN_TAINTED) && shadow_tail(w0) == (head & SHADOW_TAIL & ~uint64_t(START));
  }
  // read_elem's checked path in the control-flow run: bytes the native functions wrote (NATIVE_FORM) hold their form
  // of a value (plain where the wasm keeps Montgomery, a short word the wasm may never have written), so they are read
  // only as the whole element one native write made (START on its first word alone), or where the decode does not
  // use them: the short word under a long type the wasm wrote (to_long_normal's). Anything else (an element written
  // over part of another: never circom's code, a hostile module's) would decode other bytes than the wasm's: refused.
  __attribute__((noinline)) void native_bytes_mixed(uint32_t w0, const uint8_t* p, uint32_t a) const {
    constexpr uint32_t W = ELEM / 4;
    const Shadow* s = shadow_.data() + w0;
    bool limbs = false, whole = (s[0] & (START | NATIVE_FORM)) == (START | NATIVE_FORM);
    for (uint32_t k = 1; k < W; k++) whole &= (s[k] & (START | NATIVE_FORM)) == NATIVE_FORM;
    if (whole) return;
    for (uint32_t k = 2; k < W; k++) limbs |= (s[k] & NATIVE_FORM) != 0;
    if (s[1] & NATIVE_FORM) overlapping(a);  // a native type word: the element must be that write's whole
    uint32_t type;
    std::memcpy(&type, p + 4, 4);
    if ((type & 0x80000000u) ? limbs : ((s[0] & NATIVE_FORM) || (type == 0x40000000u && limbs))) overlapping(a);
  }
  [[noreturn]] __attribute__((noinline, cold)) void overlapping(uint32_t a) const {
    throw Unsupported(where() + ": the field element at " + std::to_string(a) +
                      " overlaps another one the native functions wrote");
  }
  // the shadow bytes of the element at word w0 after its first eight (own_elem; SHADOW_TAIL: as many of head's)
  __attribute__((always_inline)) uint64_t shadow_tail(uint32_t w0) const {
    uint64_t tail = 0;
    std::memcpy(&tail, reinterpret_cast<const uint8_t*>(shadow_.data() + w0) + 8, ELEM_SHADOW_TAIL);
    return tail;
  }
  // An element whose header or value circom never writes (a type word with bits other than long 0x80000000 and
  // Montgomery 0x40000000; a long value >= p): ffwasm's own functions may take it another way than ours (they
  // test single bits of the type; an unreduced value), so it is not followed.
  [[noreturn]] __attribute__((noinline, cold)) void not_circoms(uint32_t a) {
    throw Unsupported(where() + ": the field element at " + std::to_string(a) + " is in no form circom writes");
  }
  [[noreturn]] __attribute__((noinline, cold)) void unaligned_elem() {
    throw Unsupported("unaligned field element");
  }
  [[noreturn]] __attribute__((noinline, cold)) void partly_overwritten(uint32_t a) {
    throw Unsupported(where() + ": the field element at " + std::to_string(a) +
                      " was partly overwritten by raw stores");
  }
  // Montgomery forms of 0 .. SMALL_LITERALS - 1, once per process: a short literal read is a lookup, not a product
  // (the control-flow run of bigint.circom read one per few instructions: decode_other was 9% of its time).
  static constexpr int32_t SMALL_LITERALS = 1024;
  static const F* small_literals() {
    static const std::vector<F> table = [] {
      std::vector<F> t(SMALL_LITERALS);
      for (int32_t k = 0; k < SMALL_LITERALS; k++) {
        F n = F::zero();
        n.v[0] = uint64_t(k);
        t[k] = n.to_mont();
      }
      return t;
    }();
    return table.data();
  }
  // An element in short or long normal form (circom's literals, the wasm's own stores), in Montgomery form.
  __attribute__((noinline)) F decode_other(const uint8_t* p, uint32_t a) {
    int32_t sv;
    uint32_t type;
    std::memcpy(&sv, p, 4);
    std::memcpy(&type, p + 4, 4);
    F v;
    if (type & 0x3FFFFFFFu) not_circoms(a);  // circom's literals are short with bit 30 set (their Montgomery form kept)
    if (type & 0x80000000u) {
      u64 l[P::N];
      std::memcpy(l, p + 8, sizeof l);
      if (!F::lt_mod(l)) not_circoms(a);
      v = F::from_limbs(l);
      if (!(type & 0x40000000u)) v = mont(v);  // long normal: plain
    } else {
      if (sv > -SMALL_LITERALS && sv < SMALL_LITERALS) {  // the usual literal (0, 1, a bound, a shift)
        const F& m = small_literals()[sv < 0 ? -sv : sv];
        v = sv < 0 ? m.neg() : m;  // Montgomery's form of p - |sv| is p - |sv|'s: negation is linear
      } else {
        F small = F::zero();
        small.v[0] = uint64_t(sv < 0 ? -int64_t(sv) : int64_t(sv));
        v = mont(sv < 0 ? small.neg() : small);  // plain: p - |sv| for a negative one
      }
      // a literal keeps its Montgomery form beside the short value, and ffwasm reads either: they must agree
      if (type && std::memcmp(v.v, p + 8, sizeof v.v) != 0) not_circoms(a);
    }
    return v;
  }

  // The plain forms of Montgomery values converted either way lately. circom's integer work (loop counters compared
  // and turned into indices, bits shifted out and masked) converts the same few values to plain and back again and
  // again; a hit costs one compare of four limbs instead of a Montgomery product. Two direct-mapped tables (by the
  // Montgomery form, by the plain form) of MEMO_SLOTS pairs each, indexed by a hash of the low limb: a slot holds the
  // last pair that fell there (zero <-> zero to begin with: a true pair). Eight pairs searched in turn were ~10% of
  // the RSA verifier's control-flow run, the scan and its misses' products alike.
  static constexpr unsigned MEMO_BITS = 9, MEMO_SLOTS = 1u << MEMO_BITS;
  struct MemoPair {
    F key, value;
  };
  std::unique_ptr<MemoPair[]> to_plain_ = std::make_unique<MemoPair[]>(MEMO_SLOTS);  // value-initialized: zeros
  std::unique_ptr<MemoPair[]> to_mont_ = std::make_unique<MemoPair[]>(MEMO_SLOTS);
  static unsigned memo_slot(u64 low) { return unsigned((low * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS)); }
  void remember_plain(const F& m, const F& n) {
    to_plain_[memo_slot(m.v[0])] = MemoPair{m, n};
    to_mont_[memo_slot(n.v[0])] = MemoPair{n, m};
  }
  F plain(const F& m) {
    const MemoPair& e = to_plain_[memo_slot(m.v[0])];
    if (e.key == m) return e.value;
    F n = m.from_mont();
    remember_plain(m, n);
    return n;
  }
  F mont(const F& n) {  // a plain value (a literal, a result) in Montgomery form, remembering the pair
    const MemoPair& e = to_mont_[memo_slot(n.v[0])];
    if (e.key == n) return e.value;
    F m = n.to_mont();
    remember_plain(m, n);
    return m;
  }
  // Inverses of Montgomery values computed lately (the control-flow run's `/`): zk-email's bigint templates divide by
  // the same constant again and again (`in[i] / (1 << n)`), and an inverse is ~10 K instructions (3% of the RSA
  // verifier's run). Direct-mapped as to_plain_; zero <-> zero to begin with (inv(0) = 0, as ffwasm's).
  std::unique_ptr<MemoPair[]> to_inverse_ = std::make_unique<MemoPair[]>(MEMO_SLOTS);
  F inverse(const F& m) {
    MemoPair& e = to_inverse_[memo_slot(m.v[0])];
    if (e.key == m) return e.value;
    e = MemoPair{m, CF::inv(m)};
    return e.value;
  }
  // A value in either form, in the one wanted (plain_forms.hpp: a recording's are all Montgomery).
  F plain_of(const Val& x) { return x.plain ? x.v : plain(x.v); }
  F mont_of(const Val& x) { return x.plain ? mont(x.v) : x.v; }
  static Val plain_val(uint32_t id, const F& n) {
    Val r{id, n};
    r.plain = true;
    return r;
  }
  bool same_value(const Val& x, const Val& y) { return x.plain == y.plain ? x.v == y.v : plain_of(x) == plain_of(y); }
  // the control-flow run's field functions on values in either form (plain_forms.hpp)
  F decode_plain(const uint8_t* p, uint32_t a);
  F mul_forms(const Val& a, const Val& b, bool& plain_out);
  uint32_t binary_value(HostFn h, const Val& a, const Val& b, F& r, bool& rp);
  void binary_to(uint32_t dst, HostFn h, const Val& a, const Val& b);
  bool binary_direct(uint32_t dst, HostFn h, const Val& a, const Val& b);
  static uint32_t result_mark(HostFn h, const Val& a, const Val& b);
  static bool plain_binary(HostFn h, const F& x, const F& y, F& r);
  Val unary_forms(HostFn h, const Val& a);
  // An element's shadow words, eight bytes at a time (a recording's 40 bytes, the control-flow run's 10): all
  // `id` (read_elem's check, NATIVE_FORM aside), or set to it (write_elem).
  static constexpr uint32_t ELEM_SHADOW_BYTES = ELEM / 4 * sizeof(Shadow);
  static constexpr uint32_t ELEM_SHADOW_TAIL = ELEM_SHADOW_BYTES % 8;
  static constexpr uint64_t SHADOW_TAIL = ELEM_SHADOW_TAIL ? ~uint64_t(0) >> (64 - 8 * ELEM_SHADOW_TAIL) : 0;
  static constexpr uint64_t repeated(Shadow id) { return uint64_t(id) * (~uint64_t(0) / uint64_t(Shadow(~Shadow(0)))); }
  // marks: the shadow bytes ORed into it (read_elem: whether any word is NATIVE_FORM)
  bool elem_shadow_is(uint32_t w0, Shadow id, uint64_t& marks) const {
    const uint8_t* s = reinterpret_cast<const uint8_t*>(shadow_.data() + w0);
    const uint64_t pattern = repeated(id), ids = ~repeated(NATIVE_FORM | LITERAL | START);
    uint64_t diff = 0;
    for (uint32_t k = 0; k + 8 <= ELEM_SHADOW_BYTES; k += 8) {
      uint64_t chunk;
      std::memcpy(&chunk, s + k, 8);
      diff |= (chunk & ids) ^ pattern;
      marks |= chunk;
    }
    if constexpr (ELEM_SHADOW_TAIL != 0) {
      uint64_t tail = 0;
      std::memcpy(&tail, s + ELEM_SHADOW_BYTES - ELEM_SHADOW_TAIL, ELEM_SHADOW_TAIL);
      diff |= (tail & ids) ^ (pattern >> (64 - 8 * ELEM_SHADOW_TAIL));
      marks |= tail;
    }
    return !diff;
  }
  // first: more bits for the first shadow byte alone (START)
  void set_elem_shadow(uint32_t w0, Shadow id, Shadow first = 0) {
    uint8_t* s = reinterpret_cast<uint8_t*>(shadow_.data() + w0);
    const uint64_t pattern = repeated(id);
    const uint64_t head = pattern | first;
    std::memcpy(s, &head, 8);
    for (uint32_t k = 8; k + 8 <= ELEM_SHADOW_BYTES; k += 8) std::memcpy(s + k, &pattern, 8);
    if constexpr (ELEM_SHADOW_TAIL != 0)
      std::memcpy(s + ELEM_SHADOW_BYTES - ELEM_SHADOW_TAIL, &pattern, ELEM_SHADOW_TAIL);
  }
  // One limb stored from its register. The limbs of write_elem were spilled to the stack one by one and
  // reloaded two at a time into a vector register for a 16-byte store: a load that spans two pending stores
  // is not forwarded from them and waits for both to retire (half of write_elem's samples in the RSA
  // verifier's control-flow run sat on that load).
  static inline void store_limb(uint8_t* p, u64 v) {
#if defined(__x86_64__)
    asm("movq %1, %0" : "=m"(*reinterpret_cast<u64*>(p)) : "r"(v));
#else
    std::memcpy(p, &v, 8);
#endif
  }
  static inline u64 load_limb(const uint8_t* p) {  // one 8-byte load (not merged into a wider one)
    u64 v;
#if defined(__x86_64__)
    asm("movq %1, %0" : "=r"(v) : "m"(*reinterpret_cast<const u64*>(p)));
#else
    std::memcpy(&v, p, 8);
#endif
    return v;
  }
  // A value's limbs copied by 8-byte loads into 16-byte stores. A load is forwarded from a store still in flight
  // only when that one store covers it: limbs are mostly stored one at a time (as they are computed, write_elem's
  // store_limb) and the compiler's copies of an F load 16 bytes at a time, which then wait for those stores to retire
  // (a copy of read_elem's value into its reader doubled the control-flow run's time). Loaded narrow, stored wide:
  // whichever way a reader loads the copy, one store covers it.
  static inline void put(F& dst, const u64* src) {
#if defined(__x86_64__)
    static_assert(P::N % 2 == 0, "limbs in pairs");
    for (size_t k = 0; k < P::N; k += 2) {
      u64 lo, hi;
      asm("movq %1, %0" : "=r"(lo) : "m"(src[k]));
      asm("movq %1, %0" : "=r"(hi) : "m"(src[k + 1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.v + k), _mm_set_epi64x(int64_t(hi), int64_t(lo)));
    }
#else
    std::memmove(dst.v, src, sizeof dst.v);
#endif
  }
  // A one-limb value into dst from its register, in put's 16-byte stores (a zero F built in memory first, its low
  // limb stored over it, then read back by put, waited on those stores)
  static inline void put_small(F& dst, u64 lo) {
#if defined(__x86_64__)
    static_assert(P::N % 2 == 0, "limbs in pairs");
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.v), _mm_set_epi64x(0, int64_t(lo)));
    for (size_t k = 2; k < P::N; k += 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.v + k), _mm_setzero_si128());
#else
    dst = F::zero();
    dst.v[0] = lo;
#endif
  }
  void write_elem(uint32_t a, const Val& x) { write_value(a, x.id, x.v, x.plain); }
  // Before an element's stores at a: the address checked, and inside an if-converted arm its words journaled
  // and the element logged
  __attribute__((always_inline)) void begin_elem_write(uint32_t a) {
    if (!elem_address_ok(a)) write_checks(a);
    if (in_arm()) {
      for (uint32_t k = 0; k < ELEM / 4; k++) journal_word((a >> 2) + k);
      elem_log_.push_back(a);
    }
  }
  __attribute__((always_inline)) void write_value(uint32_t a, uint32_t x_id, const F& x_v, bool x_plain) {
    begin_elem_write(a);
    // Everything read into registers before the first store: the build does not assume strict aliasing, so
    // every store would make the compiler load x.id and the vectors' data again (the shadow fill was ten of each).
    // The value limb by limb: it was mostly just stored limb by limb (a field function's result), and a wider
    // load of it (the copy vectorized) waits for those stores to retire instead of taking their data
    // (store-to-load forwarding fails): 29% of this function in the RSA verifier's control-flow run.
    u64 l[P::N];
    for (size_t k = 0; k < P::N; k++) {
      l[k] = x_v.v[k];
      asm("" : "+r"(l[k]));
    }
    write_limbs(a, Shadow(x_id), l, x_plain);
  }
  // write_value's stores, the value's limbs in registers (write_value's, or copy_elem's literal: its short value
  // and zeros). The address checked and the words journaled by the caller.
  __attribute__((always_inline)) void write_limbs(uint32_t a, Shadow id, const u64 (&l)[P::N], bool x_plain) {
    const uint32_t w0 = a >> 2;
    uint8_t* p = mem_.data() + a;
    // short word 0, type long Montgomery (or long normal: a plain value of the control-flow run)
    const uint64_t header = uint64_t(x_plain ? 0x80000000u : 0xC0000000u) << 32;
    std::memcpy(p, &header, 8);
    for (size_t k = 0; k < P::N; k++) store_limb(p + 8 + 8 * k, l[k]);
    set_elem_shadow(w0, Shadow(id | NATIVE_FORM), START);
    if constexpr (!NATIVE_FORM) set_native_form(w0, w0 + ELEM / 4 - 1, true);
  }
  // Fr_copy in the control-flow run. An element read_elem takes without its checks (own_elem) is copied as its
  // bytes and shadow bytes, which are what write_elem would write for its value: no value in registers between. Each
  // word moved by an 8-byte load and store (as put: the source was mostly just stored limb by limb, and a wider load
  // would wait for those stores to retire). Anything else as read_elem and write_elem, with their checks in their order.
  __attribute__((always_inline)) void copy_elem(uint32_t dst, uint32_t src) {
    static_assert(UNTRACED && NATIVE_FORM != 0, "the control-flow run's shadow");
    if (!elem_address_ok(src)) read_checks(src);
    uint64_t head;
    if (!own_elem(src >> 2, head)) {
      // A literal read_elem checked before (its LITERAL mark: 576 K of the RSA verifier's 2.8 M copies a run): the
      // element read_elem and write_elem would make of it written from its short value in a register, without the
      // Val between them (read_elem's test of the mark, its put_small, write_value's loads of that Val again).
      if (head == repeated(LITERAL) && shadow_tail(src >> 2) == (head & SHADOW_TAIL)) {
        int32_t sv;
        std::memcpy(&sv, mem_.data() + src, 4);  // (0 <= sv < SMALL_LITERALS: only those are marked)
        begin_elem_write(dst);
        u64 l[P::N] = {};
        l[0] = uint64_t(uint32_t(sv));
        for (size_t k = 0; k < P::N; k++) asm("" : "+r"(l[k]));
        return write_limbs(dst, 0, l, true);
      }
      return write_elem(dst, read_elem(src));
    }
    if (!elem_address_ok(dst)) write_checks(dst);
    const uint8_t* p = mem_.data() + src;
    uint8_t* q = mem_.data() + dst;
    u64 w[ELEM / 8];
    for (uint32_t k = 0; k < ELEM / 8; k++) w[k] = load_limb(p + 8 * k);
    for (uint32_t k = 0; k < ELEM / 8; k++) store_limb(q + 8 * k, w[k]);
    uint8_t* s = reinterpret_cast<uint8_t*>(shadow_.data() + (dst >> 2));
    // (own_elem: the tail repeats head, START aside)
    const uint64_t tail = head & SHADOW_TAIL & ~uint64_t(START);
    std::memcpy(s, &head, 8);
    std::memcpy(s + 8, &tail, ELEM_SHADOW_TAIL);
  }
  // ffwasm's representation changes (toNormal...): the value stays; a concrete element is
  // rewritten in long normal form so a raw reader sees what the wasm would give it.
  void to_long_normal(uint32_t a) {
    Val x = read_elem(a);
    if (x.id) return;
    not_in_runtime(a, ELEM);
    if (in_arm()) for (uint32_t k = 0; k < ELEM / 4; k++) journal_word((a >> 2) + k);
    uint8_t* p = mem_.data() + a;
    uint32_t sv = 0, type = 0x80000000u;
    F n = plain_of(x);
    std::memcpy(p, &sv, 4);
    std::memcpy(p + 4, &type, 4);
    std::memcpy(p + 8, n.v, sizeof n.v);
    // the type and the plain value are the wasm's bytes now; its short word may still be another
    set_native_form(a >> 2, a >> 2, true);
    set_native_form((a >> 2) + 1, (a >> 2) + ELEM / 4 - 1, false);
  }

  // ffwasm's Fr_int_copy(src, dst): the 8 * N bytes of an element's body. Bytes no traced value owns are
  // copied as the wasm copies them; the body of a traced element only right after Fr_toLongNormal put it in
  // long normal form (then the wasm's bytes are the plain value, whatever form it held): the copy holds
  // those bytes, and its shadow words name the value with LIMB.
  void int_copy(uint32_t src, uint32_t dst) {
    constexpr uint32_t BODY = 8 * P::N;
    bounds(src, BODY);
    bounds(dst, BODY);
    bool traced = false;
    for (uint64_t w = src >> 2; w <= (uint64_t(src) + BODY - 1) >> 2; w++) traced |= shadow_id(w) != 0;
    if (!traced) {
      if (any_native_form(src >> 2, (uint64_t(src) + BODY - 1) >> 2)) unsupported_native_form(src);
      for (uint32_t k = 0; k < P::N; k++) {  // 8 bytes at a time, in order, as ffwasm's loop
        uint64_t v;
        std::memcpy(&v, mem_.data() + src + 8 * k, 8);
        raw_write(uint64_t(dst) + 8 * k, 8);
        std::memcpy(mem_.data() + dst + 8 * k, &v, 8);
      }
      return;
    }
    if (src < 8 || long_normal_.addr != src - 8 || long_normal_.seq + 1 != host_seq_)
      throw Unsupported(where() + ": Fr_int_copy of the body of a field element computed from the inputs, "
                        "not right after Fr_toLongNormal");
    const Val x = read_elem(src - 8);
    const F n = plain_of(x);
    raw_write(dst, BODY);
    std::memcpy(mem_.data() + dst, n.v, BODY);
    for (uint64_t w = dst >> 2; w <= (uint64_t(dst) + BODY - 1) >> 2; w++) shadow_[w] = Shadow(LIMB | x.id);
  }
  // The value getWitness or a log() left for its reader (readSharedRWMemory): the body Fr_int_copy put in the
  // shared memory when that was the host call at `seq` (circom 2.0.x), else the element in front of it.
  Val read_shared_value(uint64_t seq) {
    if (shared_body_.seq != seq) return read_elem(shared_elem_);
    constexpr uint32_t BODY = 8 * P::N;
    bounds(shared_, BODY);
    const Shadow s0 = shadow_id(shared_ >> 2);
    for (uint32_t k = 1; k < BODY / 4; k++)
      if (shadow_id((shared_ >> 2) + k) != s0)
        throw Unsupported(where() + ": the shared memory holds parts of several values");
    if (s0 && !(s0 & LIMB)) partly_overwritten(shared_elem_);
    u64 l[P::N];
    std::memcpy(l, mem_.data() + shared_, BODY);
    F::reduce_raw(l);
    if constexpr (UNTRACED) return plain_val(uint32_t(Shadow(s0 & ~LIMB)), F::from_limbs(l));
    return Val{uint32_t(Shadow(s0 & ~LIMB)), mont(F::from_limbs(l))};
  }

  // --- the trace ------------------------------------------------------------------------------------
  uint32_t node(uint8_t op, uint32_t a, uint32_t b, uint32_t c) {
    if (trace_.nodes.size() >= max_nodes_) trace_too_large();
    trace_.nodes.push_back(TNode{op, a, b, c});
    return uint32_t(trace_.nodes.size() - 1);
  }
  // The trace is held to the memory limit of the run it records (and its ids to 31 bits).
  const uint64_t max_nodes_ = std::min<uint64_t>(lim_.max_memory / sizeof(TNode), CONST_BIT - 2);
  const uint64_t max_consts_ = std::min<uint64_t>(lim_.max_memory / sizeof(F), CONST_BIT - 2);
  [[noreturn]] __attribute__((noinline, cold)) void trace_too_large() {
    throw Unsupported("the recorded program would pass the memory limit (" + std::to_string(lim_.max_memory >> 20) +
                      " MiB: " + std::to_string(trace_.nodes.size()) + " values, " +
                      std::to_string(trace_.consts.size()) + " constants)");
  }
  // Constants are referenced as CONST_BIT | index (no node: the pool only grows).
  uint32_t const_id(const F& v) {
    const uint32_t fp = fingerprint(v);
    uint64_t* set = const_slots_.data() + RECENT_WAYS * (fp >> (32 - RECENT_SETS_BITS));
    for (unsigned w = 0; w < RECENT_WAYS; w++) {
      const uint64_t slot = set[w];
      if (slot && uint32_t(slot >> 32) == fp && trace_.consts[uint32_t(slot) - 1] == v)
        return CONST_BIT | (uint32_t(slot) - 1);
    }
    uint32_t ci = uint32_t(trace_.consts.size());
    if (ci >= max_consts_) trace_too_large();
    trace_.consts.push_back(v);
    for (unsigned w = RECENT_WAYS - 1; w > 0; w--) set[w] = set[w - 1];
    set[0] = (uint64_t(fp) << 32) | (ci + 1);
    return CONST_BIT | ci;
  }

  uint32_t id_of(const Val& x) { return x.id ? x.id : const_id(x.v); }
  static bool is_const(const Val& x, uint64_t k) {  // 0 or 1
    static const F zero = F::zero(), one = F::one();
    return !x.id && x.v == (k ? one : zero);
  }

  void guard(uint8_t op, uint32_t id, uint32_t b = 0) {
    if constexpr (UNTRACED) return;  // the control-flow run: the value decides, nothing to check later
    if (in_arm()) throw detail::ArmAbort{"guard"};
    node(op, id, b, 0);
    guards_++;
  }

  // --- circom's field functions -----------------------------------------------------------------
  Val binary(HostFn h, const Val& a, const Val& b) {
    static_assert(!UNTRACED, "the control-flow run's binary field functions are binary_to (plain_forms.hpp)");
    F r;
    uint8_t op;
    switch (h) {
      case H_ADD: r = CF::add(a.v, b.v); op = T_ADD; break;
      case H_SUB: r = CF::sub(a.v, b.v); op = T_SUB; break;
      case H_MUL: r = CF::mul(a.v, b.v); op = T_MUL; break;
      case H_DIV: r = CF::div(a.v, b.v); op = T_DIV; break;
      // the integer operators: CircomField's definitions on plain values (CF::idiv, CF::lt... are these
      // same functions between from_mont and to_mont), the conversions through the memo
      case H_IDIV: case H_MOD: {
        // \ and % trap on 0: an arm that may not run must not contain them (its select
        // would make the replay trap where the wasm does not)
        if (in_arm() && (a.id || b.id)) throw detail::ArmAbort{"partial op"};
        F q;
        if (h == H_IDIV ? CF::n_idiv(plain(a.v), plain(b.v), q) : CF::n_mod(plain(a.v), plain(b.v), q))
          trap("integer divide by zero");
        r = mont(q);
        op = h == H_IDIV ? T_IDIV : T_MOD;
        break;
      }
      case H_POW: r = pow(a.v, plain(b.v)); op = T_POW; break;
      case H_EQ: r = CF::eq(a.v, b.v); op = T_EQ; break;
      case H_NEQ: r = CF::neq(a.v, b.v); op = T_NEQ; break;
      case H_LT: r = CF::boolean(CF::n_less(plain(a.v), plain(b.v))); op = T_LT; break;
      case H_GT: r = CF::boolean(CF::n_less(plain(b.v), plain(a.v))); op = T_GT; break;
      case H_LEQ: r = CF::boolean(!CF::n_less(plain(b.v), plain(a.v))); op = T_LEQ; break;
      case H_GEQ: r = CF::boolean(!CF::n_less(plain(a.v), plain(b.v))); op = T_GEQ; break;
      case H_LAND: r = CF::land(a.v, b.v); op = T_LAND; break;
      case H_LOR: r = CF::lor(a.v, b.v); op = T_LOR; break;
      case H_BAND: r = mont(CF::n_band(plain(a.v), plain(b.v))); op = T_BAND; break;
      case H_BOR: r = mont(CF::n_bor(plain(a.v), plain(b.v))); op = T_BOR; break;
      case H_BXOR: r = mont(CF::n_bxor(plain(a.v), plain(b.v))); op = T_BXOR; break;
      case H_SHL: r = mont(CF::n_shl(plain(a.v), plain(b.v))); op = T_SHL; break;
      case H_SHR: r = mont(CF::n_shr(plain(a.v), plain(b.v))); op = T_SHR; break;
      default: throw Unsupported("internal: binary op");
    }
    if (!a.id && !b.id) return Val{0, r};
    // identities that keep the trace short (exact in the field)
    if ((op == T_ADD || op == T_SUB) && is_const(b, 0)) return a;
    if (op == T_ADD && is_const(a, 0)) return b;
    if (op == T_MUL && is_const(b, 1)) return a;
    if (op == T_MUL && is_const(a, 1)) return b;
    if (op == T_MUL && (is_const(a, 0) || is_const(b, 0))) return Val{0, F::zero()};
    return Val{node(op, id_of(a), id_of(b), 0), r};
  }
  // a ** e. A small base to a small power whose result has at most 128 bits (zk-email's poly_eval: x ** i, x and i
  // below 33) is taken in integers (small_pow) and converted once, not squared and multiplied in Montgomery form bit
  // by bit.
  static bool one_limb_below(const F& n, uint64_t bound) {
    for (size_t i = 1; i < P::N; i++)
      if (n.v[i]) return false;
    return n.v[0] < bound;
  }
  static bool small_pow(const F& base, const F& e_plain, F& out) {  // plain base and result
    if (!one_limb_below(e_plain, 128) || !one_limb_below(base, uint64_t(1) << 32)) return false;
    unsigned __int128 x = 1;
    for (uint64_t k = 0; k < e_plain.v[0]; k++)
      if (__builtin_mul_overflow(x, base.v[0], &x)) return false;
    out = F::zero();
    out.v[0] = uint64_t(x);
    out.v[1] = uint64_t(x >> 64);
    return true;  // below 2^128 < p: the integer is the field element
  }
  F pow(const F& a, const F& e_plain) {
    F n;
    if (one_limb_below(e_plain, 128) && small_pow(plain(a), e_plain, n)) return mont(n);
    return CF::pow_n(a, e_plain);
  }
  Val unary(HostFn h, const Val& a) {
    if constexpr (UNTRACED) return unary_forms(h, a);
    F r;
    uint8_t op;
    switch (h) {
      case H_NEG: r = CF::neg(a.v); op = T_NEG; break;
      case H_INV: r = CF::inv(a.v); op = T_INV; break;
      case H_LNOT: r = CF::lnot(a.v); op = T_LNOT; break;
      case H_BNOT: r = mont(CF::n_bnot(plain(a.v))); op = T_BNOT; break;
      case H_SQUARE: r = CF::mul(a.v, a.v); op = T_MUL; break;
      default: throw Unsupported("internal: unary op");
    }
    if (!a.id) return Val{0, r};
    if (op == T_MUL) return Val{node(T_MUL, a.id, a.id, 0), r};
    return Val{node(op, a.id, 0, 0), r};
  }

  // Work that is not a loop iteration or a call in the wasm (bulk memory, host loops) counts against the step
  // budget as well, so that every recording ends within it.
  void charge(uint64_t steps) {
    steps_ += steps;
    if (steps_ > lim_.max_steps) trap("step budget exhausted (loop iterations and calls)");
  }
  std::string message() {  // circom's message buffer, read through getMessageChar
    if (in_message_) trap("getMessageChar asks for another message");  // else a native recursion without end
    in_message_ = true;
    std::string s;
    try {
      for (int i = 0; i < MAX_MESSAGE; i++) {  // a message that never ends is cut (wasm_runtime.MAX_MESSAGE)
        charge(1);  // each character is a call: a loop of messages is bounded by the step budget too
        uint32_t c = uint32_t(call(uint32_t(f_msg_char_), {}));
        if (!c) break;
        const uint8_t b = uint8_t(c & 0xFF);  // a character per byte, as witness_calculator.js: UTF-8 of U+0000..U+00FF
        if (b < 0x80) s.push_back(char(b));
        else s += {char(0xC0 | (b >> 6)), char(0x80 | (b & 0x3F))};
      }
    } catch (...) {
      in_message_ = false;
      throw;
    }
    in_message_ = false;
    return s;
  }

  // Run a host function; args are on the operand stack. Returns false when it pushed nothing.
  void host_call(HostFn h, uint32_t pc) {
    host_seq_++;
    const Func& fn = m_.funcs[frames_.back().func];
    auto arg = [&](int i, int n) { return uint32_t(stk_[sp_ - n + i]); };
    switch (h) {
      case H_COPY: {
        uint32_t r = arg(0, 2), a = arg(1, 2);
        sp_ -= 2;
        if (a == shared_elem_ && frames_.back().func == uint32_t(f_set_input_)) input_copy_due_ = false;
        write_elem(r, read_elem(a));
        return;
      }
      case H_COPYN: {
        uint32_t r = arg(0, 3), a = arg(1, 3), n = arg(2, 3);
        sp_ -= 3;
        if (uint64_t(n) * ELEM > mem_.size()) trap("out of bounds memory access");
        charge(n >> 10);
        if (r > a && r < a + n * ELEM) {  // overlapping: copy backwards, as memmove
          for (uint32_t k = n; k-- > 0;) write_elem(r + k * ELEM, read_elem(a + k * ELEM));
        } else {
          for (uint32_t k = 0; k < n; k++) write_elem(r + k * ELEM, read_elem(a + k * ELEM));
        }
        return;
      }
      case H_NEG: case H_INV: case H_LNOT: case H_BNOT: case H_SQUARE: {
        uint32_t r = arg(0, 2), a = arg(1, 2);
        sp_ -= 2;
        write_elem(r, unary(h, read_elem(a)));
        return;
      }
      case H_ISTRUE: {
        pending_.valid = false;
        uint32_t a = arg(0, 1);
        sp_ -= 1;
        Val x = read_elem(a);
        bool t = CF::is_true(x.v);
        if (x.id) istrue_traced(x.id, t, pc);
        stk_[sp_++] = t ? 1 : 0;
        return;
      }
      case H_TOINT: {
        uint32_t a = arg(0, 1);
        sp_ -= 1;
        Val x = read_elem(a);
        int32_t v = CF::n_to_int32(plain_of(x));
        // setInputSignal converts the value it stores to decide its representation only
        if (x.id && frames_.back().func != uint32_t(f_set_input_)) guard(T_GUARD_INT, x.id, uint32_t(v));
        stk_[sp_++] = uint32_t(v);
        return;
      }
      case H_EQR: {
        uint32_t a = arg(0, 2), b = arg(1, 2);
        sp_ -= 2;
        Val x = read_elem(a), y = read_elem(b);
        uint32_t r;
        if (frames_.back().func == uint32_t(f_set_input_)) {  // take its general (long) copy of the input:
          r = 0;                                              // whichever form the wasm keeps, the value is one
          input_copy_due_ = true;
        }
        else if (x.id || y.id) throw Unsupported("Fr_eqR on a value computed from the inputs in " + fn.name);
        else r = same_value(x, y);
        stk_[sp_++] = r;
        return;
      }
      case H_TO_REPR: {
        uint32_t a = arg(0, 1);
        sp_ -= 1;
        to_long_normal(a);
        return;
      }
      case H_TO_LONG_NORMAL: {
        uint32_t a = arg(0, 1);
        sp_ -= 1;
        to_long_normal(a);
        long_normal_ = HostEvent{a, host_seq_};
        return;
      }
      case H_INT_COPY: {
        uint32_t src = arg(0, 2), dst = arg(1, 2);
        sp_ -= 2;
        int_copy(src, dst);
        if (dst == shared_) shared_body_ = HostEvent{dst, host_seq_};
        return;
      }
      case H_EXCEPTION: {
        uint32_t code = arg(0, 1);
        sp_ -= 1;
        if (in_arm()) throw detail::ArmAbort{"exception"};
        throw CircuitFailure(int(code), err_text_);
      }
      case H_PRINT_ERROR: {
        if (in_arm()) throw detail::ArmAbort{"error message"};
        std::string s = message() + "\n";
        if (err_text_.size() < lim_.max_error_bytes) err_text_ += s.substr(0, lim_.max_error_bytes - err_text_.size());
        return;
      }
      case H_WRITE_BUFFER: {
        if (in_arm()) throw detail::ArmAbort{"log"};
        std::string s = message();
        log_bytes_ += s.size() + 1;
        if (log_bytes_ > lim_.max_log_bytes)
          throw Unsupported("the circuit logs more than " + std::to_string(lim_.max_log_bytes >> 20) + " MiB");
        trace_.strings.push_back(s);
        node(T_LOG_STR, uint32_t(trace_.strings.size() - 1), 0, 0);
        return;
      }
      case H_SHOW_SHARED: {
        if (in_arm()) throw detail::ArmAbort{"log"};
        Val x = read_shared_value(host_seq_ - 1);  // copyFr2SharedRWMemory's, just before
        node(T_LOG_VAL, UNTRACED ? const_id(mont_of(x)) : id_of(x), 0, 0);
        return;
      }
      default: {  // binary field ops (pR, pA, pB)
        uint32_t r = arg(0, 3), a = arg(1, 3), b = arg(2, 3);
        sp_ -= 3;
        if constexpr (UNTRACED) binary_to(r, h, read_elem(a), read_elem(b));
        else write_elem(r, binary(h, read_elem(a), read_elem(b)));
        return;
      }
    }
  }

  // Fr_isTrue of a traced value: a guard, or (when an `if` consumes it) the if's own decision.
  void istrue_traced(uint32_t id, bool t, uint32_t pc) {
    if constexpr (UNTRACED) return;  // the control-flow run: the `if` goes the way the value says
    const Func& fn = m_.funcs[frames_.back().func];
    const auto& code = fn.code;
    if (pc + 1 < code.size() && code[pc + 1].op == OP_IF) {
      pending_ = Pending{true, frames_.size(), pc + 1, id, false, steps_};
      return;
    }
    if (pc + 2 < code.size() && code[pc + 1].op == 0x45 && code[pc + 2].op == OP_IF) {
      pending_ = Pending{true, frames_.size(), pc + 2, id, true, steps_};
      return;
    }
    guard(t ? T_GUARD_TRUE : T_GUARD_FALSE, id);
  }

  // Does this arm (pcs [from, to)) report an error itself (circom's assert/=== failure path)?
  bool arm_reports_error(const Func& fn, uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to && k < fn.code.size(); k++) {
      const Ins& in = fn.code[k];
      if (in.op != OP_CALL) continue;
      HostFn h = host_[in.a];
      if (h == H_PRINT_ERROR || h == H_EXCEPTION) return true;
    }
    return false;
  }

  // --- calls --------------------------------------------------------------------------------------
  uint64_t call_export(const char* name, std::vector<uint64_t> args) {
    auto e = m_.exports.find(name);
    if (e == m_.exports.end()) throw Unsupported(std::string("no export ") + name);
    const int f = int(e->second);
    return call(uint32_t(f), args);
  }

 public:
  // Call a function from outside (returns its first result, or 0).
  uint64_t call(uint32_t f, const std::vector<uint64_t>& args) { return call(f, args.data(), args.size()); }
  // (the witness is read by one call per value: no vector allocated and freed for its argument)
  uint64_t call(uint32_t f, std::initializer_list<uint64_t> args) { return call(f, args.begin(), args.size()); }
  uint64_t call(uint32_t f, const uint64_t* args, size_t n_args) {
    const FuncType& t = m_.type_of(f);
    if (n_args != t.params.size()) throw Unsupported("internal: argument count");
    if (host_[f] != H_NONE) throw Unsupported("internal: host function called from outside");
    if (!m_.funcs[f].imported && !m_.funcs[f].decoded) throw Unsupported(m_.funcs[f].error);
    size_t depth = frames_.size();
    for (size_t k = 0; k < n_args; k++) stk_[sp_++] = args[k];
    enter(f);
    exec<false>(depth, 0, 0, ~0u);
    uint64_t r = t.results.empty() ? 0 : stk_[sp_ - 1];
    sp_ -= uint32_t(t.results.size());
    return r;
  }

 private:
  void enter(uint32_t f) {
    const Func& fn = m_.funcs[f];
    if (!fn.decoded) throw Unsupported(fn.error);  // the Module decoded every body it could
    const FuncType& t = m_.types[fn.type];
    uint32_t np = uint32_t(t.params.size()), nl = uint32_t(fn.local_types.size());
    if (frames_.size() >= lim_.max_frames) trap("call stack exhausted");
    if (uint64_t(lp_) + np + nl > loc_.size()) {
      if (uint64_t(lp_) + np + nl > lim_.max_stack_words) trap("call stack exhausted (locals)");
      loc_.resize(std::min<uint64_t>(std::max<uint64_t>(2 * loc_.size(), uint64_t(lp_) + np + nl), lim_.max_stack_words));
    }
    if (uint64_t(sp_) + fn.max_height + 16 > stk_.size()) {
      if (uint64_t(sp_) + fn.max_height + 16 > lim_.max_stack_words) trap("call stack exhausted (operands)");
      stk_.resize(std::min<uint64_t>(std::max<uint64_t>(2 * stk_.size(), uint64_t(sp_) + fn.max_height + 16),
                                     lim_.max_stack_words));
    }
    uint32_t lbase = lp_;
    for (uint32_t i = 0; i < np; i++) loc_[lbase + i] = stk_[sp_ - np + i];
    for (uint32_t i = 0; i < nl; i++) loc_[lbase + np + i] = 0;
    sp_ -= np;
    lp_ += np + nl;
    // each field stored in place: a Frame built on the stack and copied in was one 16-byte load of four 4-byte
    // stores (a store-forwarding stall per call)
    Frame& nf = frames_.emplace_back();
    nf.func = f;
    nf.pc = 0;
    nf.locals = lbase;
    nf.base = sp_;
  }

  // Leave the current frame, carrying `nres` results to the caller's stack.
  void leave() {
    const Frame& fr = frames_.back();  // its fields one by one (the interpreter stored fr->pc alone)
    const uint32_t base = fr.base, locals = fr.locals;
    const FuncType& t = m_.type_of(fr.func);
    uint32_t nres = uint32_t(t.results.size());
    for (uint32_t i = 0; i < nres; i++) stk_[base + i] = stk_[sp_ - nres + i];
    sp_ = base + nres;
    lp_ = locals;
    frames_.pop_back();
  }

  // The interpreter. Runs until the frame stack is back to `depth`, or (arm mode) until the frame
  // at `arm_depth` reaches pc `arm_stop`.
  // ARM: running one arm of an if-converted `if` (stops at its end; guards and effects abort).
  // The budgets count loop iterations and calls (every endless run loops), not instructions.
  template <bool ARM>
  void exec(size_t depth, size_t arm_frames, uint32_t arm_start, uint32_t arm_stop);  // interp.hpp
  void branch(const Ins& in);
  static uint64_t pushed(uint16_t op, const Ins& in, const uint64_t* L);


  // --- symbolic `if` (ifconvert.hpp) -------------------------------------------------------------
  struct Snapshot {
    size_t journal, elems, nodes, strings;
    uint32_t sp, lp;
    size_t frames;
    std::vector<uint64_t> locals;
  };
  Snapshot snapshot();
  void rollback(const Snapshot& s, bool drop_nodes);
  void run_arm(uint32_t start, uint32_t stop);
  uint32_t symbolic_if(const Func& fn, const Ins& in, uint32_t pc, bool cond, const Pending& pd);


  F decode(const uint8_t* p, uint32_t a) {  // an element's bytes held elsewhere (if-conversion's other arm)
    uint32_t type;
    std::memcpy(&type, p + 4, 4);
    if (type == 0xC0000000u) {
      F v;
      std::memcpy(v.v, p + 8, sizeof v.v);
      if (!F::lt_mod(v.v)) not_circoms(a);
      return v;
    }
    return decode_other(p, a);
  }
};

}  // namespace snarkd::witness

#include "witness/ifconvert.hpp"
#include "witness/interp.hpp"
#include "witness/plain_forms.hpp"
