// The gate between a native module's computations and its process-wide path switches: the
// BMI2/ADX products (ff/mont.hpp g_use_adx), the AVX-512 IFMA kernels (ff/simd52.hpp
// g_use_simd52), the 4-lane AVX2 adders (ff/simd29.hpp g_use_simd29, g_use_simd29_bls; msm/bucket_simd29.hpp G2's) and the MSM's split
// modes, forced window and mixed widths (msm/plan.hpp, pippenger.hpp).
//
// The hot code reads those switches as plain values where it dispatches: once per product
// for ADX, once per MSM, NTT or stage for the others. Passing them down as parameters would
// mean a template argument on every field operation; instead a switch changes only while
// no computation of the module runs:
//   - every call that computes with the GIL released holds the gate shared for its whole
//     length (enter/leave; py_path_gate.hpp's Computing releases the GIL first, then enters);
//   - a switch is changed with the gate closed (close: it waits for the running calls and
//     keeps new ones out, a waiting switch going before new calls) AND the GIL held, which
//     keeps out the small calls that compute with the GIL held.
// So one call sees one setting from its start to its end (one MSM never mixes paths), the
// reads are ordered after the write by the gate's mutex (no data race), and the loops pay
// nothing. Each extension module has its own switches (an inline variable per shared
// object) and so its own gate; _core's and _witness's are changed (py_path_gate.hpp: Computing,
// switch_paths).
#pragma once
#include <condition_variable>
#include <mutex>

namespace snarkd {

class PathGate {
 public:
  // A computation starts: waits while a switch is closing or closed. Nested entries of one
  // thread (a call's callback into Python calling the module again) pass straight through:
  // a waiting switch would otherwise wait for this thread, and this thread for it.
  void enter() {
    if (depth_++) return;
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !closed_; });
    ++running_;
  }
  void leave() {
    if (--depth_) return;
    release();
  }
  // A computation that outlives the call that started it (a batch whose tasks run on a helper thread and on
  // whichever thread finishes it: parallel.hpp BesideTasks), counted as running from acquire() to release(),
  // whichever threads do them. A thread already inside (a proof's hold_paths) is let in even while a switch
  // waits: the switch waits for that thread anyway, so the batch must not wait for the switch.
  void acquire() {
    std::unique_lock<std::mutex> l(m_);
    if (!depth_) cv_.wait(l, [&] { return !closed_; });
    ++running_;
  }
  void release() {
    std::lock_guard<std::mutex> l(m_);
    if (--running_ == 0) cv_.notify_all();
  }
  // Whether this thread is inside a computation (a switch from there would wait for itself).
  static bool held_here() { return depth_ > 0; }
  // For a switch: waits for any other switch, keeps new computations out, then waits for the
  // running ones to end. open() lets them in again.
  void close() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !closed_; });
    closed_ = true;
    cv_.wait(l, [&] { return running_ == 0; });
  }
  void open() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = false;
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned running_ = 0;
  bool closed_ = false;
  static inline thread_local unsigned depth_ = 0;
};

// This module's gate.
inline PathGate& path_gate() {
  static PathGate g;
  return g;
}

}  // namespace snarkd
