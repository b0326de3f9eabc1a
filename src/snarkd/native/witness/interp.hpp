// The recorder's wasm interpreter (record.hpp declares it): the decoded instructions of
// wasm_module.hpp run on an operand stack, a locals stack and call frames, with every load and
// store through the recorder's shadow checks, calls to circom's field functions handed to
// host_call, and an `if` on a traced condition handed to symbolic_if (ifconvert.hpp).
#pragma once
#include <atomic>
#include <mutex>

namespace snarkd::witness {

// ARM: running one arm of an if-converted `if` (stops at its end; guards and effects abort).
// The budgets count loop iterations and calls (every endless run loops), not instructions.
template <class P, bool UNTRACED>
template <bool ARM>
// no cross-jumping: it would merge the handlers' dispatch jumps back into one (a switch again)
__attribute__((optimize("no-crossjumping", "no-gcse")))
void Recorder<P, UNTRACED>::exec(size_t depth, size_t arm_frames, uint32_t arm_start, uint32_t arm_stop) {
  // Direct threaded dispatch: each handler ends with its own indirect jump through the table (one jump site per
  // handler predicts the next instruction from this one; a switch's single jump site mispredicted most of its
  // dispatches: a quarter of the interpreter's samples in the RSA verifier's control-flow run sat on it). The
  // operand stack pointer lives in a register (`sp`), stored back to sp_ before anything else reads it (enter,
  // leave, host_call, symbolic_if) and read again after: as a member every store through the stack (the build
  // does not assume strict aliasing) made the compiler load it again.
  static const void* table[OP_LAST];
  static const void* field_table[H_EXCEPTION];  // circom's field functions by HostFn (below H_EXCEPTION)
  static std::atomic<bool> table_ready{false};
  if (!table_ready.load(std::memory_order_acquire)) {
    static std::mutex table_mutex;
    std::lock_guard<std::mutex> lock(table_mutex);
    if (!table_ready.load(std::memory_order_relaxed)) {
      for (auto& t : table) t = &&L_DEFAULT;
      table[OP_UNREACHABLE] = &&L_UNREACHABLE;
      table[OP_IF] = &&L_IF;
      table[OP_JUMP] = &&L_BR;
      table[OP_BR] = &&L_BR;
      table[OP_BR_IF] = &&L_BR_IF;
      table[OP_EQZ_BR_IF] = &&L_EQZ_BR_IF;
      table[OP_PUSH3] = &&L_PUSH3;
      table[OP_PUSH2] = &&L_PUSH2;
      table[OP_PUSH1_CALL] = &&L_PUSH1_CALL;
      table[OP_PUSH2_CALL] = &&L_PUSH2_CALL;
      table[OP_PUSH3_CALL] = &&L_PUSH3_CALL;
      table[OP_PUSH4_CALL] = &&L_PUSH4_CALL;
      table[OP_LA1_CALL] = &&L_LA1_CALL;
      table[OP_LA2_CALL] = &&L_LA2_CALL;
      table[OP_LA3_CALL] = &&L_LA3_CALL;
      table[OP_LA4_CALL] = &&L_LA4_CALL;
      table[OP_LA_SET2] = &&L_LA_SET2;
      table[OP_LA_SET3] = &&L_LA_SET3;
      table[OP_LOCAL_EQZ_BR_IF] = &&L_LOCAL_EQZ_BR_IF;
      table[OP_MUL_ADDI_SCALE_BASE] = &&L_MUL_ADDI_SCALE_BASE;
      table[OP_LA_MUL] = &&L_LA_MUL;
      table[OP_LA_MUL_ADD] = &&L_LA_MUL_ADD;
      table[OP_LA_SET] = &&L_LA_SET;
#define F_OPS(OP, LBL)        \
  table[OP] = &&LBL##1;       \
  table[OP + 1] = &&LBL##2;   \
  table[OP + 2] = &&LBL##3;   \
  table[OP + 3] = &&LBL##4;
      F_OPS(OP_F_COPY, L_F_COPY)
      F_OPS(OP_F_ADDSUB, L_F_ADDSUB)
      F_OPS(OP_F_BINARY, L_F_BINARY)
      F_OPS(OP_F_ISTRUE, L_F_ISTRUE)
      F_OPS(OP_F_TOINT, L_F_TOINT)
#undef F_OPS
      table[0x45] = &&L_I32_EQZ;
      table[0x46] = &&L_I32_EQ;
      table[0x47] = &&L_I32_NE;
      table[0x49] = &&L_I32_LT_U;
      table[0x4B] = &&L_I32_GT_U;
      table[0x4D] = &&L_I32_LE_U;
      table[0x4F] = &&L_I32_GE_U;
      table[0x6A] = &&L_I32_ADD;
      table[0x6B] = &&L_I32_SUB;
      table[0x6C] = &&L_I32_MUL;
      table[0x71] = &&L_I32_AND;
      table[0x74] = &&L_I32_SHL;
      table[0x76] = &&L_I32_SHR_U;
      table[OP_I32_ADDI] = &&L_I32_ADDI;
      table[OP_LOCAL_ADDI] = &&L_LOCAL_ADDI;
      table[OP_BR_TABLE] = &&L_BR_TABLE;
      table[OP_RETURN] = &&L_RETURN;
      table[OP_END] = &&L_RETURN;
      table[OP_CALL] = &&L_CALL;
      table[OP_CALL_INDIRECT] = &&L_CALL_INDIRECT;
      table[OP_DROP] = &&L_DROP;
      table[OP_SELECT] = &&L_SELECT;
      table[OP_LOCAL_GET] = &&L_LOCAL_GET;
      table[OP_LOCAL_SET] = &&L_LOCAL_SET;
      table[OP_LOCAL_TEE] = &&L_LOCAL_TEE;
      table[OP_GLOBAL_GET] = &&L_GLOBAL_GET;
      table[OP_GLOBAL_SET] = &&L_GLOBAL_SET;
      table[0x28] = &&L_LD_28; table[0x29] = &&L_LD_29; table[0x2C] = &&L_LD_2C; table[0x2D] = &&L_LD_2D;
      table[0x2E] = &&L_LD_2E; table[0x2F] = &&L_LD_2F; table[0x30] = &&L_LD_30; table[0x31] = &&L_LD_31;
      table[0x32] = &&L_LD_32; table[0x33] = &&L_LD_33; table[0x34] = &&L_LD_34; table[0x35] = &&L_LD_35;
      table[0x36] = &&L_ST_36; table[0x37] = &&L_ST_37; table[0x3A] = &&L_ST_3A; table[0x3B] = &&L_ST_3B;
      table[0x3C] = &&L_ST_3C; table[0x3D] = &&L_ST_3D; table[0x3E] = &&L_ST_3E;
      table[OP_MEMORY_SIZE] = &&L_MEMORY_SIZE;
      table[OP_MEMORY_GROW] = &&L_MEMORY_GROW;
      table[OP_MEMORY_COPY] = &&L_MEMORY_COPY;
      table[OP_MEMORY_FILL] = &&L_MEMORY_FILL;
      table[OP_I32_CONST] = &&L_CONST;
      table[OP_I64_CONST] = &&L_CONST;
      for (auto& t : field_table) t = &&L_FIELD_OTHER;
      field_table[H_COPY] = &&L_FIELD_COPY;
      field_table[H_ISTRUE] = &&L_FIELD_ISTRUE;
      field_table[H_TOINT] = &&L_FIELD_TOINT;
      for (int b = 0; b < H_EXCEPTION; b++)
        if (binary_field_fn(HostFn(b))) field_table[b] = &&L_FIELD_BINARY;
      field_table[H_ADD] = field_table[H_SUB] = &&L_FIELD_ADDSUB;
      table_ready.store(true, std::memory_order_release);
    }
  }

  constexpr bool arm = ARM;
  auto leaving_arm = [&](uint32_t target) {  // a branch out of the arm, or a return from it
    if (arm && frames_.size() == arm_frames && (target < arm_start || target > arm_stop))
      throw detail::ArmAbort{"leaves the arm"};
  };
  auto tick = [&]() {
    if (++steps_ > lim_.max_steps) trap("step budget exhausted (loop iterations and calls)");
    if (ARM && --arm_steps_left_ == 0) throw detail::ArmAbort{"long arm"};
  };
  // frames_ never reallocates (reserved); loc_ and stk_ may (enter, nested runs): L and S are re-read at L_FRAME
  Frame* fr;
  const Func* fn;
  const Ins* code;
  const Ins* in;
  uint32_t pc;
  uint64_t* L;
  uint64_t* S;
  uint32_t sp;
  uint32_t callee_;
  HostFn field_fn;  // the field function a call reached (L_FIELD_*)
  uint32_t arg0, arg1, arg2;  // its arguments (L_*_ARGS), from the stack or (OP_F_*) from the locals
  // A call's own dispatch: a field function straight to its handler, anything else through L_CALL_TO.
#define FIELD_CALL()                                       \
  do {                                                     \
    field_fn = host_[in->a];                               \
    if (field_fn != H_NONE && field_fn < H_EXCEPTION) {    \
      fr->pc = pc;                                         \
      goto* field_table[field_fn];                         \
    }                                                      \
    goto L_CALL;                                           \
  } while (0)
  auto do_branch = [&](uint32_t k, uint64_t height) {
    const uint32_t base = fr->base + uint32_t(height);
    for (uint32_t i = 0; i < k; i++) S[base + i] = S[sp - k + i];
    sp = base + k;
  };
#define SYNC() (sp_ = sp)
#define RELOAD() (S = stk_.data(), sp = sp_)
#define NEXT()                                                        \
  do {                                                                \
    if (ARM && frames_.size() == arm_frames && pc == arm_stop) {      \
      fr->pc = pc;                                                    \
      SYNC();                                                         \
      return;                                                         \
    }                                                                 \
    in = code + pc;                                                   \
    goto* table[in->op];                                              \
  } while (0)

L_FRAME:
  fr = &frames_.back();
  fn = &m_.funcs[fr->func];
  code = fn->code.data();
  pc = fr->pc;
  L = loc_.data() + fr->locals;
  RELOAD();
  NEXT();

L_UNREACHABLE:
  SYNC();
  trap("unreachable");
L_IF: {
  const uint32_t c = uint32_t(S[--sp]);
  if constexpr (!UNTRACED) {  // (the control-flow run converts no `if`)
    if (pending_.valid && pending_.if_pc == pc && pending_.depth == frames_.size() && steps_ - pending_.step <= 3) {
      Pending pd = pending_;
      pending_.valid = false;
      fr->pc = pc;
      SYNC();
      pc = symbolic_if(*fn, *in, pc, c != 0, pd);
      // symbolic_if ran arms in this frame: re-read the frame (vectors may have moved)
      frames_.back().pc = pc;
      goto L_FRAME;
    }
  }
  pc = c ? pc + 1 : in->a;
  NEXT();
}
L_BR:
  leaving_arm(in->a);
  if (in->a <= pc) tick();
  do_branch(in->arity, in->b);
  pc = in->a;
  NEXT();
L_BR_IF:
  if (uint32_t(S[--sp])) {
    leaving_arm(in->a);
    if (in->a <= pc) tick();
    do_branch(in->arity, in->b);
    pc = in->a;
  } else {
    pc++;
  }
  NEXT();
// br_if, K instructions after this one, taken when V (evaluated once) is zero
#define BRANCH_IF_ZERO(V, K)          \
  {                                   \
    const Ins& br = in[K];            \
    if (uint32_t(V) == 0) {           \
      leaving_arm(br.a);              \
      if (br.a <= pc + K) tick();     \
      do_branch(br.arity, br.b);      \
      pc = br.a;                      \
    } else {                          \
      pc += K + 1;                    \
    }                                 \
    NEXT();                           \
  }
L_EQZ_BR_IF:  // i32.eqz, br_if (the second instruction: the branch)
  BRANCH_IF_ZERO(S[--sp], 1)
L_PUSH3:
  S[sp] = pushed(in->arity, *in, L);
  S[sp + 1] = pushed(in[1].op, in[1], L);
  S[sp + 2] = pushed(in[2].op, in[2], L);
  sp += 3;
  pc += 3;
  NEXT();
L_PUSH2:
  S[sp] = pushed(in->arity, *in, L);
  S[sp + 1] = pushed(in[1].op, in[1], L);
  sp += 2;
  pc += 2;
  NEXT();
  // The pushes of a call's arguments, then the call itself (the run's last instruction, no label inside the run:
  // not an arm's end either, so NEXT's arm test has nothing to stop at there).
#define PUSH(K) S[sp + K] = pushed(K ? in[K].op : in->arity, in[K], L)
#define PUSHED_CALL(N) \
  sp += N;             \
  pc += N;             \
  in = code + pc;      \
  FIELD_CALL()
L_PUSH1_CALL:
  PUSH(0);
  PUSHED_CALL(1);
L_PUSH2_CALL:
  PUSH(0);
  PUSH(1);
  PUSHED_CALL(2);
L_PUSH3_CALL:
  PUSH(0);
  PUSH(1);
  PUSH(2);
  PUSHED_CALL(3);
L_PUSH4_CALL:
  PUSH(0);
  PUSH(1);
  PUSH(2);
  PUSH(3);
  PUSHED_CALL(4);
#undef PUSH
#define LA_PUSH(K) S[sp + K] = uint32_t(L[in[K].a] + in[K].b)
L_LA1_CALL:
  LA_PUSH(0);
  PUSHED_CALL(1);
L_LA2_CALL:
  LA_PUSH(0);
  LA_PUSH(1);
  PUSHED_CALL(2);
L_LA3_CALL:
  LA_PUSH(0);
  LA_PUSH(1);
  LA_PUSH(2);
  PUSHED_CALL(3);
L_LA4_CALL:
  LA_PUSH(0);
  LA_PUSH(1);
  LA_PUSH(2);
  LA_PUSH(3);
  PUSHED_CALL(4);
#undef PUSHED_CALL
#undef LA_PUSH
L_MUL_ADDI_SCALE_BASE: {
  const uint32_t index = uint32_t(uint32_t(S[sp - 2]) * uint32_t(S[sp - 1]) + in[1].a);
  S[sp - 2] = uint32_t(uint32_t(L[in[4].a]) + index * uint32_t(in[2].b));
  sp -= 1;
  pc += 6;
  NEXT();
}
L_LA_MUL:
  S[sp++] = uint32_t(uint32_t(pushed(in->arity, *in, L)) * uint32_t(in[1].b));
  pc += 3;
  NEXT();
L_LA_MUL_ADD:
  S[sp++] = uint32_t(uint32_t(pushed(in->arity, *in, L)) * uint32_t(in[1].b) + in[3].a);
  pc += 4;
  NEXT();
L_LA_SET:
  L[in[1].a] = uint32_t(L[in->a] + in->b);
  pc += 2;
  NEXT();
L_LA_SET2:  // each in turn (a later one may read what an earlier one set)
  L[in[1].a] = uint32_t(L[in->a] + in->b);
  L[in[3].a] = uint32_t(L[in[2].a] + in[2].b);
  pc += 4;
  NEXT();
L_LA_SET3:
  L[in[1].a] = uint32_t(L[in->a] + in->b);
  L[in[3].a] = uint32_t(L[in[2].a] + in[2].b);
  L[in[5].a] = uint32_t(L[in[4].a] + in[4].b);
  pc += 6;
  if constexpr (UNTRACED && !ARM) {
    // circom's element copy loop: LOCAL_EQZ_BR_IF (the count), Fr_copy of two pushes, this LA_SET3, br back (the
    // RSA verifier's control-flow run: 620 K iterations, 2.5 M of its 16.1 M dispatches). Its iterations run here
    // with the same steps in their order (the br's tick, the count's test, the copy as L_COPY_ARGS takes it, the
    // locals stepped) and no dispatch; a zero count goes back to the loop's own test, which leaves it.
    const Ins& br = code[pc];
    const uint32_t head = pc - 12;
    if (br.op == OP_BR && br.a == head && br.arity == 0 && fr->base + uint32_t(br.b) == sp &&
        code[head].op == OP_LOCAL_EQZ_BR_IF && code[head + 3].op == OP_F_COPY + 1) {
      const Ins* cp = code + head + 3;
      for (;;) {
        tick();
        if (uint32_t(L[code[head].a]) == 0) break;
        arg0 = uint32_t(L[cp[0].a] + cp[0].b), arg1 = uint32_t(L[cp[1].a] + cp[1].b);
        fr->pc = head + 5;
        host_seq_++;
        if (arg1 == shared_elem_ && fr->func == uint32_t(f_set_input_)) input_copy_due_ = false;
        copy_elem(arg0, arg1);
        L[in[1].a] = uint32_t(L[in->a] + in->b);
        L[in[3].a] = uint32_t(L[in[2].a] + in[2].b);
        L[in[5].a] = uint32_t(L[in[4].a] + in[4].b);
      }
      pc = head;
    }
  }
  NEXT();
L_LOCAL_EQZ_BR_IF:  // local.get, i32.eqz, br_if (the third instruction: the branch)
  BRANCH_IF_ZERO(L[in->a], 2)
#undef BRANCH_IF_ZERO
  // the commonest integer instructions here, not through wasm_numeric's second dispatch (the same definitions)
L_I32_EQZ: S[sp - 1] = uint32_t(S[sp - 1]) == 0; pc++; NEXT();
#define CMP32(LBL, EXPR)                                    \
  LBL : {                                                   \
    const uint32_t b = uint32_t(S[--sp]), a = uint32_t(S[sp - 1]); \
    S[sp - 1] = (EXPR) ? 1 : 0;                             \
    pc++;                                                   \
    NEXT();                                                 \
  }
  CMP32(L_I32_EQ, a == b)
  CMP32(L_I32_NE, a != b)
  CMP32(L_I32_LT_U, a < b)
  CMP32(L_I32_GT_U, a > b)
  CMP32(L_I32_LE_U, a <= b)
  CMP32(L_I32_GE_U, a >= b)
#undef CMP32
#define BIN32(LBL, EXPR)                                    \
  LBL : {                                                   \
    const uint32_t b = uint32_t(S[--sp]), a = uint32_t(S[sp - 1]); \
    S[sp - 1] = uint32_t(EXPR);                             \
    pc++;                                                   \
    NEXT();                                                 \
  }
  BIN32(L_I32_ADD, a + b)
  BIN32(L_I32_SUB, a - b)
  BIN32(L_I32_MUL, a * b)
  BIN32(L_I32_AND, a & b)
  BIN32(L_I32_SHL, a << (b & 31))
  BIN32(L_I32_SHR_U, a >> (b & 31))
#undef BIN32
L_I32_ADDI: S[sp - 1] = uint32_t(S[sp - 1] + in->a); pc++; NEXT();
L_LOCAL_ADDI: S[sp++] = uint32_t(L[in->a] + in->b); pc++; NEXT();
L_BR_TABLE: {
  uint32_t i = uint32_t(S[--sp]);
  if (i >= in->b - 1) i = uint32_t(in->b - 1);
  const BrTarget& t = fn->table[in->a + i];
  leaving_arm(t.pc);
  if (t.pc <= pc) tick();
  do_branch(t.arity, t.height);
  pc = t.pc;
  NEXT();
}
L_RETURN:
  if (arm && frames_.size() == arm_frames) throw detail::ArmAbort{"returns from the arm"};
  SYNC();
  leave();
  if (frames_.size() == depth) return;
  goto L_FRAME;
L_CALL_INDIRECT: {
  const uint32_t i = uint32_t(S[--sp]);
  SYNC();
  if (i >= m_.table.size() || m_.table[i] == ~0u) trap("undefined table element");
  const uint32_t callee = m_.table[i];
  const FuncType& want = m_.types[in->a];
  const FuncType& got = m_.type_of(callee);
  if (want.params != got.params || want.results != got.results) trap("indirect call type mismatch");
  callee_ = callee;
  goto L_CALL_TO;
}
L_CALL:
  callee_ = in->a;
L_CALL_TO: {
  const uint32_t callee = callee_;
  const HostFn h = host_[callee];
  if (h != H_NONE && h < H_EXCEPTION) {  // circom's field functions (not the runtime's imports)
    fr->pc = pc;
    field_fn = h;
    goto* field_table[h];
  }
  if (h != H_NONE) {
    fr->pc = pc;
    if (h == H_IMPORT_NOP) {
      const FuncType& t = m_.type_of(callee);
      sp -= uint32_t(t.params.size());
      for (size_t k = 0; k < t.results.size(); k++) S[sp++] = 0;
    } else if (h == H_IMPORT_ERROR) {
      SYNC();
      if (in_arm()) throw detail::ArmAbort{"error"};
      throw CircuitFailure(0, "the circuit called runtime.error");
    } else {
      SYNC();
      host_call(h, pc);
      if (h == H_PRINT_ERROR || h == H_WRITE_BUFFER) {
        // they ran getMessageChar, which may have grown the stacks: re-read this frame
        frames_.back().pc = pc + 1;
        goto L_FRAME;
      }
      RELOAD();
    }
    pc++;
    NEXT();
  }
  tick();
  fr->pc = pc + 1;
  SYNC();
  enter(callee);
  goto L_FRAME;
}
  // circom's field functions, the commonest ones here as host_call does them (the same steps, in the same order),
  // their arguments taken from the stack in registers: the call into host_call and its dispatch were a large part
  // of each (the RSA verifier's control-flow run makes 8.6 M calls, nearly all Fr_copy, Fr_toInt, Fr_add,
  // Fr_isTrue, Fr_mul). Reached through field_table from each call handler's own jump (FIELD_CALL), not from
  // one switch: a fused call's handler mostly calls one kind (two pushes: Fr_copy; three: a binary op), which its
  // own jump predicts. fr->pc and field_fn are set on the way in.
L_FIELD_COPY:
  arg0 = uint32_t(S[sp - 2]), arg1 = uint32_t(S[sp - 1]);
  sp -= 2;
L_COPY_ARGS:
  host_seq_++;
  if (arg1 == shared_elem_ && fr->func == uint32_t(f_set_input_)) input_copy_due_ = false;
  if constexpr (UNTRACED) copy_elem(arg0, arg1);
  else write_elem(arg0, read_elem(arg1));
  pc++;
  NEXT();
L_FIELD_ISTRUE:
  arg0 = uint32_t(S[--sp]);
L_ISTRUE_ARGS: {
  host_seq_++;
  pending_.valid = false;
  const Val x = read_elem(arg0);
  const bool t = CF::is_true(x.v);
  if (x.id) istrue_traced(x.id, t, pc);
  S[sp++] = t ? 1 : 0;
  pc++;
  NEXT();
}
L_FIELD_TOINT:
  arg0 = uint32_t(S[--sp]);
L_TOINT_ARGS: {
  host_seq_++;
  const Val x = read_elem(arg0);
  const int32_t v = CF::n_to_int32(plain_of(x));
  // setInputSignal converts the value it stores to decide its representation only
  if (x.id && fr->func != uint32_t(f_set_input_)) guard(T_GUARD_INT, x.id, uint32_t(v));
  if constexpr (UNTRACED && !ARM) {
    // an element's index: the integer scaled into an address next (OP_MUL_ADDI_SCALE_BASE; 1.25 M of the RSA
    // verifier's control-flow run's 1.4 M Fr_toInt calls): its steps here, the integer never pushed, no dispatch
    const Ins* nx = code + pc + 1;
    if (nx->op == OP_MUL_ADDI_SCALE_BASE) {
      const uint32_t index = uint32_t(uint32_t(S[sp - 1]) * uint32_t(v) + nx[1].a);
      S[sp - 1] = uint32_t(uint32_t(L[nx[4].a]) + index * uint32_t(nx[2].b));
      pc += 7;  // this call, the six instructions of the address
      NEXT();
    }
  }
  S[sp++] = uint32_t(v);
  pc++;
  NEXT();
}
L_FIELD_ADDSUB:  // Fr_add, Fr_sub
  arg0 = uint32_t(S[sp - 3]), arg1 = uint32_t(S[sp - 2]), arg2 = uint32_t(S[sp - 1]);
  sp -= 3;
L_ADDSUB_ARGS:
  if constexpr (UNTRACED) {  // operands in one form (nearly all) here, without binary_to's calls and switch
    host_seq_++;
    const Val x = read_elem(arg1), y = read_elem(arg2);
    if (x.plain == y.plain) {
      // as binary_value: the sum or difference in their form, marked when either operand is
      const F v = field_fn == H_ADD ? x.v + y.v : x.v - y.v;
      const uint32_t id = x.id | y.id ? TAINT : 0;
      write_value(arg0, id, v, x.plain);
      // `x = a + b` in circom's wasm: the sum into a temporary, then Fr_copy of one push naming it into the address
      // the stack holds (1.39 M such pairs a run in the RSA verifier's control-flow run). The temporary is
      // write_value's element, as written (own_elem's), so copy_elem would copy exactly the bytes and shadow bytes
      // write_value writes for the same value: written from the registers here, with L_COPY_ARGS's other steps in
      // their order (fr->pc at the copy's call, the sequence count, the input-copy test, the destination's checks)
      // and no dispatch, push or pop between.
      if constexpr (!ARM) {
        const Ins& nx = code[pc + 1];
        if (nx.op == OP_F_COPY && uint32_t(L[nx.a] + nx.b) == arg0) {
          const uint32_t dst = uint32_t(S[--sp]);
          pc += 2;
          fr->pc = pc;
          host_seq_++;
          if (arg0 == shared_elem_ && fr->func == uint32_t(f_set_input_)) input_copy_due_ = false;
          write_value(dst, id, v, x.plain);
          pc++;
          NEXT();
        }
      }
    } else {
      binary_to(arg0, field_fn, x, y);
    }
    pc++;
    NEXT();
  }
  goto L_BINARY_ARGS;
L_FIELD_BINARY:  // host_call's binary field ops (pR, pA, pB)
  arg0 = uint32_t(S[sp - 3]), arg1 = uint32_t(S[sp - 2]), arg2 = uint32_t(S[sp - 1]);
  sp -= 3;
L_BINARY_ARGS:
  host_seq_++;
  if constexpr (UNTRACED) {  // (plain_forms.hpp)
    const Val x = read_elem(arg1), y = read_elem(arg2);
    if (!binary_direct(arg0, field_fn, x, y)) binary_to(arg0, field_fn, x, y);
    // circom's loop and `if` tests: a comparison, then Fr_isTrue of the element it wrote (a fused call of one push,
    // `local + k`, naming the same address). That element is write_value's, as written (own_elem's: its value the
    // limbs, canonical), so L_ISTRUE_ARGS's steps are done here without its read_elem and dispatch: the same
    // sequence count, the same truth (0 is all zero limbs in either form), the next instruction after its call.
    if constexpr (!ARM) {
      const Ins& nx = code[pc + 1];
      if (nx.op == OP_F_ISTRUE && uint32_t(L[nx.a] + nx.b) == arg0) {
        host_seq_++;
        pending_.valid = false;
        const uint8_t* limbs = mem_.data() + arg0 + 8;
        u64 any = 0;
        for (size_t k = 0; k < P::N; k++) any |= load_limb(limbs + 8 * k);
        pc += 3;  // this call, the isTrue's push and its call
        // a loop's exit test: i32.eqz, br_if on that truth next (525 K a run in the RSA verifier's control-flow
        // run): L_EQZ_BR_IF's steps here, the truth never pushed and popped, no dispatch
        if (code[pc].op == OP_EQZ_BR_IF) {
          const Ins& br = code[pc + 1];
          if (any == 0) {
            if (br.a <= pc + 1) tick();
            do_branch(br.arity, br.b);
            pc = br.a;
          } else {
            pc += 2;
          }
          NEXT();
        }
        // an `if` on that truth (i32.eqz, if: 185 K a run): L_I32_EQZ's and L_IF's steps here, no dispatch
        if (code[pc].op == 0x45 && code[pc + 1].op == OP_IF) {
          pc = any != 0 ? code[pc + 1].a : pc + 2;
          NEXT();
        }
        S[sp++] = any != 0 ? 1 : 0;
        NEXT();
      }
    }
  }
  else write_elem(arg0, binary(field_fn, read_elem(arg1), read_elem(arg2)));
  pc++;
  NEXT();
  // The fused calls (OP_F_*, wasm_module.hpp): N pushes, the callee's P params. Pushes before the arguments pushed,
  // the arguments not pushed taken from the stack, the rest from the pushes' locals; the callee's kind in arity, pc
  // and fr->pc at the call, as FIELD_CALL leaves them.
#define LOCAL_ARG(K) uint32_t(L[in[K].a] + in[K].b)
#define F_CALL(LBL, P, N, GO, KIND)                               \
  LBL: {                                                          \
    constexpr int E = N > P ? N - P : 0, SA = P > N ? P - N : 0;  \
    uint32_t v[3];                                                \
    for (int k = 0; k < E; k++) S[sp + k] = LOCAL_ARG(k);         \
    sp += E;                                                      \
    for (int k = 0; k < SA; k++) v[k] = uint32_t(S[sp - SA + k]); \
    sp -= SA;                                                     \
    for (int k = SA; k < P; k++) v[k] = LOCAL_ARG(E + k - SA);    \
    arg0 = v[0];                                                  \
    if constexpr (P > 1) arg1 = v[1];                             \
    if constexpr (P > 2) arg2 = v[2];                             \
    if constexpr (KIND) field_fn = HostFn(in->arity);             \
    pc += N;                                                      \
    fr->pc = pc;                                                  \
    goto GO;                                                      \
  }
  // KIND: the handler reads field_fn (one handler for several field functions)
#define F_CALLS(LBL, P, GO, KIND) \
  F_CALL(LBL##1, P, 1, GO, KIND) F_CALL(LBL##2, P, 2, GO, KIND) F_CALL(LBL##3, P, 3, GO, KIND) F_CALL(LBL##4, P, 4, GO, KIND)
  F_CALLS(L_F_COPY, 2, L_COPY_ARGS, false)
  F_CALLS(L_F_ADDSUB, 3, L_ADDSUB_ARGS, true)
  F_CALLS(L_F_BINARY, 3, L_BINARY_ARGS, true)
  F_CALLS(L_F_ISTRUE, 1, L_ISTRUE_ARGS, false)
  F_CALLS(L_F_TOINT, 1, L_TOINT_ARGS, false)
#undef F_CALLS
#undef F_CALL
#undef LOCAL_ARG
L_FIELD_OTHER:
  SYNC();
  host_call(field_fn, pc);
  RELOAD();
  pc++;
  NEXT();
L_DROP: sp--; pc++; NEXT();
L_SELECT: {
  const uint32_t c = uint32_t(S[--sp]);
  const uint64_t b = S[--sp];
  if (!c) S[sp - 1] = b;
  pc++;
  NEXT();
}
L_LOCAL_GET: S[sp++] = L[in->a]; pc++; NEXT();
L_LOCAL_SET: L[in->a] = S[--sp]; pc++; NEXT();
L_LOCAL_TEE: L[in->a] = S[sp - 1]; pc++; NEXT();
L_GLOBAL_GET: S[sp++] = globals_[in->a]; pc++; NEXT();
L_GLOBAL_SET:
  if (in_arm()) throw detail::ArmAbort{"global"};
  globals_[in->a] = S[--sp];
  pc++;
  NEXT();
#define LOAD(LBL, T, N, CONV)                                 \
  LBL : {                                                     \
    const uint64_t ea = uint64_t(uint32_t(S[sp - 1])) + in->a; \
    raw_read(ea, N);                                          \
    T v;                                                      \
    std::memcpy(&v, mem_.data() + ea, N);                     \
    S[sp - 1] = CONV;                                         \
    pc++;                                                     \
    NEXT();                                                   \
  }
  LOAD(L_LD_28, uint32_t, 4, uint64_t(v))
  LOAD(L_LD_29, uint64_t, 8, v)
  LOAD(L_LD_2C, int8_t, 1, uint64_t(uint32_t(int32_t(v))))
  LOAD(L_LD_2D, uint8_t, 1, uint64_t(v))
  LOAD(L_LD_2E, int16_t, 2, uint64_t(uint32_t(int32_t(v))))
  LOAD(L_LD_2F, uint16_t, 2, uint64_t(v))
  LOAD(L_LD_30, int8_t, 1, uint64_t(int64_t(v)))
  LOAD(L_LD_31, uint8_t, 1, uint64_t(v))
  LOAD(L_LD_32, int16_t, 2, uint64_t(int64_t(v)))
  LOAD(L_LD_33, uint16_t, 2, uint64_t(v))
  LOAD(L_LD_34, int32_t, 4, uint64_t(int64_t(v)))
  LOAD(L_LD_35, uint32_t, 4, uint64_t(v))
#undef LOAD
#define STORE(LBL, T, N)                                      \
  LBL : {                                                     \
    const T v = T(S[sp - 1]);                                 \
    const uint64_t ea = uint64_t(uint32_t(S[sp - 2])) + in->a; \
    sp -= 2;                                                  \
    raw_write(ea, N);                                         \
    std::memcpy(mem_.data() + ea, &v, N);                     \
    pc++;                                                     \
    NEXT();                                                   \
  }
  STORE(L_ST_36, uint32_t, 4)
  STORE(L_ST_37, uint64_t, 8)
  STORE(L_ST_3A, uint8_t, 1)
  STORE(L_ST_3B, uint16_t, 2)
  STORE(L_ST_3C, uint8_t, 1)
  STORE(L_ST_3D, uint16_t, 2)
  STORE(L_ST_3E, uint32_t, 4)
#undef STORE
L_MEMORY_SIZE: S[sp++] = mem_.size() >> 16; pc++; NEXT();
L_MEMORY_GROW: {
  if (in_arm()) throw detail::ArmAbort{"memory.grow"};
  const uint64_t n = uint32_t(S[sp - 1]);
  const uint64_t old = mem_.size() >> 16;
  const uint64_t want = (old + n) << 16;
  if (want > lim_.max_memory || (m_.mem_has_max && old + n > m_.mem_max) || old + n > 65536) {
    S[sp - 1] = uint32_t(-1);
  } else {
    size_memory(want);
    S[sp - 1] = old;
  }
  pc++;
  NEXT();
}
L_MEMORY_COPY: {
  const uint64_t n = uint32_t(S[sp - 1]), s = uint32_t(S[sp - 2]), d = uint32_t(S[sp - 3]);
  sp -= 3;
  charge(n >> 16);
  if (n) {
    raw_read(s, uint32_t(n));
    raw_write(d, uint32_t(n));
    std::memmove(mem_.data() + d, mem_.data() + s, n);
  } else if (s > mem_.size() || d > mem_.size()) {
    trap("out of bounds memory access");
  }
  pc++;
  NEXT();
}
L_MEMORY_FILL: {
  const uint64_t n = uint32_t(S[sp - 1]), v = uint32_t(S[sp - 2]), d = uint32_t(S[sp - 3]);
  sp -= 3;
  charge(n >> 16);
  if (n) {
    raw_write(d, uint32_t(n));
    std::memset(mem_.data() + d, int(v & 0xFF), n);
  } else if (d > mem_.size()) {
    trap("out of bounds memory access");
  }
  pc++;
  NEXT();
}
L_CONST: S[sp++] = in->b; pc++; NEXT();
L_DEFAULT: {
  uint32_t t = sp;  // (sp's address not taken: it stays in a register)
  const char* why = wasm_numeric(in->op, S, t);
  sp = t;
  if (why) {
    SYNC();
    if (why == NOT_NUMERIC) throw Unsupported("internal: opcode " + std::to_string(in->op));
    trap(why);
  }
  pc++;
  NEXT();
}
#undef FIELD_CALL
#undef NEXT
#undef RELOAD
#undef SYNC
}

// The value one push of a fused run (OP_PUSH2...) pushes: its own op given (a run's head keeps it in `arity`).
template <class P, bool UNTRACED>
inline uint64_t Recorder<P, UNTRACED>::pushed(uint16_t op, const Ins& in, const uint64_t* L) {
  return op == OP_LOCAL_ADDI ? uint64_t(uint32_t(L[in.a] + in.b)) : op == OP_I32_CONST ? in.b : L[in.a];
}

template <class P, bool UNTRACED>
void Recorder<P, UNTRACED>::branch(const Ins& in) {
  uint32_t base = frames_.back().base + uint32_t(in.b);
  uint32_t k = in.arity;
  for (uint32_t i = 0; i < k; i++) stk_[base + i] = stk_[sp_ - k + i];
  sp_ = base + k;
}

}  // namespace snarkd::witness
