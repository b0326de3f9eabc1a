// Minimal fork-join helpers on std::thread (threads spawned per call; the
// calling thread does a share of the work). threads <= 0 -> hardware_concurrency.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>
#include <exception>

namespace snarkd {

inline unsigned hardware_threads() {
  unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}
inline unsigned resolve_threads(long t) {
  if (t <= 0) return hardware_threads();
  return (unsigned)std::min<long>(t, 1024);
}

// Run f(tid) for tid in [0, T) on T threads (tid 0 on the caller).
template <class Fn>
inline void run_threads(unsigned T, Fn&& f) {
  if (T <= 1) { f(0u); return; }
  std::vector<std::thread> ts;
  ts.reserve(T - 1);
  for (unsigned t = 1; t < T; t++) ts.emplace_back([&f, t] { f(t); });
  f(0u);
  for (auto& th : ts) th.join();
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

// Dynamic scheduling of ntasks independent tasks: f(task, tid).
template <class Fn>
inline void parallel_tasks(size_t ntasks, unsigned T, Fn&& f) {
  if (ntasks == 0) return;
  std::atomic<size_t> next{0};
  unsigned TT = (unsigned)std::min<size_t>(T, ntasks);
  run_threads(TT, [&](unsigned t) {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= ntasks) break;
      f(i, t);
    }
  });
}

}  // namespace snarkd
