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
#include <time.h>

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

}  // namespace snarkd
