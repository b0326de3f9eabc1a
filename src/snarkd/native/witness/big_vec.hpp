// Large buffers of a program build, and fewer page faults for them.
//
// Building the program of a 2^20 circuit allocated ~0.9 GB in large buffers (the wasm's linear memory and
// its shadow, the trace, the lowered program, the path, the compiler's per-value tables) and freed most of
// them again: every fresh 4 KiB page is a fault, and on this VM a fault costs ~4 us (0.7 s of a 2 s build
// was the kernel's). Three remedies, all here:
//   - Big<T> (a std::vector) takes its large blocks (>= 2 MiB) from mappings; inside a BigScope (one
//     build) a freed block is kept and handed to the next request it fits, already faulted in;
//   - PodVec<T> grows by mremap: a growing trace or program keeps its pages (no copy, no new faults for
//     what it held);
//   - ZeroedPodVec<T> (the wasm's memory and its shadow) starts as a fresh mapping, zero by the kernel's
//     word: pages the circuit never touches are never faulted in (no memset of the whole); freed, its
//     pages serve the compiler's tables (the build frees the recorder before it compiles).
// Transparent huge pages (madvise) were tried for these blocks and were slower on this VM: the kernel's
// clearing of fresh 2 MiB pages cost more than the faults they saved. What is written densely takes them
// (advise_huge_pages): a loaded program's code, a witness block, the control-flow run's memory (record.hpp).
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace snarkd::witness {

inline constexpr size_t BIG_BLOCK = size_t(2) << 20;

// Asks for transparent huge pages over the whole 2 MiB pages inside [p, p + bytes) (a mapping of 2 MiB or more starts
// on one: map_fresh). For a program's code, written once at its load: a SHA-256 program's 10 MB of instructions loaded
// in 5.4 ms instead of 6.9 (2,450 faults of 4 KiB fewer; bench on this VM, where a fault costs ~1 us). Not for the
// build's blocks (above).
inline void advise_huge_pages(void* p, size_t bytes) {
  constexpr uintptr_t HUGE = uintptr_t(2) << 20;
  if (bytes < HUGE) return;
  const uintptr_t lo = (uintptr_t(p) + HUGE - 1) & ~(HUGE - 1), hi = (uintptr_t(p) + bytes) & ~(HUGE - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice: failure changes nothing
}

namespace detail {
inline size_t map_len(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }

// A fresh mapping; one of 2 MiB or more starts on a 2 MiB boundary (mapped 2 MiB longer, the ends cut off), so that
// advise_huge_pages covers all of its whole 2 MiB pages (unaligned, a 6 MiB block held two, not three, and the RSA
// verifier's 2.3 MiB shadow none: its one-shot run faulted ~1,370 pages of 4 KiB, aligned ~720).
inline void* map_fresh(size_t len) {
  constexpr size_t HUGE = size_t(2) << 20;
  const size_t over = len >= HUGE ? HUGE : 0;
  if (len > size_t(-1) - over) throw std::bad_alloc();
  void* p = mmap(nullptr, len + over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!over) return p;
  char* const base = static_cast<char*>(p);
  char* const at = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(base) + HUGE - 1) & ~uintptr_t(HUGE - 1));
  if (at > base) munmap(base, size_t(at - base));
  if (base + over > at) munmap(at + len, size_t(base + over - at));
  return at;
}

// Freed mappings kept for reuse while a build runs (BigScope), per thread: each build runs on one thread.
struct BlockCache {
  struct Block {
    void* p;
    size_t len;
  };
  std::vector<Block> blocks;
  size_t bytes = 0;
  int depth = 0;
  static constexpr size_t MAX_BYTES = size_t(1) << 30;

  void* take(size_t len) {  // the head of the smallest kept block that fits; its tail stays kept
    size_t best = blocks.size();
    for (size_t i = 0; i < blocks.size(); i++)
      if (blocks[i].len >= len && (best == blocks.size() || blocks[i].len < blocks[best].len)) best = i;
    if (best == blocks.size()) return nullptr;
    Block& b = blocks[best];
    void* p = b.p;
    if (b.len > len) {
      b.p = static_cast<char*>(b.p) + len;
      b.len -= len;
    } else {
      blocks.erase(blocks.begin() + long(best));
    }
    bytes -= len;
    return p;
  }
  void give(void* p, size_t len) {
    if (depth > 0 && bytes + len <= MAX_BYTES) {
      blocks.push_back({p, len});
      bytes += len;
    } else {
      munmap(p, len);
    }
  }
  void release() {
    for (auto& b : blocks) munmap(b.p, b.len);
    blocks.clear();
    bytes = 0;
  }
  ~BlockCache() { release(); }
};
inline BlockCache& block_cache() {
  static thread_local BlockCache c;
  return c;
}
}  // namespace detail

// One build: large blocks freed inside it are reused inside it, and unmapped when it ends.
struct BigScope {
  BigScope() { detail::block_cache().depth++; }
  ~BigScope() {
    auto& c = detail::block_cache();
    if (--c.depth == 0) c.release();
  }
  BigScope(const BigScope&) = delete;
  BigScope& operator=(const BigScope&) = delete;
};

// A block of at least `bytes` (contents unspecified), and its release.
inline void* big_alloc(size_t bytes) {
  if (bytes < BIG_BLOCK) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const size_t len = detail::map_len(bytes);
  if (void* p = detail::block_cache().take(len)) return p;
  return detail::map_fresh(len);
}
inline void big_free(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < BIG_BLOCK) {
    std::free(p);
    return;
  }
  detail::block_cache().give(p, detail::map_len(bytes));
}

template <class T>
struct BigAlloc {
  using value_type = T;
  BigAlloc() noexcept = default;
  template <class U>
  BigAlloc(const BigAlloc<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(big_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { big_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const BigAlloc<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const BigAlloc<U>&) const noexcept { return false; }
};

template <class T>
using Big = std::vector<T, BigAlloc<T>>;

// A vector of trivially copyable values that, once large (2 MiB), lives in one mapping and grows by mremap
// (never copied into a new block, its pages never faulted in twice); small, it is a malloc block (a loaded
// program's many small paths are not a mapping each). ZERO: new elements are zero without being written
// (always a mapping of fresh anonymous pages, never one from the block cache).
template <class T, bool ZERO = false>
class PodVecT {
  static_assert(std::is_trivially_copyable<T>::value, "PodVec holds plain values");

 public:
  using value_type = T;
  PodVecT() = default;
  PodVecT(std::initializer_list<T> init) {
    reserve(init.size());
    for (const T& v : init) push_back(v);
  }
  explicit PodVecT(size_t n) { resize(n); }
  PodVecT(size_t n, const T& v) { assign(n, v); }
  PodVecT(const PodVecT& o) {
    reserve(o.n_);
    if (o.n_) std::memcpy(p_, o.p_, o.n_ * sizeof(T));
    n_ = o.n_;
  }
  PodVecT(PodVecT&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_), high_(o.high_), mapped_(o.mapped_) {
    o.p_ = nullptr;
    o.n_ = o.cap_ = o.high_ = 0;
    o.mapped_ = false;
  }
  PodVecT& operator=(PodVecT o) noexcept {
    swap(o);
    return *this;
  }
  ~PodVecT() { unmap(); }
  void swap(PodVecT& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
    std::swap(high_, o.high_);
    std::swap(mapped_, o.mapped_);
  }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  size_t capacity() const { return cap_; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T& back() { return p_[n_ - 1]; }
  const T& back() const { return p_[n_ - 1]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }

  void push_back(const T& v) {
    if (n_ == cap_) {
      T copy = v;  // v may live in this vector
      grow(n_ + 1);
      p_[n_++] = copy;
    } else {
      p_[n_++] = v;
    }
    if (ZERO) high_ = std::max(high_, n_);
  }
  void pop_back() { n_--; }
  void reserve(size_t n) {
    if (n > cap_) remap(n);
  }
  // New elements are value-initialized (zero).
  void resize(size_t n) {
    if (n > cap_) grow(n);
    if (n > n_ && !(ZERO && n_ == high_)) std::memset(static_cast<void*>(p_ + n_), 0, (n - n_) * sizeof(T));
    set_size(n);
  }
  void resize(size_t n, const T& v) {
    if (n > cap_) grow(n);
    for (size_t i = n_; i < n; i++) p_[i] = v;
    set_size(n);
  }
  void assign(size_t n, const T& v) {
    n_ = 0;
    resize(n, v);
  }
  void clear() { n_ = 0; }
  // The first n elements (n <= capacity) were written through data(): they are the contents now.
  void assume_filled(size_t n) {
    if (n > cap_) throw std::length_error("PodVec::assume_filled past the capacity");
    set_size(n);
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
  size_t high_ = 0;  // ZERO: elements past this were never written (still the kernel's zero pages)
  bool mapped_ = false;  // p_ is a mapping (else a malloc block or null)

  void set_size(size_t n) {
    n_ = n;
    if (ZERO) high_ = std::max(high_, n);
  }
  void grow(size_t need) { remap(std::max(need, cap_ ? cap_ + cap_ / 2 : size_t(1024))); }
  static size_t bytes_of(size_t cap) { return detail::map_len(std::max<size_t>(cap * sizeof(T), 1)); }
  void remap(size_t cap) {
    if (cap > size_t(-1) / (2 * sizeof(T))) throw std::bad_alloc();
    if (!ZERO && cap * sizeof(T) < BIG_BLOCK) {  // small: a malloc block (growth only: never was a mapping)
      void* q = std::realloc(p_, cap * sizeof(T));
      if (!q) throw std::bad_alloc();
      p_ = static_cast<T*>(q);
      cap_ = cap;
      return;
    }
    const size_t len = bytes_of(cap);
    void* q;
    if (mapped_) {
      q = mremap(p_, mapped_len(), len, MREMAP_MAYMOVE);
      if (q == MAP_FAILED) throw std::bad_alloc();
    } else {
      q = ZERO ? detail::map_fresh(len) : big_alloc(len);
      if (p_) {  // outgrew its malloc block
        std::memcpy(q, p_, n_ * sizeof(T));
        std::free(p_);
      }
    }
    p_ = static_cast<T*>(q);
    cap_ = len / sizeof(T);
    mapped_ = true;
  }
  size_t mapped_len() const { return bytes_of(cap_); }
  void unmap() {
    if (!p_) return;
    if (!mapped_) std::free(p_);
    else if (ZERO) detail::block_cache().give(p_, mapped_len());  // reused as plain memory, never as zeroed
    else big_free(p_, mapped_len());
    p_ = nullptr;
    n_ = cap_ = high_ = 0;
    mapped_ = false;
  }
};

template <class T>
using PodVec = PodVecT<T, false>;
template <class T>
using ZeroedPodVec = PodVecT<T, true>;

}  // namespace snarkd::witness
