// The recorder's wasm interpreter (record.hpp declares it): the decoded instructions of
// wasm_module.hpp run on an operand stack, a locals stack and call frames, with every load and
// store through the recorder's shadow checks, calls to circom's field functions handed to
// host_call, and an `if` on a traced condition handed to symbolic_if (ifconvert.hpp).
#pragma once

namespace snarkd::witness {

// ARM: running one arm of an if-converted `if` (stops at its end; guards and effects abort).
// The budgets count loop iterations and calls (every endless run loops), not instructions.
template <class P>
template <bool ARM>
void Recorder<P>::exec(size_t depth, size_t arm_frames, uint32_t arm_start, uint32_t arm_stop) {
  constexpr bool arm = ARM;
  auto leaving_arm = [&](uint32_t target) {  // a branch out of the arm, or a return from it
    if (arm && frames_.size() == arm_frames && (target < arm_start || target > arm_stop))
      throw detail::ArmAbort{"leaves the arm"};
  };
  auto tick = [&]() {
    if (++steps_ > lim_.max_steps) trap("step budget exhausted (loop iterations and calls)");
    if (ARM && --arm_steps_left_ == 0) throw detail::ArmAbort{"long arm"};
  };
  for (;;) {
    Frame& fr = frames_.back();  // frames_ never reallocates (reserved); loc_ may: L is re-read here
    const Func& fn = m_.funcs[fr.func];
    const Ins* code = fn.code.data();
    uint32_t pc = fr.pc;
    uint64_t* L = loc_.data() + fr.locals;
    bool switch_frame = false;
    while (!switch_frame) {
      if (ARM && frames_.size() == arm_frames && pc == arm_stop) {
        fr.pc = pc;
        return;
      }
      const Ins& in = code[pc];
      uint64_t* S = stk_.data();
      switch (in.op) {
        case OP_UNREACHABLE: trap("unreachable");
        case OP_IF: {
          uint32_t c = uint32_t(S[--sp_]);
          if (pending_.valid && pending_.if_pc == pc && pending_.depth == frames_.size() &&
              steps_ - pending_.step <= 3) {
            Pending pd = pending_;
            pending_.valid = false;
            fr.pc = pc;
            pc = symbolic_if(fn, in, pc, c != 0, pd);
            // symbolic_if ran arms in this frame: re-read the frame (vectors may have moved)
            switch_frame = true;
            frames_.back().pc = pc;
            break;
          }
          pc = c ? pc + 1 : in.a;
          break;
        }
        case OP_JUMP: case OP_BR: {
          leaving_arm(in.a);
          if (in.a <= pc) tick();
          branch(in);
          pc = in.a;
          break;
        }
        case OP_BR_IF: {
          if (uint32_t(S[--sp_])) {
            leaving_arm(in.a);
            if (in.a <= pc) tick();
            branch(in);
            pc = in.a;
          } else {
            pc++;
          }
          break;
        }
        case OP_EQZ_BR_IF: {  // i32.eqz, br_if (the second instruction: the branch)
          const Ins& br = code[pc + 1];
          if (uint32_t(S[--sp_]) == 0) {
            leaving_arm(br.a);
            if (br.a <= pc + 1) tick();
            branch(br);
            pc = br.a;
          } else {
            pc += 2;
          }
          break;
        }
        case OP_PUSH3: {
          S[sp_++] = pushed(in.arity, in, L);
          S[sp_++] = pushed(code[pc + 1].op, code[pc + 1], L);
          S[sp_++] = pushed(code[pc + 2].op, code[pc + 2], L);
          pc += 3;
          break;
        }
        case OP_PUSH2: {
          S[sp_++] = pushed(in.arity, in, L);
          S[sp_++] = pushed(code[pc + 1].op, code[pc + 1], L);
          pc += 2;
          break;
        }
        case OP_LA_MUL: S[sp_++] = uint32_t(uint32_t(pushed(in.arity, in, L)) * uint32_t(code[pc + 1].b)); pc += 3; break;
        case OP_LA_MUL_ADD:
          S[sp_++] = uint32_t(uint32_t(pushed(in.arity, in, L)) * uint32_t(code[pc + 1].b) + code[pc + 3].a);
          pc += 4;
          break;
        case OP_LA_SET: L[code[pc + 1].a] = uint32_t(L[in.a] + in.b); pc += 2; break;
        // the commonest integer instructions here, not through wasm_numeric's second dispatch
        case 0x45: S[sp_ - 1] = uint32_t(S[sp_ - 1]) == 0; pc++; break;
        case 0x6A: sp_--; S[sp_ - 1] = uint32_t(S[sp_ - 1] + S[sp_]); pc++; break;
        case 0x6C: sp_--; S[sp_ - 1] = uint32_t(uint32_t(S[sp_ - 1]) * uint32_t(S[sp_])); pc++; break;
        case OP_I32_ADDI: S[sp_ - 1] = uint32_t(S[sp_ - 1] + in.a); pc++; break;
        case OP_LOCAL_ADDI: S[sp_++] = uint32_t(L[in.a] + in.b); pc++; break;
        case OP_BR_TABLE: {
          uint32_t i = uint32_t(S[--sp_]);
          if (i >= in.b - 1) i = uint32_t(in.b - 1);
          const BrTarget& t = fn.table[in.a + i];
          Ins tmp{OP_BR, uint16_t(t.arity), t.pc, t.height};
          leaving_arm(t.pc);
          if (t.pc <= pc) tick();
          branch(tmp);
          pc = t.pc;
          break;
        }
        case OP_RETURN: case OP_END: {
          if (arm && frames_.size() == arm_frames) throw detail::ArmAbort{"returns from the arm"};
          leave();
          if (frames_.size() == depth) return;
          switch_frame = true;
          break;
        }
        case OP_CALL: case OP_CALL_INDIRECT: {
          uint32_t callee;
          if (in.op == OP_CALL) callee = in.a;
          else {
            uint32_t i = uint32_t(S[--sp_]);
            if (i >= m_.table.size() || m_.table[i] == ~0u) trap("undefined table element");
            callee = m_.table[i];
            const FuncType& want = m_.types[in.a];
            const FuncType& got = m_.type_of(callee);
            if (want.params != got.params || want.results != got.results) trap("indirect call type mismatch");
          }
          HostFn h = host_[callee];
          if (h != H_NONE) {
            fr.pc = pc;
            if (h == H_IMPORT_NOP) {
              const FuncType& t = m_.type_of(callee);
              sp_ -= uint32_t(t.params.size());
              for (size_t k = 0; k < t.results.size(); k++) S[sp_++] = 0;
            } else if (h == H_IMPORT_ERROR) {
              if (arm_depth_) throw detail::ArmAbort{"error"};
              throw CircuitFailure(0, "the circuit called runtime.error");
            } else {
              host_call(h, pc);
            }
            if (h == H_PRINT_ERROR || h == H_WRITE_BUFFER) {
              // they ran getMessageChar, which may have grown the stacks: re-read this frame
              frames_.back().pc = pc + 1;
              switch_frame = true;
              break;
            }
            pc++;
            break;
          }
          tick();
          fr.pc = pc + 1;
          enter(callee);
          switch_frame = true;
          break;
        }
        case OP_DROP: sp_--; pc++; break;
        case OP_SELECT: {
          uint32_t c = uint32_t(S[--sp_]);
          uint64_t b = S[--sp_];
          if (!c) S[sp_ - 1] = b;
          pc++;
          break;
        }
        case OP_LOCAL_GET: S[sp_++] = L[in.a]; pc++; break;
        case OP_LOCAL_SET: L[in.a] = S[--sp_]; pc++; break;
        case OP_LOCAL_TEE: L[in.a] = S[sp_ - 1]; pc++; break;
        case OP_GLOBAL_GET: S[sp_++] = globals_[in.a]; pc++; break;
        case OP_GLOBAL_SET:
          if (arm_depth_) throw detail::ArmAbort{"global"};
          globals_[in.a] = S[--sp_];
          pc++;
          break;
#define LOAD(OPC, T, N, CONV)                                   \
case OPC: {                                                    \
  uint64_t ea = uint64_t(uint32_t(S[sp_ - 1])) + in.a;         \
  raw_read(ea, N);                                             \
  T v;                                                         \
  std::memcpy(&v, mem_.data() + ea, N);                        \
  S[sp_ - 1] = CONV;                                           \
  pc++;                                                        \
  break;                                                       \
}
        LOAD(0x28, uint32_t, 4, uint64_t(v))
        LOAD(0x29, uint64_t, 8, v)
        LOAD(0x2C, int8_t, 1, uint64_t(uint32_t(int32_t(v))))
        LOAD(0x2D, uint8_t, 1, uint64_t(v))
        LOAD(0x2E, int16_t, 2, uint64_t(uint32_t(int32_t(v))))
        LOAD(0x2F, uint16_t, 2, uint64_t(v))
        LOAD(0x30, int8_t, 1, uint64_t(int64_t(v)))
        LOAD(0x31, uint8_t, 1, uint64_t(v))
        LOAD(0x32, int16_t, 2, uint64_t(int64_t(v)))
        LOAD(0x33, uint16_t, 2, uint64_t(v))
        LOAD(0x34, int32_t, 4, uint64_t(int64_t(v)))
        LOAD(0x35, uint32_t, 4, uint64_t(v))
#undef LOAD
#define STORE(OPC, T, N)                                         \
case OPC: {                                                    \
  T v = T(S[sp_ - 1]);                                         \
  uint64_t ea = uint64_t(uint32_t(S[sp_ - 2])) + in.a;         \
  sp_ -= 2;                                                    \
  raw_write(ea, N);                                            \
  std::memcpy(mem_.data() + ea, &v, N);                        \
  pc++;                                                        \
  break;                                                       \
}
        STORE(0x36, uint32_t, 4)
        STORE(0x37, uint64_t, 8)
        STORE(0x3A, uint8_t, 1)
        STORE(0x3B, uint16_t, 2)
        STORE(0x3C, uint8_t, 1)
        STORE(0x3D, uint16_t, 2)
        STORE(0x3E, uint32_t, 4)
#undef STORE
        case OP_MEMORY_SIZE: S[sp_++] = mem_.size() >> 16; pc++; break;
        case OP_MEMORY_GROW: {
          if (arm_depth_) throw detail::ArmAbort{"memory.grow"};
          uint64_t n = uint32_t(S[sp_ - 1]);
          uint64_t old = mem_.size() >> 16;
          uint64_t want = (old + n) << 16;
          if (want > lim_.max_memory || (m_.mem_has_max && old + n > m_.mem_max) || old + n > 65536) {
            S[sp_ - 1] = uint32_t(-1);
          } else {
            mem_.resize(want);
            shadow_.resize(want / 4);
            native_form_.resize(want / 256 + 1);
            S[sp_ - 1] = old;
          }
          pc++;
          break;
        }
        case OP_MEMORY_COPY: {
          uint64_t n = uint32_t(S[sp_ - 1]), s = uint32_t(S[sp_ - 2]), d = uint32_t(S[sp_ - 3]);
          sp_ -= 3;
          charge(n >> 16);
          if (n) {
            raw_read(s, uint32_t(n));
            raw_write(d, uint32_t(n));
            std::memmove(mem_.data() + d, mem_.data() + s, n);
          } else if (s > mem_.size() || d > mem_.size()) {
            trap("out of bounds memory access");
          }
          pc++;
          break;
        }
        case OP_MEMORY_FILL: {
          uint64_t n = uint32_t(S[sp_ - 1]), v = uint32_t(S[sp_ - 2]), d = uint32_t(S[sp_ - 3]);
          sp_ -= 3;
          charge(n >> 16);
          if (n) {
            raw_write(d, uint32_t(n));
            std::memset(mem_.data() + d, int(v & 0xFF), n);
          } else if (d > mem_.size()) {
            trap("out of bounds memory access");
          }
          pc++;
          break;
        }
        case OP_I32_CONST: case OP_I64_CONST: S[sp_++] = in.b; pc++; break;
        default:
          if (const char* why = wasm_numeric(in.op, S, sp_)) {
            if (why == NOT_NUMERIC) throw Unsupported("internal: opcode " + std::to_string(in.op));
            trap(why);
          }
          pc++;
          break;
      }
    }
    if (!frames_.empty()) {
      // switch_frame: the current frame changed (call/return) or an if-conversion ran
    }
  }
}

// The value one push of a fused run (OP_PUSH2...) pushes: its own op given (a run's head keeps it in `arity`).
template <class P>
inline uint64_t Recorder<P>::pushed(uint16_t op, const Ins& in, const uint64_t* L) {
  return op == OP_LOCAL_ADDI ? uint64_t(uint32_t(L[in.a] + in.b)) : op == OP_I32_CONST ? in.b : L[in.a];
}

template <class P>
void Recorder<P>::branch(const Ins& in) {
  uint32_t base = frames_.back().base + uint32_t(in.b);
  uint32_t k = in.arity;
  for (uint32_t i = 0; i < k; i++) stk_[base + i] = stk_[sp_ - k + i];
  sp_ = base + k;
}

}  // namespace snarkd::witness
