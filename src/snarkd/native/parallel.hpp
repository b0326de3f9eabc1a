// Minimal fork-join helpers on std::thread (threads spawned per call; the
// calling thread does a share of the work). threads <= 0 -> hardware_concurrency.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>
#include <exception>
#include <chrono>
#include <functional>
#include <mutex>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace snarkd {

inline unsigned hardware_threads() {
  unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}
inline unsigned resolve_threads(long t) {
  if (t <= 0) return hardware_threads();
  return (unsigned)std::min<long>(t, 1024);
}

// Where the threads of a parallel region idle (bench/phase_cpu.py; _core._parallel_stats), off unless
// switched on. Per region each thread's CPU time, so that a share that finished early shows as the
// busiest share's time minus its own, whatever else runs on the machine (wall time would count waiting
// for a core too). Dynamically scheduled tasks (parallel_tasks) are measured per task and their idle
// time taken from the same greedy order replayed on T idle cores: under load the live schedule itself
// shifts tasks to the thread that happens to run.
struct ParallelStats {
  std::atomic<bool> on{false};
  std::atomic<long long> regions{0}, busy_ns{0}, caller_ns{0}, idle_ns{0};
  void add(const std::vector<long long>& ns, long long idle, long long caller) {
    long long sum = 0;
    for (long long v : ns) sum += v;
    regions++;
    busy_ns += sum;
    caller_ns += caller;
    idle_ns += idle;
  }
};
inline ParallelStats& parallel_stats() { static ParallelStats s; return s; }
inline long long thread_cpu_ns() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#else
  return 0;  // no per-thread CPU clock: the counters stay at zero
#endif
}

// The threads of one region, type-erased: job(ctx, tid) for tid in [0, T), tid 0 on the caller. One copy of
// the spawning and of the counting for all regions (templated per region, the counting path alone made
// _core 1.3 MB larger and a proof's peak RSS ~1 MiB higher: its pages are mapped with the code around them).
using RegionJob = void (*)(void*, unsigned);
inline void spawn_join(unsigned T, RegionJob job, void* ctx) {
  std::vector<std::thread> ts;
  ts.reserve(T - 1);
  for (unsigned t = 1; t < T; t++) ts.emplace_back([job, ctx, t] { job(ctx, t); });
  job(ctx, 0u);
  for (auto& th : ts) th.join();
}
inline void run_counted(unsigned T, RegionJob job, void* ctx, bool count) {
  ParallelStats& st = parallel_stats();
  if (!count || !st.on.load(std::memory_order_relaxed)) return spawn_join(T, job, ctx);
  struct Timed { RegionJob job; void* ctx; std::vector<long long> ns; } tm{job, ctx, std::vector<long long>(T, 0)};
  spawn_join(T, [](void* c, unsigned t) {  // the same run, each share's CPU time taken
    Timed& m = *static_cast<Timed*>(c);
    const long long t0 = thread_cpu_ns();
    m.job(m.ctx, t);
    m.ns[t] = thread_cpu_ns() - t0;
  }, &tm);
  long long mx = 0, sum = 0;
  for (long long v : tm.ns) { mx = std::max(mx, v); sum += v; }
  st.add(tm.ns, (long long)T * mx - sum, tm.ns[0]);
}

// Run f(tid) for tid in [0, T) on T threads (tid 0 on the caller); count: into the counters when they are on.
template <class Fn>
inline void run_threads(unsigned T, Fn&& f, bool count = true) {
  if (T <= 1) { f(0u); return; }
  using F = std::remove_reference_t<Fn>;
  run_counted(T, [](void* c, unsigned t) { (*static_cast<F*>(c))(t); }, (void*)&f, count);
}

// Split [0, n) into contiguous ranges, f(begin, end, tid). Uses at most
// ceil(n / min_chunk) threads.
template <class Fn>
inline void parallel_for(size_t n, unsigned T, Fn&& f, size_t min_chunk = 1) {
  if (n == 0) return;
  size_t maxT = (n + min_chunk - 1) / std::max<size_t>(min_chunk, 1);
  unsigned TT = (unsigned)std::max<size_t>(1, std::min<size_t>(T, maxT));
  run_threads(TT, [&](unsigned t) {
    size_t b = n * t / TT, e = n * (t + 1) / TT;
    if (b < e) f(b, e, t);
  });
}

// The smallest i in [0, n) with bad(i), or n: each thread scans a contiguous range and stops at its first
// hit or once a lower hit is known, so that a check over all entries ends where the serial one would
template <class Pred>
inline size_t first_index(size_t n, unsigned T, Pred&& bad, size_t min_chunk = 4096) {
  std::atomic<size_t> first{n};
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    for (size_t i = b; i < e; i++) {
      if ((i & 1023) == 0 && first.load(std::memory_order_relaxed) < b) return;
      if (bad(i)) {
        size_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {}
        return;
      }
    }
  }, min_chunk);
  return first.load();
}

// Per task CPU time of ntasks tasks task(ctx, i, tid) scheduled as parallel_tasks does, and the idle time of
// the same greedy order replayed on TT idle cores (see ParallelStats), once for all task types
using TaskJob = void (*)(void*, size_t, unsigned);
inline void tasks_counted(size_t ntasks, unsigned TT, TaskJob task, void* ctx) {
  std::atomic<size_t> next{0};
  std::vector<long long> ns(ntasks, 0);
  long long caller = 0;  // the calling thread's tasks
  run_threads(TT, [&](unsigned t) {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= ntasks) break;
      const long long t0 = thread_cpu_ns();
      task(ctx, i, t);
      ns[i] = thread_cpu_ns() - t0;
      if (t == 0) caller += ns[i];
    }
  }, false);
  std::vector<long long> free_at(TT, 0);
  for (long long v : ns) *std::min_element(free_at.begin(), free_at.end()) += v;
  long long mx = *std::max_element(free_at.begin(), free_at.end()), sum = 0;
  for (long long v : free_at) sum += v;
  parallel_stats().add(ns, (long long)TT * mx - sum, caller);
}

// Dynamic scheduling of ntasks independent tasks: f(task, tid).
template <class Fn>
inline void parallel_tasks(size_t ntasks, unsigned T, Fn&& f) {
  if (ntasks == 0) return;
  unsigned TT = (unsigned)std::min<size_t>(T, ntasks);
  if (TT > 1 && parallel_stats().on.load(std::memory_order_relaxed)) {
    using F = std::remove_reference_t<Fn>;
    return tasks_counted(ntasks, TT, [](void* c, size_t i, unsigned t) { (*static_cast<F*>(c))(i, t); }, (void*)&f);
  }
  std::atomic<size_t> next{0};
  run_threads(TT, [&](unsigned t) {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= ntasks) break;
      f(i, t);
    }
  });
}

// Independent tasks run beside the caller's own work (prover/cpu.py: a proof's witness MSMs beside its QAP
// step and H MSM). One helper thread claims them in order below the caller's priority (Linux SCHED_IDLE: it
// gets a core only where no other thread wants it; a real-time caller's helper one priority lower), so they fill the time the caller's regions leave a core idle (a share
// that ended early, a serial step between regions) without taking a core from them. finish() lifts the
// helper to normal priority and claims what is left on the calling thread, so the tail runs on both. Each
// task runs whole on one thread: nothing is cut or done twice. Where the helper's priority cannot be
// lowered it runs at normal priority (one thread more than the cores: the scheduler shares them).
class BesideTasks {
 public:
  using Task = std::function<void(size_t)>;
  BesideTasks(size_t ntasks, Task task) : task_(std::move(task)), ns_(ntasks, 0) {
#if defined(__linux__) && defined(SCHED_IDLE)
    policy_ = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;  // the caller's: the helper goes below it, and back to it at finish()
    sched_getparam(0, &param_);
#endif
    if (ntasks) helper_ = std::thread([this] { helper(); });
  }
  BesideTasks(const BesideTasks&) = delete;
  BesideTasks& operator=(const BesideTasks&) = delete;
  ~BesideTasks() {
    stop_ = true;  // an unfinished batch (the caller's work failed): no new tasks, the running one ends
    join_helper();
  }

  // Claims the tasks not started yet on this thread and waits for the helper; rethrows a task's exception
  void finish() {
    lift();
    loop();
    join_helper();
    if (error_) std::rethrow_exception(error_);
  }
  // Wall time of each task (ns), and which ran on the helper
  const std::vector<long long>& task_ns() const { return ns_; }
  size_t helper_tasks() const { return helper_count_; }

 private:
  void helper() {
#if defined(__linux__) && defined(SCHED_IDLE)
    {
      std::lock_guard<std::mutex> l(m_);
      tid_ = (long)syscall(SYS_gettid);
      // below the caller: SCHED_IDLE under a normal caller; one real-time priority lower under a real-time one
      // (SCHED_IDLE there would leave the helper to whatever else runs on the machine)
      const bool rt = (policy_ == SCHED_FIFO || policy_ == SCHED_RR) && param_.sched_priority > 1;
      sched_param p{};
      if (rt) p.sched_priority = param_.sched_priority - 1;
      if (!lifted_) idle_ = sched_setscheduler(0, rt ? policy_ : SCHED_IDLE, &p) == 0;  // 0: this thread
    }
#endif
    helper_count_ = loop();
  }
  // Back to the caller's priority for the tail (the caller has no work of its own left to protect)
  void lift() {
    std::lock_guard<std::mutex> l(m_);
    lifted_ = true;
#if defined(__linux__) && defined(SCHED_IDLE)
    if (idle_) {
      sched_setscheduler((pid_t)tid_, policy_, &param_);  // EPERM without CAP_SYS_NICE: it stays below
      idle_ = false;
    }
#endif
  }
  size_t loop() {
    size_t done = 0;
    for (;;) {
      if (stop_.load(std::memory_order_relaxed)) break;
      size_t i = next_.fetch_add(1);
      if (i >= ns_.size()) break;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        task_(i);
      } catch (...) {
        std::lock_guard<std::mutex> l(m_);
        if (!error_) error_ = std::current_exception();
        stop_ = true;
      }
      ns_[i] = (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
                   .count();
      done++;
    }
    return done;
  }
  void join_helper() {
    if (helper_.joinable()) helper_.join();
  }

  Task task_;
  std::vector<long long> ns_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::thread helper_;
  std::mutex m_;
  std::exception_ptr error_;
  long tid_ = 0;
  bool idle_ = false, lifted_ = false;  // idle_: the helper's priority lowered (and not yet lifted)
#if defined(__linux__) && defined(SCHED_IDLE)
  int policy_ = SCHED_OTHER;
  sched_param param_{};
#endif
  size_t helper_count_ = 0;
};

}  // namespace snarkd
