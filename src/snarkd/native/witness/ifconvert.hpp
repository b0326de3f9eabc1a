// If-conversion, the recorder's answer to circom's ternaries on signals (record.hpp declares
// these members). At an `if` on isTrue(traced value) both arms run from the same state: the arm
// not taken first, its memory writes journaled and undone (its trace nodes kept), then the arm
// taken. Where the two end in the same locals, stack and raw memory, and differ only in field
// elements, each differing element becomes select(cond, then, else): one path for every input.
// Anything else (a guard, a log, a trap, a return or branch out of the arm, memory growth, a
// partial operation like \ or %) abandons the conversion: the arms are undone and the `if` is a guard.
#pragma once

namespace snarkd::witness {

template <class P, bool UNTRACED>
auto Recorder<P, UNTRACED>::snapshot() -> Snapshot {
  const Frame& fr = frames_.back();
  Snapshot s{journal_.size(), elem_log_.size(), trace_.nodes.size(), trace_.strings.size(), sp_, lp_,
             frames_.size(), {}};
  s.locals.assign(loc_.begin() + fr.locals, loc_.begin() + lp_);
  return s;
}
template <class P, bool UNTRACED>
void Recorder<P, UNTRACED>::rollback(const Snapshot& s, bool drop_nodes) {
  for (size_t k = journal_.size(); k-- > s.journal;) {
    const JEntry& e = journal_[k];
    std::memcpy(mem_.data() + size_t(e.addr) * 4, &e.word, 4);
    shadow_[e.addr] = Shadow(e.shadow);
    set_native_form(e.addr, e.addr, e.native_form);
  }
  journal_.resize(s.journal);
  elem_log_.resize(s.elems);
  if (drop_nodes) {
    trace_.nodes.resize(s.nodes);
    trace_.strings.resize(s.strings);
  }
  frames_.resize(s.frames);
  sp_ = s.sp;
  lp_ = s.lp;
  std::copy(s.locals.begin(), s.locals.end(), loc_.begin() + frames_.back().locals);
}

// Run one arm of an `if` (from `start` until the if's end `stop`) in the current frame, in arm mode.
template <class P, bool UNTRACED>
void Recorder<P, UNTRACED>::run_arm(uint32_t start, uint32_t stop) {
  frames_.back().pc = start;
  if (start == stop) return;
  arm_depth_++;
  uint64_t saved_budget = arm_steps_left_;
  if (arm_depth_ == 1) arm_steps_left_ = lim_.arm_steps;
  try {
    exec<true>(0, frames_.size(), start, stop);
  } catch (...) {
    arm_depth_--;
    arm_steps_left_ = saved_budget;
    throw;
  }
  arm_depth_--;
  if (arm_depth_ == 0) arm_steps_left_ = saved_budget;
}

// An `if` deciding on isTrue(traced value). Returns the pc to continue at (in this frame).
template <class P, bool UNTRACED>
uint32_t Recorder<P, UNTRACED>::symbolic_if(const Func& fn, const Ins& in, uint32_t pc, bool cond, const Pending& pd) {
  const uint32_t then_start = pc + 1, else_start = in.a, end = uint32_t(in.b);
  const uint32_t then_stop = (else_start == end) ? end : else_start - 1;  // the `else` jump
  // (isTrue(v) == want) takes the then arm
  const bool then_when_true = !pd.negate;
  const bool then_err = arm_reports_error(fn, then_start, then_stop);
  const bool else_err = else_start != end && arm_reports_error(fn, else_start, end);
  if (then_err != else_err) {
    // circom's assert / ===: the trace goes on along the arm that does not fail
    const bool ok_cond = else_err;  // cond value that takes the non-failing arm
    bool take = cond;
    if (force_) take = ok_cond;
    if (take == ok_cond) guard((ok_cond == then_when_true) ? T_GUARD_TRUE : T_GUARD_FALSE, pd.id);
    return take ? then_start : else_start;
  }
  if (arm_depth_ >= 8) {
    throw detail::ArmAbort{"nesting"};
  }
  const bool isTrue_v = then_when_true ? cond : !cond;
  Snapshot s0 = snapshot();
  // each arm runs until the if's end (the then arm gets there through the `else` jump)
  const uint32_t t_start = cond ? then_start : else_start, t_stop = end;
  const uint32_t n_start = cond ? else_start : then_start, n_stop = end;
  auto fallback = [&](bool drop) -> uint32_t {
    rollback(s0, drop);
    guard(isTrue_v ? T_GUARD_TRUE : T_GUARD_FALSE, pd.id);
    return t_start;
  };
  // 1. the arm not taken
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> nt_final;  // word -> (value, shadow)
  std::vector<uint32_t> nt_elems;
  std::vector<uint64_t> nt_locals, nt_stack;
  try {
    run_arm(n_start, n_stop);
  } catch (const detail::ArmAbort&) {
    if (arm_depth_) throw;
    return fallback(true);
  }
  for (size_t k = s0.journal; k < journal_.size(); k++) {
    uint32_t w = journal_[k].addr;
    nt_final[w] = {load32(w * 4), shadow_[w]};
  }
  nt_elems.assign(elem_log_.begin() + s0.elems, elem_log_.end());
  nt_locals.assign(loc_.begin() + frames_.back().locals, loc_.begin() + lp_);
  nt_stack.assign(stk_.begin() + s0.sp, stk_.begin() + sp_);
  {  // undo its memory, keep its trace nodes (the select reads them)
    Snapshot keep = s0;
    keep.nodes = trace_.nodes.size();
    keep.strings = trace_.strings.size();
    rollback(keep, false);
  }
  // 2. the arm taken
  try {
    run_arm(t_start, t_stop);
  } catch (const detail::ArmAbort&) {
    if (arm_depth_) throw;
    return fallback(true);
  }
  // 3. compare and merge
  std::vector<uint64_t> t_locals(loc_.begin() + frames_.back().locals, loc_.begin() + lp_);
  std::vector<uint64_t> t_stack(stk_.begin() + s0.sp, stk_.begin() + sp_);
  if (t_locals != nt_locals || t_stack != nt_stack) {
    if (arm_depth_) throw detail::ArmAbort{"locals differ"};
    return fallback(true);
  }
  std::unordered_map<uint32_t, uint32_t> orig;  // word -> value before the if (from T's journal)
  std::unordered_map<uint32_t, uint32_t> orig_shadow;
  for (size_t k = s0.journal; k < journal_.size(); k++) {
    const JEntry& e = journal_[k];
    if (!orig.count(e.addr)) {
      orig[e.addr] = e.word;
      orig_shadow[e.addr] = e.shadow;
    }
  }
  auto nt_word = [&](uint32_t w) -> std::pair<uint32_t, uint32_t> {
    auto it = nt_final.find(w);
    if (it != nt_final.end()) return it->second;
    auto o = orig.find(w);
    if (o != orig.end()) return {o->second, orig_shadow[w]};
    return {load32(w * 4), shadow_[w]};
  };
  // elements written by either arm
  std::vector<uint32_t> elems(nt_elems);
  elems.insert(elems.end(), elem_log_.begin() + s0.elems, elem_log_.end());
  std::sort(elems.begin(), elems.end());
  elems.erase(std::unique(elems.begin(), elems.end()), elems.end());
  std::unordered_map<uint32_t, bool> covered;
  struct Merge {
    uint32_t addr;
    Val t, n;
  };
  std::vector<Merge> merges;
  for (uint32_t a : elems) {
    uint32_t w0 = a >> 2;
    for (uint32_t k = 0; k < ELEM / 4; k++) {
      if (covered.count(w0 + k)) {  // overlapping element writes: not a plain field store
        if (arm_depth_) throw detail::ArmAbort{"overlap"};
        return fallback(true);
      }
    }
    Val tv, nv;
    try {
      tv = read_elem(a);
    } catch (const Unsupported&) {
      if (arm_depth_) throw detail::ArmAbort{"mixed element"};
      return fallback(true);
    }
    // the other arm's element, from its final words
    uint32_t nid = nt_word(w0).second;
    bool ok = !(nid & LIMB);
    uint8_t buf[ELEM];
    for (uint32_t k = 0; k < ELEM / 4; k++) {
      auto [wv, ws] = nt_word(w0 + k);
      if (ws != nid) ok = false;
      std::memcpy(buf + 4 * k, &wv, 4);
    }
    if (!ok) {
      if (arm_depth_) throw detail::ArmAbort{"mixed element"};
      return fallback(true);
    }
    nv = Val{nid, decode(buf, a)};
    for (uint32_t k = 0; k < ELEM / 4; k++) covered[w0 + k] = true;
    merges.push_back({a, tv, nv});
  }
  // every other word either arm wrote must end the same in both
  auto check_word = [&](uint32_t w) {
    if (covered.count(w)) return true;
    auto n = nt_word(w);
    return n.first == load32(w * 4) && n.second == shadow_[w];
  };
  for (auto& [w, _] : nt_final)
    if (!check_word(w)) {
      if (arm_depth_) throw detail::ArmAbort{"memory differs"};
      return fallback(true);
    }
  for (size_t k = s0.journal; k < journal_.size(); k++)
    if (!check_word(journal_[k].addr)) {
      if (arm_depth_) throw detail::ArmAbort{"memory differs"};
      return fallback(true);
    }
  for (auto& mg : merges) {
    bool same = mg.t.id == mg.n.id && (mg.t.id || mg.t.v == mg.n.v);
    if (same) continue;
    Val then_v = cond ? mg.t : mg.n, else_v = cond ? mg.n : mg.t;
    // select(isTrue(v) ? x : y): the then arm runs when isTrue(v) == then_when_true
    uint32_t on_true = then_when_true ? id_of(then_v) : id_of(else_v);
    uint32_t on_false = then_when_true ? id_of(else_v) : id_of(then_v);
    write_elem(mg.addr, Val{node(T_SELECT, pd.id, on_true, on_false), mg.t.v});
  }
  converted_++;
  return end;
}

}  // namespace snarkd::witness
