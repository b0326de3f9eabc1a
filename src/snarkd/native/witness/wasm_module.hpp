// A WebAssembly module as circom's witness generators use it: the binary parsed (types, imports,
// functions, table, memory, globals, exports, elements, code, data, and the "name" section that
// names circom's field functions), and every function body decoded once into a flat array of
// `Ins` with branch targets and stack heights resolved, for the interpreter in interp.hpp.
//
// Why our own decoder instead of a wasm engine: the native witness engine must see every call to
// a field function (Fr_mul, Fr_isTrue, ...) and every `if` that a field value decides, and run
// both arms of such an `if` (record.hpp); no engine exposes that. The subset is the MVP's integer
// instructions plus bulk memory; a module using anything else (floats, SIMD, threads) is refused
// with its name, and the wasm engine serves that circuit.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace snarkd::witness {

struct WasmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Internal opcodes: the wasm opcode byte where there is one; 0x100+ for the 0xFC-prefixed
// bulk-memory instructions and for our own (the decoded `else` jump, function end). Ours follow the
// bulk-memory ones closely: the interpreter's switch is then one jump table (at 0x200+ they were
// compares after it, and OP_LOCAL_ADDI is the commonest instruction run).
enum Op : uint16_t {
  OP_UNREACHABLE = 0x00, OP_NOP = 0x01, OP_IF = 0x04, OP_BR = 0x0C, OP_BR_IF = 0x0D,
  OP_BR_TABLE = 0x0E, OP_RETURN = 0x0F, OP_CALL = 0x10, OP_CALL_INDIRECT = 0x11, OP_DROP = 0x1A,
  OP_SELECT = 0x1B, OP_LOCAL_GET = 0x20, OP_LOCAL_SET = 0x21, OP_LOCAL_TEE = 0x22,
  OP_GLOBAL_GET = 0x23, OP_GLOBAL_SET = 0x24, OP_MEMORY_SIZE = 0x3F, OP_MEMORY_GROW = 0x40,
  OP_I32_CONST = 0x41, OP_I64_CONST = 0x42,
  OP_MEMORY_COPY = 0x10A, OP_MEMORY_FILL = 0x10B,
  OP_JUMP = 0x10C,  // the `else` of an if: jump over the else arm (a = target pc)
  OP_END = 0x10D,   // the end of the function body: return
  // Fused at decode time (circom's address arithmetic is mostly `const, const, mul, local, add`):
  OP_I32_ADDI = 0x10E,   // top = u32(top + a)
  OP_LOCAL_ADDI = 0x10F, // push u32(local a + b)
  // Superinstructions (fuse_straight_line, after a body is decoded): the head of a short straight-line run is
  // rewritten and the run's other instructions are kept where they were, so the head's handler reads its operands
  // from them and a jump into the run (there is none: runs hold no label) would still run the original code.
  // The head's own wasm op is kept in its `arity` field. circom's calls of its field functions are mostly
  // `local+k, local+k, local+k, call`, its address arithmetic `local+k, const, mul, +k`.
  OP_PUSH2 = 0x110,      // the head and the next instruction, each a push (local+k, const, local.get)
  OP_PUSH3 = 0x111,      // three pushes
  OP_LA_MUL = 0x112,     // push u32((local a + b) * c): head local+k (or local.get), const c, i32.mul
  OP_LA_MUL_ADD = 0x113, // the same and + d (the fourth instruction, an OP_I32_ADDI)
  OP_LA_SET = 0x114,     // local.set x of u32(local a + b)
  OP_EQZ_BR_IF = 0x115,  // i32.eqz, br_if: branch when the top is zero
  // A call's argument pushes and the call: one dispatch for circom's `local+k, [local+k, [local+k,]] call Fr_...`
  // (the RSA verifier's control-flow run: 7.4 M of its 8.6 M calls per signature right after one to three pushes)
  OP_PUSH1_CALL = 0x116,
  OP_PUSH2_CALL = 0x117,
  OP_PUSH3_CALL = 0x118,
  // circom's two-level address: u32(local x + u32(u32(top2 * top + k) * c)) from i32.mul, +k (OP_I32_ADDI),
  // i32.const c, i32.mul, local.get x, i32.add (an index from Fr_toInt, scaled, into an array of elements)
  OP_MUL_ADDI_SCALE_BASE = 0x119,
  OP_PUSH4_CALL = 0x11A,
  // two or three OP_LA_SETs in a row (circom's copy loops step their pointers and count together)
  OP_LA_SET2 = 0x11B,
  OP_LA_SET3 = 0x11C,
  OP_LOCAL_EQZ_BR_IF = 0x11D,  // local.get, i32.eqz, br_if: a loop's exit test
  // OP_PUSH{1,2,3,4}_CALL whose pushes are all local+k (circom's element addresses, frame + offset): no test of
  // each push's kind, whose outcome one handler shared by every call site could not predict
  OP_LA1_CALL = 0x11E,
  OP_LA2_CALL = 0x11F,
  OP_LA3_CALL = 0x120,
  OP_LA4_CALL = 0x121,
  // OP_PUSHn_CALL / OP_LAn_CALL whose callee is one of circom's field functions (fuse_field_calls, the callee's kind
  // in `arity`), each op a block of four: + n - 1 for n pushes. The handler takes the arguments straight into the field
  // function's own code, with no second dispatch on the callee: the last min(n, params) pushes are the arguments
  // (each local+k, local.get or a constant: every one of them u32(local a + b), a constant's local one that is always
  // 0), the rest of the params from the stack, pushes before the arguments pushed (the RSA verifier's control-flow
  // run: most of its 8.6 M calls)
  OP_F_COPY = 0x122,    // Fr_copy(dst, src)
  OP_F_ADDSUB = 0x126,  // Fr_add / Fr_sub(dst, a, b)
  OP_F_BINARY = 0x12A,  // circom's other binary field functions (dst, a, b)
  OP_F_ISTRUE = 0x12E,  // Fr_isTrue(a)
  OP_F_TOINT = 0x132,   // Fr_toInt(a)
  OP_LAST = 0x136,
};

// One decoded instruction (16 bytes).
//   branches (br, br_if, jump): a = target pc, b = stack height to restore (relative to the
//     frame's base), arity = values carried;   if: a = pc of the else arm (or of the end),
//     b = pc just after the whole if (its end);   br_table: a = first entry in Func::table,
//     b = entry count (the last is the default);   call: a = function;   call_indirect: a = type;
//   local/global: a = index;   loads/stores: a = memarg offset;   consts: b = value.
struct Ins {
  uint16_t op;
  uint16_t arity;
  uint32_t a;
  uint64_t b;
};

struct BrTarget {
  uint32_t pc, height, arity;
};

struct FuncType {
  std::vector<uint8_t> params, results;
};

struct Func {
  uint32_t type = 0;
  bool imported = false;
  std::string import_module, name;  // name: from the import or the "name" section
  std::vector<uint8_t> local_types;  // declared locals after the params
  std::vector<Ins> code;
  std::vector<BrTarget> table;  // br_table entries
  uint32_t max_height = 0;      // deepest operand stack the body reaches
  const uint8_t* body = nullptr;
  size_t body_len = 0;
  bool decoded = false;
  std::string error;  // why the body could not be decoded (calling it is then Unsupported)
};

struct DataSegment {
  uint32_t offset;
  const uint8_t* bytes;
  size_t len;
};

struct Global {
  uint8_t type;
  bool mut;
  uint64_t init;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  bool done() const { return p_ >= end_; }
  size_t left() const { return size_t(end_ - p_); }
  const uint8_t* pos() const { return p_; }
  uint8_t byte() {
    if (p_ >= end_) throw WasmError("unexpected end of the module");
    return *p_++;
  }
  const uint8_t* bytes(size_t n) {
    if (left() < n) throw WasmError("unexpected end of the module");
    const uint8_t* r = p_;
    p_ += n;
    return r;
  }
  uint64_t uleb(int bits = 32) {
    uint64_t r = 0;
    int shift = 0;
    for (;;) {
      uint8_t b = byte();
      if (shift >= 64) throw WasmError("LEB128 integer too long");
      r |= uint64_t(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    if (bits < 64 && (r >> bits)) throw WasmError("LEB128 integer out of range");
    return r;
  }
  int64_t sleb(int bits) {
    int64_t r = 0;
    int shift = 0;
    uint8_t b;
    do {
      b = byte();
      if (shift >= 70) throw WasmError("LEB128 integer too long");
      if (shift < 64) r |= int64_t(uint64_t(b & 0x7f) << shift);
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) r |= -(int64_t(1) << shift);
    if (bits == 32) r = int64_t(int32_t(r));
    return r;
  }
  // Names in messages and lookups: circom's are ASCII; anything else (not text, a control character) becomes
  // '?', so no message built from a name is invalid UTF-8.
  std::string name() {
    size_t n = uleb();
    const uint8_t* s = bytes(n);
    std::string out((const char*)s, n);
    for (char& c : out)
      if (uint8_t(c) < 0x20 || uint8_t(c) > 0x7E) c = '?';
    return out;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

class Module {
 public:
  static constexpr uint32_t MAX_TABLE = 1u << 20;  // circom's tables are empty or small
  static constexpr uint64_t MAX_LOCALS = 1u << 24;  // declared locals, all functions together
  std::vector<FuncType> types;
  std::vector<Func> funcs;  // imports first, as wasm numbers them
  uint32_t n_imported = 0;
  std::vector<uint32_t> table;  // function indices (the one funcref table); ~0u = empty
  uint32_t mem_initial = 0, mem_max = 0;
  bool mem_has_max = false;
  std::vector<Global> globals;
  std::unordered_map<std::string, uint32_t> exports;  // functions only
  bool memory_exported = false;                       // as "memory"
  std::vector<DataSegment> data;

  // The module's bytes must outlive it (bodies and data point into them). Every body is decoded
  // here, so a Module is read-only afterwards and recordings may share it across threads; a body
  // with an instruction we do not run keeps its error, for the call that would need it.
  Module(const uint8_t* wasm, size_t len) {
    parse(wasm, len);
    apply_names();
    for (uint32_t f = 0; f < funcs.size(); f++) {
      try {
        decode(f);
      } catch (const WasmError& e) {
        funcs[f].error = e.what();
      }
    }
  }

  int find_func(const std::string& name) const {
    auto e = exports.find(name);
    if (e != exports.end()) return int(e->second);
    auto n = by_name_.find(name);
    return n == by_name_.end() ? -1 : int(n->second);
  }
  const FuncType& type_of(uint32_t f) const { return types[funcs[f].type]; }

  // Decode a body (once). Throws WasmError naming the function on anything unsupported.
  void decode(uint32_t f);
  // Superinstructions over a decoded body (see OP_PUSH2): runs that hold none of `labels` (the pcs where a
  // block, loop, if arm or end begins: every branch target, every arm's start and end) inside them.
  static void fuse_straight_line(Func& f, const std::vector<uint32_t>& labels);
  // The fused calls (OP_PUSHn_CALL, OP_LAn_CALL) of function f where fused_op[f] is set (1 to 3 params): the head
  // becomes fused_op[f] + n - 1 with tag[f] in `arity`, each constant push local+k of a local added to the caller
  // (no instruction names it: always 0). Before the module is shared (it is const to its users).
  void fuse_field_calls(const std::vector<uint16_t>& fused_op, const std::vector<uint16_t>& tag);

 private:
  std::unordered_map<std::string, uint32_t> by_name_;
  uint64_t total_locals_ = 0;

  static void check_valtype(uint8_t t) {
    if (t != 0x7F && t != 0x7E) throw WasmError("value type 0x" + hex(t) + " (only i32/i64 are supported)");
  }
  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    std::string s;
    do { s.insert(s.begin(), d[v & 15]); v >>= 4; } while (v);
    return s;
  }
  static uint64_t const_expr(Reader& r) {
    uint8_t op = r.byte();
    uint64_t v;
    if (op == 0x41) v = uint64_t(uint32_t(int32_t(r.sleb(32))));
    else if (op == 0x42) v = uint64_t(r.sleb(64));
    else throw WasmError("unsupported constant expression (opcode 0x" + hex(op) + ")");
    if (r.byte() != 0x0B) throw WasmError("constant expression not terminated");
    return v;
  }

  void parse(const uint8_t* wasm, size_t len) {
    Reader r(wasm, len);
    static const uint8_t magic[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    if (len < 8 || std::memcmp(r.bytes(8), magic, 8) != 0) throw WasmError("not a WebAssembly 1.0 module");
    std::vector<uint32_t> func_types;
    while (!r.done()) {
      uint8_t id = r.byte();
      size_t size = r.uleb();
      Reader s(r.bytes(size), size);
      switch (id) {
        case 0: custom(s); break;
        case 1: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            if (s.byte() != 0x60) throw WasmError("malformed function type");
            FuncType t;
            size_t np = s.uleb();
            for (size_t j = 0; j < np; j++) { t.params.push_back(s.byte()); check_valtype(t.params.back()); }
            size_t nr = s.uleb();
            for (size_t j = 0; j < nr; j++) { t.results.push_back(s.byte()); check_valtype(t.results.back()); }
            types.push_back(std::move(t));
          }
          break;
        }
        case 2: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            std::string mod = s.name(), nm = s.name();
            uint8_t kind = s.byte();
            if (kind != 0) throw WasmError("imports other than functions are not supported (" + mod + "." + nm + ")");
            Func f;
            f.type = uint32_t(s.uleb());
            if (f.type >= types.size()) throw WasmError("import type out of range");
            f.imported = true;
            f.import_module = mod;
            f.name = nm;
            funcs.push_back(std::move(f));
          }
          n_imported = uint32_t(funcs.size());
          break;
        }
        case 3: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            uint32_t t = uint32_t(s.uleb());
            if (t >= types.size()) throw WasmError("function type out of range");
            func_types.push_back(t);
          }
          break;
        }
        case 4: {
          size_t n = s.uleb();
          if (n > 1) throw WasmError("more than one table");
          if (n == 1) {
            if (s.byte() != 0x70) throw WasmError("table of other than funcref");
            uint8_t flags = s.byte();
            uint32_t initial = uint32_t(s.uleb());
            if (flags & 1) s.uleb();
            if (initial > MAX_TABLE) throw WasmError("a table of " + std::to_string(initial) + " entries");
            table.assign(initial, ~0u);
          }
          break;
        }
        case 5: {
          size_t n = s.uleb();
          if (n != 1) throw WasmError("expected exactly one memory");
          uint8_t flags = s.byte();
          if (flags & ~1u) throw WasmError("shared or 64-bit memories are not supported");
          mem_initial = uint32_t(s.uleb());
          if (flags & 1) { mem_max = uint32_t(s.uleb()); mem_has_max = true; }
          break;
        }
        case 6: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            Global g;
            g.type = s.byte();
            check_valtype(g.type);
            g.mut = s.byte() != 0;
            g.init = const_expr(s);
            globals.push_back(g);
          }
          break;
        }
        case 7: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            std::string nm = s.name();
            uint8_t kind = s.byte();
            uint32_t idx = uint32_t(s.uleb());
            if (kind == 0) exports[nm] = idx;
            else if (kind == 2 && nm == "memory") memory_exported = true;
          }
          break;
        }
        case 8: throw WasmError("a start function is not supported");
        case 9: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            uint32_t flags = uint32_t(s.uleb());
            if (flags != 0) throw WasmError("element segment kind " + std::to_string(flags) + " is not supported");
            uint64_t off = const_expr(s);
            size_t k = s.uleb();
            for (size_t j = 0; j < k; j++) {
              uint32_t fi = uint32_t(s.uleb());
              if (off + j >= table.size()) throw WasmError("element segment outside the table");
              table[off + j] = fi;
            }
          }
          break;
        }
        case 10: {
          size_t n = s.uleb();
          if (n != func_types.size()) throw WasmError("code and function sections disagree");
          for (size_t i = 0; i < n; i++) {
            size_t sz = s.uleb();
            Func f;
            f.type = func_types[i];
            f.body = s.bytes(sz);
            f.body_len = sz;
            funcs.push_back(std::move(f));
          }
          break;
        }
        case 11: {
          size_t n = s.uleb();
          for (size_t i = 0; i < n; i++) {
            uint32_t flags = uint32_t(s.uleb());
            if (flags == 2) { if (s.uleb() != 0) throw WasmError("data for a second memory"); }
            else if (flags != 0) throw WasmError("passive data segments are not supported");
            uint64_t off = const_expr(s);
            size_t k = s.uleb();
            data.push_back({uint32_t(off), s.bytes(k), k});
          }
          break;
        }
        case 12: s.uleb(); break;  // data count
        default: throw WasmError("unknown section " + std::to_string(id));
      }
    }
    for (auto& f : funcs)
      if (!f.imported && !f.body) throw WasmError("function without a body");
    for (uint32_t fi : table)
      if (fi != ~0u && fi >= funcs.size()) throw WasmError("table entry out of range");
    for (auto& [nm, fi] : exports)
      if (fi >= funcs.size()) throw WasmError("export " + nm + " out of range");
  }

  void custom(Reader& s) {
    std::string nm = s.name();
    if (nm != "name") return;
    while (!s.done()) {
      uint8_t sub = s.byte();
      size_t size = s.uleb();
      Reader b(s.bytes(size), size);
      if (sub != 1) continue;  // function names only
      size_t n = b.uleb();
      for (size_t i = 0; i < n; i++) {
        uint32_t idx = uint32_t(b.uleb());
        std::string fn = b.name();
        pending_names_.emplace_back(idx, fn);
      }
    }
  }
  std::vector<std::pair<uint32_t, std::string>> pending_names_;

 public:
  // Apply the name section (called once after parsing: code comes after the custom section's
  // position is irrelevant, names may precede functions in odd producers).
  void apply_names() {
    for (auto& [idx, fn] : pending_names_) {
      if (idx < funcs.size() && !funcs[idx].imported) funcs[idx].name = fn;
      by_name_.emplace(fn, idx);
    }
    pending_names_.clear();
    for (auto& [nm, fi] : exports)
      if (funcs[fi].name.empty()) funcs[fi].name = nm;
  }
};

// -- decoding -------------------------------------------------------------------------------------

namespace detail {
struct Ctl {
  uint8_t kind;  // 0 block, 1 loop, 2 if, 3 function
  uint32_t height;  // operand stack height at entry
  uint32_t arity;   // results
  uint32_t start_pc;
  uint32_t if_pc;   // the OP_IF (kind 2)
  uint32_t else_pc; // the OP_JUMP of `else`, ~0u when none
  bool unreachable;
  std::vector<uint32_t> fixups;        // Ins whose `a` is this label's target (forward)
  std::vector<uint32_t> table_fixups;  // br_table entries likewise
};
}  // namespace detail

inline void Module::decode(uint32_t fi) {
  Func& f = funcs[fi];
  if (f.decoded || f.imported) return;
  const std::string who = "function " + (f.name.empty() ? "#" + std::to_string(fi) : f.name);
  try {
    Reader r(f.body, f.body_len);
    size_t ngroups = r.uleb();
    for (size_t g = 0; g < ngroups; g++) {
      uint32_t cnt = uint32_t(r.uleb());
      uint8_t t = r.byte();
      check_valtype(t);
      if (f.local_types.size() + cnt > 100000) throw WasmError("too many locals");
      if (total_locals_ + cnt > MAX_LOCALS) throw WasmError("too many locals in the module");
      total_locals_ += cnt;
      f.local_types.insert(f.local_types.end(), cnt, t);
    }
    const FuncType& ft = types[f.type];
    const uint32_t nlocals = uint32_t(ft.params.size() + f.local_types.size());
    std::vector<detail::Ctl> ctl;
    ctl.push_back({3, 0, uint32_t(ft.results.size()), 0, 0, ~0u, false, {}, {}});
    uint32_t h = 0;  // current operand stack height
    auto& code = f.code;
    // Instructions before `barrier` may be branch targets or follow one: never folded into.
    size_t barrier = 0;
    std::vector<uint32_t> labels;  // every value `barrier` took: where straight-line runs begin
    auto last_is = [&](size_t back, uint16_t op) {
      return code.size() >= barrier + back && code[code.size() - back].op == op;
    };
    // i32 add/sub/mul of the two values on top: fold constants and address increments
    auto fold_i32 = [&](uint8_t op) -> bool {
      if (last_is(1, OP_I32_CONST) && last_is(2, OP_I32_CONST)) {
        uint32_t b = uint32_t(code.back().b), a = uint32_t(code[code.size() - 2].b);
        uint32_t v = op == 0x6A ? a + b : op == 0x6B ? a - b : a * b;
        code.pop_back();
        code.back().b = v;
        return true;
      }
      if (op == 0x6C) return false;
      if (last_is(1, OP_I32_CONST)) {
        uint32_t c = uint32_t(code.back().b);
        if (op == 0x6B) c = 0u - c;
        code.pop_back();
        if (last_is(1, OP_LOCAL_GET)) { code.back().op = OP_LOCAL_ADDI; code.back().b = c; }
        else if (last_is(1, OP_LOCAL_ADDI)) code.back().b = uint32_t(code.back().b) + c;
        else if (last_is(1, OP_I32_ADDI)) code.back().a += c;
        else code.push_back({OP_I32_ADDI, 0, c, 0});
        return true;
      }
      if (op == 0x6A && last_is(1, OP_LOCAL_GET) && last_is(2, OP_I32_CONST)) {
        uint32_t l = code.back().a, c = uint32_t(code[code.size() - 2].b);
        code.pop_back();
        code.back() = {OP_LOCAL_ADDI, 0, l, c};
        return true;
      }
      return false;
    };
    auto need = [&](uint32_t n) {
      if (!ctl.back().unreachable && h < n + ctl.back().height) throw WasmError("operand stack underflow");
    };
    auto pop = [&](uint32_t n) { need(n); h = (h >= n) ? h - n : 0; if (h < ctl.back().height) h = ctl.back().height; };
    auto push = [&](uint32_t n) { h += n; if (h > f.max_height) f.max_height = h; };
    auto blocktype = [&](uint32_t& arity) {
      int64_t bt = r.sleb(33);
      if (bt == -64) arity = 0;            // 0x40: empty
      else if (bt == -1 || bt == -2) arity = 1;  // i32 / i64
      else if (bt < 0) throw WasmError("unsupported block type");
      else {
        if (size_t(bt) >= types.size() || !types[bt].params.empty()) throw WasmError("block with parameters");
        arity = uint32_t(types[bt].results.size());
      }
    };
    auto label = [&](uint32_t depth) -> detail::Ctl& {
      if (depth >= ctl.size()) throw WasmError("branch depth out of range");
      return ctl[ctl.size() - 1 - depth];
    };
    auto br_arity = [](const detail::Ctl& c) { return c.kind == 1 ? 0u : c.arity; };
    // a branch carries its label's results: they must be on the stack (the interpreter copies them)
    auto emit_branch = [&](uint16_t op, uint32_t depth) {
      detail::Ctl& c = label(depth);
      need(br_arity(c));
      Ins in{op, uint16_t(br_arity(c)), 0, c.height};
      if (c.kind == 1) in.a = c.start_pc;
      else c.fixups.push_back(uint32_t(code.size()));
      code.push_back(in);
    };
    for (;;) {
      uint8_t op = r.byte();
      const uint32_t pc = uint32_t(code.size());
      if (op == 0x02 || op == 0x03 || op == 0x04 || op == 0x05 || op == 0x0B) labels.push_back(uint32_t(barrier = code.size()));
      if ((op == 0x6A || op == 0x6B || op == 0x6C) && (pop(2), push(1), fold_i32(op))) continue;
      if (op == 0x6A || op == 0x6B || op == 0x6C) { code.push_back({op, 0, 0, 0}); continue; }
      switch (op) {
        case 0x00: code.push_back({OP_UNREACHABLE, 0, 0, 0}); ctl.back().unreachable = true; h = ctl.back().height; break;
        case 0x01: break;
        case 0x02: case 0x03: {
          uint32_t ar;
          blocktype(ar);
          ctl.push_back({uint8_t(op == 0x02 ? 0 : 1), h, ar, pc, 0, ~0u, false, {}, {}});
          break;
        }
        case 0x04: {
          uint32_t ar;
          blocktype(ar);
          pop(1);
          code.push_back({OP_IF, 0, 0, 0});
          ctl.push_back({2, h, ar, pc + 1, pc, ~0u, false, {}, {}});
          labels.push_back(uint32_t(barrier = code.size()));
          break;
        }
        case 0x05: {
          detail::Ctl& c = ctl.back();
          if (c.kind != 2 || c.else_pc != ~0u) throw WasmError("else without if");
          if (!c.unreachable && h != c.height + c.arity) throw WasmError("if arm leaves the stack unbalanced");
          c.else_pc = pc;
          c.fixups.push_back(pc);  // the jump to the end
          code.push_back({OP_JUMP, uint16_t(c.arity), 0, c.height});
          labels.push_back(uint32_t(barrier = code.size()));
          code[c.if_pc].a = pc + 1;
          c.unreachable = false;
          h = c.height;
          break;
        }
        case 0x0B: {
          detail::Ctl c = std::move(ctl.back());
          ctl.pop_back();
          if (!c.unreachable && h != c.height + c.arity) throw WasmError("block leaves the stack unbalanced");
          h = c.height + c.arity;
          if (h > f.max_height) f.max_height = h;
          if (c.kind == 3) {
            code.push_back({OP_END, 0, 0, 0});
            for (uint32_t i : c.fixups) code[i].a = pc;  // `br 0` at function level = return
            if (!r.done()) throw WasmError("code after the function's end");
            goto finished;
          }
          const uint32_t end_pc = uint32_t(code.size());
          for (uint32_t i : c.fixups) code[i].a = end_pc;
          for (uint32_t i : c.table_fixups) f.table[i].pc = end_pc;
          if (c.kind == 2) {
            if (c.else_pc == ~0u) {
              if (c.arity) throw WasmError("if with a result and no else");
              code[c.if_pc].a = end_pc;
            }
            code[c.if_pc].b = end_pc;
          }
          break;
        }
        case 0x0C: emit_branch(OP_BR, uint32_t(r.uleb())); ctl.back().unreachable = true; h = ctl.back().height; break;
        case 0x0D: pop(1); emit_branch(OP_BR_IF, uint32_t(r.uleb())); break;
        case 0x0E: {
          pop(1);
          size_t n = r.uleb();
          if (n > 1000000) throw WasmError("br_table too large");
          Ins in{OP_BR_TABLE, 0, uint32_t(f.table.size()), n + 1};
          for (size_t i = 0; i <= n; i++) {
            detail::Ctl& c = label(uint32_t(r.uleb()));
            need(br_arity(c));
            BrTarget t{c.kind == 1 ? c.start_pc : 0, c.height, br_arity(c)};
            if (c.kind != 1) c.table_fixups.push_back(uint32_t(f.table.size()));
            f.table.push_back(t);
          }
          code.push_back(in);
          ctl.back().unreachable = true;
          h = ctl.back().height;
          break;
        }
        case 0x0F: need(uint32_t(ft.results.size())); code.push_back({OP_RETURN, 0, 0, 0}); ctl.back().unreachable = true; h = ctl.back().height; break;
        case 0x10: {
          uint32_t callee = uint32_t(r.uleb());
          if (callee >= funcs.size()) throw WasmError("call target out of range");
          const FuncType& t = types[funcs[callee].type];
          pop(uint32_t(t.params.size()));
          push(uint32_t(t.results.size()));
          code.push_back({OP_CALL, 0, callee, 0});
          break;
        }
        case 0x11: {
          uint32_t ti = uint32_t(r.uleb());
          if (r.uleb() != 0) throw WasmError("call_indirect on a second table");
          if (ti >= types.size()) throw WasmError("call_indirect type out of range");
          pop(1);
          pop(uint32_t(types[ti].params.size()));
          push(uint32_t(types[ti].results.size()));
          code.push_back({OP_CALL_INDIRECT, 0, ti, 0});
          break;
        }
        case 0x1A: pop(1); code.push_back({OP_DROP, 0, 0, 0}); break;
        case 0x1B: pop(3); push(1); code.push_back({OP_SELECT, 0, 0, 0}); break;
        case 0x20: case 0x21: case 0x22: {
          uint32_t idx = uint32_t(r.uleb());
          if (idx >= nlocals) throw WasmError("local index out of range");
          if (op == 0x20) push(1);
          else if (op == 0x21) pop(1);
          else { pop(1); push(1); }
          code.push_back({op, 0, idx, 0});
          break;
        }
        case 0x23: case 0x24: {
          uint32_t idx = uint32_t(r.uleb());
          if (idx >= globals.size()) throw WasmError("global index out of range");
          if (op == 0x23) push(1); else pop(1);
          code.push_back({op, 0, idx, 0});
          break;
        }
        case 0x28: case 0x29: case 0x2C: case 0x2D: case 0x2E: case 0x2F:
        case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: {  // loads
          r.uleb();
          uint32_t off = uint32_t(r.uleb());
          pop(1); push(1);
          code.push_back({op, 0, off, 0});
          break;
        }
        case 0x36: case 0x37: case 0x3A: case 0x3B: case 0x3C: case 0x3D: case 0x3E: {  // stores
          r.uleb();
          uint32_t off = uint32_t(r.uleb());
          pop(2);
          code.push_back({op, 0, off, 0});
          break;
        }
        case 0x3F: if (r.byte() != 0) throw WasmError("memory index"); push(1); code.push_back({op, 0, 0, 0}); break;
        case 0x40: if (r.byte() != 0) throw WasmError("memory index"); pop(1); push(1); code.push_back({op, 0, 0, 0}); break;
        case 0x41: push(1); code.push_back({op, 0, 0, uint64_t(uint32_t(int32_t(r.sleb(32))))}); break;
        case 0x42: push(1); code.push_back({op, 0, 0, uint64_t(r.sleb(64))}); break;
        // i32/i64 tests and comparisons
        case 0x45: case 0x50: pop(1); push(1); code.push_back({op, 0, 0, 0}); break;
        case 0x46: case 0x47: case 0x48: case 0x49: case 0x4A: case 0x4B: case 0x4C: case 0x4D: case 0x4E: case 0x4F:
        case 0x51: case 0x52: case 0x53: case 0x54: case 0x55: case 0x56: case 0x57: case 0x58: case 0x59: case 0x5A:
          pop(2); push(1); code.push_back({op, 0, 0, 0}); break;
        // unary: clz ctz popcnt, wrap/extend
        case 0x67: case 0x68: case 0x69: case 0x79: case 0x7A: case 0x7B:
        case 0xA7: case 0xAC: case 0xAD: case 0xC0: case 0xC1: case 0xC2: case 0xC3: case 0xC4:
          pop(1); push(1); code.push_back({op, 0, 0, 0}); break;
        // binary arithmetic
        case 0x6A: case 0x6B: case 0x6C: case 0x6D: case 0x6E: case 0x6F: case 0x70: case 0x71: case 0x72: case 0x73:
        case 0x74: case 0x75: case 0x76: case 0x77: case 0x78:
        case 0x7C: case 0x7D: case 0x7E: case 0x7F: case 0x80: case 0x81: case 0x82: case 0x83: case 0x84: case 0x85:
        case 0x86: case 0x87: case 0x88: case 0x89: case 0x8A:
          pop(2); push(1); code.push_back({op, 0, 0, 0}); break;
        case 0xFC: {
          uint32_t sub = uint32_t(r.uleb());
          if (sub == 10) {
            if (r.byte() != 0 || r.byte() != 0) throw WasmError("memory index");
            pop(3);
            code.push_back({OP_MEMORY_COPY, 0, 0, 0});
          } else if (sub == 11) {
            if (r.byte() != 0) throw WasmError("memory index");
            pop(3);
            code.push_back({OP_MEMORY_FILL, 0, 0, 0});
          } else {
            throw WasmError("instruction 0xfc " + std::to_string(sub) + " is not supported");
          }
          break;
        }
        default: throw WasmError("instruction 0x" + hex(op) + " is not supported (floats, SIMD and threads are not)");
      }
    }
  finished:
    fuse_straight_line(f, labels);
    f.decoded = true;
  } catch (const WasmError& e) {
    f.code.clear();
    throw WasmError(who + ": " + e.what());
  }
}

inline void Module::fuse_straight_line(Func& f, const std::vector<uint32_t>& labels) {
  auto& code = f.code;
  const size_t n = code.size();
  std::vector<uint8_t> label(n + 1, 0);
  for (uint32_t l : labels)
    if (l <= n) label[l] = 1;
  auto is_push = [&](size_t k) {
    const uint16_t op = code[k].op;
    return op == OP_LOCAL_ADDI || op == OP_I32_CONST || op == OP_LOCAL_GET;
  };
  // pcs head+1 .. head+len-1 exist and begin no run (the head itself may: a branch to it runs the whole run)
  auto inside = [&](size_t head, size_t len) {
    if (head + len > n) return false;
    for (size_t k = head + 1; k < head + len; k++)
      if (label[k]) return false;
    return true;
  };
  for (size_t pc = 0; pc < n;) {
    Ins& in = code[pc];
    const uint16_t op = in.op;
    uint16_t fused = 0;
    size_t len = 1;
    if ((op == OP_LOCAL_ADDI || op == OP_LOCAL_GET) && inside(pc, 3) && code[pc + 1].op == OP_I32_CONST &&
        code[pc + 2].op == 0x6C) {
      if (inside(pc, 4) && code[pc + 3].op == OP_I32_ADDI) fused = OP_LA_MUL_ADD, len = 4;
      else fused = OP_LA_MUL, len = 3;
    } else if (op == OP_LOCAL_ADDI && inside(pc, 2) && code[pc + 1].op == OP_LOCAL_SET) {
      auto la_set = [&](size_t k) {
        return inside(pc, k + 2) && code[pc + k].op == OP_LOCAL_ADDI && code[pc + k + 1].op == OP_LOCAL_SET;
      };
      if (la_set(2) && la_set(4)) fused = OP_LA_SET3, len = 6;
      else if (la_set(2)) fused = OP_LA_SET2, len = 4;
      else fused = OP_LA_SET, len = 2;
    } else if (op == OP_LOCAL_GET && inside(pc, 3) && code[pc + 1].op == 0x45 && code[pc + 2].op == OP_BR_IF) {
      fused = OP_LOCAL_EQZ_BR_IF, len = 3;
    } else if (op == 0x45 && inside(pc, 2) && code[pc + 1].op == OP_BR_IF) {
      fused = OP_EQZ_BR_IF, len = 2;
    } else if (op == 0x6C && inside(pc, 6) && code[pc + 1].op == OP_I32_ADDI && code[pc + 2].op == OP_I32_CONST &&
               code[pc + 3].op == 0x6C && code[pc + 4].op == OP_LOCAL_GET && code[pc + 5].op == 0x6A) {
      fused = OP_MUL_ADDI_SCALE_BASE, len = 6;
    } else if (is_push(pc)) {
      size_t pushes = 1;  // a run of up to four pushes and the call after it, or else of up to three pushes
      while (pushes < 4 && inside(pc, pushes + 1) && is_push(pc + pushes)) pushes++;
      const bool call = inside(pc, pushes + 1) && code[pc + pushes].op == OP_CALL;
      static constexpr uint16_t with_call[] = {0, OP_PUSH1_CALL, OP_PUSH2_CALL, OP_PUSH3_CALL, OP_PUSH4_CALL};
      static constexpr uint16_t la_call[] = {0, OP_LA1_CALL, OP_LA2_CALL, OP_LA3_CALL, OP_LA4_CALL};
      bool all_la = true;
      for (size_t k = 0; k < pushes; k++) all_la = all_la && code[pc + k].op == OP_LOCAL_ADDI;
      if (call) fused = all_la ? la_call[pushes] : with_call[pushes], len = pushes + 1;
      else if (pushes > 1) fused = pushes == 2 ? OP_PUSH2 : OP_PUSH3, len = pushes == 2 ? 2 : 3;
    }
    if (fused) {
      in.arity = op;  // (no branch among the heads: arity is free)
      in.op = fused;
    }
    pc += len;
  }
}

inline void Module::fuse_field_calls(const std::vector<uint16_t>& fused_op, const std::vector<uint16_t>& tag) {
  for (Func& f : funcs) {
    if (!f.decoded) continue;
    const FuncType& ft = types[f.type];
    auto is_i32 = [&](uint32_t l) {
      return (l < ft.params.size() ? ft.params[l] : f.local_types[l - ft.params.size()]) == 0x7F;
    };
    uint32_t zero = ~0u;  // the caller's always-0 local, once a constant needs it
    auto& code = f.code;
    for (size_t pc = 0; pc < code.size(); pc++) {
      Ins& in = code[pc];
      size_t n = 0;
      if (in.op >= OP_LA1_CALL && in.op <= OP_LA4_CALL) n = in.op - OP_LA1_CALL + 1u;
      else if (in.op >= OP_PUSH1_CALL && in.op <= OP_PUSH3_CALL) n = in.op - OP_PUSH1_CALL + 1u;
      else if (in.op == OP_PUSH4_CALL) n = 4;
      if (!n) continue;
      const uint32_t callee = code[pc + n].a;  // (fuse_straight_line: the run ends in its OP_CALL)
      if (callee >= fused_op.size() || !fused_op[callee]) continue;
      const size_t params = type_of(callee).params.size(), extra = n > params ? n - params : 0;
      uint16_t ops[4];
      bool fits = params >= 1 && params <= 3;
      for (size_t k = 0; k < n; k++) {
        const Ins& p = code[pc + k];  // the head's own op is in arity (OP_PUSHn_CALL) or local+k (OP_LAn_CALL)
        ops[k] = k ? p.op : in.op >= OP_LA1_CALL ? uint16_t(OP_LOCAL_ADDI) : in.arity;
        // an argument is taken as u32 (the field functions' addresses); a push before them keeps its 64 bits
        fits = fits && (ops[k] == OP_LOCAL_ADDI || ops[k] == OP_I32_CONST ||
                        (ops[k] == OP_LOCAL_GET && (k >= extra || is_i32(p.a))));
      }
      if (!fits) continue;
      for (size_t k = 0; k < n; k++) {
        if (ops[k] != OP_I32_CONST) continue;
        if (zero == ~0u) {
          zero = uint32_t(ft.params.size() + f.local_types.size());
          f.local_types.push_back(0x7F);
        }
        Ins& p = code[pc + k];  // u32(0 + b): the constant (zero-extended), and the same instruction if run alone
        if (k) p.op = OP_LOCAL_ADDI;
        p.a = zero;
      }
      in.op = uint16_t(fused_op[callee] + n - 1);
      in.arity = tag[callee];
      pc += n;
    }
  }
}

}  // namespace snarkd::witness
