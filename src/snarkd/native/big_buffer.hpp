// Large buffers of a proof (domain vectors, the QAP step's limb arrays, the MSM's digit table) from one
// allocator. Nearly every page of a one-shot proof's ~50 MB peak is fresh, a kernel-zeroed page faulted in
// once: ~13,000 minor faults of 4 KiB each at SHA-256 2^17 (bench/cpu-notes.md round 32). Unless [cpu]
// huge_pages = "off" (set_huge_pages), a buffer of BIG_MIN to BIG_MAX bytes is mapped on its own at a 2 MiB-
// aligned address and advised MADV_HUGEPAGE: where transparent huge pages are "madvise" (the common default)
// only advised ranges get them, and one fault then maps 2 MiB. The mapping is the size rounded to 4 KiB
// only, so the tail past the last whole 2 MiB stays in small pages: the resident size does not grow.
// Smaller and larger buffers, all of them with the setting off, and any mapping that fails or cannot be
// advised come from operator new as before. (A freed mapping kept for the next buffer that fits it was tried:
// no CPU measured, a higher peak: bench/cpu-notes.md round 32.)
//
// Fresh mappings read as zero; a buffer from operator new does not: callers that need zeros ask
// (big_alloc's zero) and pay for a clear only where the memory is not a fresh mapping.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace snarkd {

constexpr size_t HUGE_PAGE = size_t(2) << 20;
constexpr size_t BIG_MIN = HUGE_PAGE;  // below one huge page the advice could not apply
// Above this, the heap as before: with the advice, chain 2^20 proofs (32 MiB domain vectors, a 120 MiB QAP
// block) measured 2.4% more CPU (kernel time 0.26 -> 0.54 s: clearing huge pages cost more than the faults it
// saved), where SHA-256 2^17 (4-15 MiB buffers) measured 3-5% less (bench/cpu-notes.md round 32)
constexpr size_t BIG_MAX = size_t(16) << 20;
constexpr size_t BIG_ALIGN = 64;       // the alignment every buffer has, mapped or not (AVX-512 loads)

// [cpu] huge_pages: true = big buffers mapped and advised MADV_HUGEPAGE (auto), false = all from the heap as
// before (off), for a host whose THP defrag setting would compact memory synchronously inside an advised fault.
inline std::atomic<bool> g_huge_pages{true};

// How a buffer was obtained (big_free needs it).
enum class BigKind : uint8_t { none, heap, huge };  // huge: mapped on its own and advised

// The mapping's bookkeeping: where it starts and its length (for munmap), or the heap pointer.
struct BigBlock {
  void* p = nullptr;
  size_t bytes = 0;
  BigKind kind = BigKind::none;
};

inline size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// `bytes` of memory, BIG_ALIGN-aligned (2 MiB-aligned when mapped), uninitialised unless zero.
// Throws std::bad_alloc as operator new does.
inline BigBlock big_alloc(size_t bytes, bool zero = false) {
  BigBlock b;
  if (bytes == 0) return b;
#if defined(__linux__)
  // Mapped only with the advice: a mapping of 4 KiB pages of its own measured slower than the heap, whose
  // freed memory glibc hands out again (SHA-256 2^17 proofs 325.2 against 316.5 ms CPU, cpu-notes round 32)
  if (bytes >= BIG_MIN && bytes <= BIG_MAX && g_huge_pages.load(std::memory_order_relaxed)) {
    const size_t len = round_up(bytes, 4096);
    // one huge page more than needed, so that a 2 MiB boundary falls inside; the rest unmapped again
    const size_t span = len + HUGE_PAGE;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      const uintptr_t s = (uintptr_t)raw, a = round_up(s, HUGE_PAGE);
      if (a > s) munmap(raw, a - s);
      if (s + span > a + len) munmap((void*)(a + len), s + span - (a + len));
      if (madvise((void*)a, len, MADV_HUGEPAGE) == 0) {
        b.p = (void*)a;
        b.bytes = len;
        b.kind = BigKind::huge;
        return b;  // fresh anonymous pages read as zero
      }
      munmap((void*)a, len);  // no transparent huge pages in this kernel: the heap, as without the advice
    }
  }
#endif
  b.p = ::operator new(bytes, std::align_val_t(BIG_ALIGN));
  b.bytes = bytes;
  b.kind = BigKind::heap;
  if (zero) std::memset(b.p, 0, bytes);
  return b;
}

inline void big_free(BigBlock& b) noexcept {
  switch (b.kind) {
#if defined(__linux__)
    case BigKind::huge: munmap(b.p, b.bytes); break;
#endif
    case BigKind::heap: ::operator delete(b.p, std::align_val_t(BIG_ALIGN)); break;
    default: break;
  }
  b = BigBlock{};
}

// An owned array of n T (trivial types: field elements, words, digits) in a big_alloc block.
template <class T>
class BigArray {
 public:
  BigArray() = default;
  explicit BigArray(size_t n, bool zero = false) : blk_(big_alloc(n * sizeof(T), zero)), n_(n) {}
  ~BigArray() { big_free(blk_); }
  BigArray(BigArray&& o) noexcept : blk_(std::exchange(o.blk_, BigBlock{})), n_(std::exchange(o.n_, 0)) {}
  BigArray& operator=(BigArray&& o) noexcept {
    if (this != &o) {
      big_free(blk_);
      blk_ = std::exchange(o.blk_, BigBlock{});
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;

  T* get() const { return static_cast<T*>(blk_.p); }
  T* data() const { return get(); }
  T& operator[](size_t i) const { return get()[i]; }
  size_t size() const { return n_; }
  explicit operator bool() const { return blk_.p != nullptr; }
  BigKind kind() const { return blk_.kind; }
  // a new array of n (the old one freed first, so its memory can go back before the new one is touched)
  void reset(size_t n = 0, bool zero = false) {
    big_free(blk_);
    n_ = 0;
    if (n) blk_ = big_alloc(n * sizeof(T), zero), n_ = n;
  }

 private:
  BigBlock blk_;
  size_t n_ = 0;
};

}  // namespace snarkd
