// snarkd.native._mapguard: read-only file mappings that a file truncated under them cannot crash the process with.
//
// A file that shrinks under its memory map makes every read of a page past its new end raise SIGBUS, and
// SIGBUS kills the process: the read happens in numpy, the native core or the CUDA driver, where Python cannot
// catch anything. The daemon keeps its keys (and their prepared sidecars) mapped for as long as they are loaded,
// and the key directories are the operator's: `cp new.zkey key.zkey` truncates the file in place.
//
// So every mapping made here is registered in a fixed table, and one process-wide SIGBUS handler, for a fault
// inside a registered mapping, maps anonymous zero pages over the rest of that mapping (MAP_FIXED, from the
// faulting page on) and counts the fault; the faulting read restarts and reads zeros. A fault anywhere else goes
// to the disposition that was there before (by default the process dies, exactly as without this module).
// Whoever owns the mapping then asks `changed()` (the file's size and mtime now, against those at mapping time,
// and the fault count) and fails the work that read it: the file broke, not the process.
//
// Why not the alternatives: a private copy of every key doubles its memory (keys run to many GiB) and its
// load time; a file lease (F_SETLEASE) needs the daemon to own the key file and only delays the writer by the
// lease-break time; a check before each use leaves the window while the key is read. A guard around each
// native reader would miss the numpy and CUDA-driver reads. This handler covers every reader of the mapping.
#include <pybind11/pybind11.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace py = pybind11;

namespace {

constexpr int SLOTS = 8192;  // mappings guarded at once (keys, sidecars, and whatever files a command maps)

struct Region {
  std::atomic<int> used{0};
  std::atomic<uintptr_t> start{0}, end{0};
  std::atomic<uint64_t> faults{0};
};

Region regions[SLOTS];
struct sigaction previous;
std::once_flag installed;
uintptr_t page_mask = ~uintptr_t(4095);

void pass_on(int sig, siginfo_t* si, void* ctx) {
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) return previous.sa_sigaction(sig, si, ctx);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    return previous.sa_handler(sig);
  }
  // default (or ignored, which a fault cannot be): as if we were never here. A real fault repeats when the
  // handler returns and is then fatal; a signal sent with kill() is raised again.
  sigaction(SIGBUS, &previous, nullptr);
  if (si == nullptr || si->si_code <= 0) raise(sig);
}

void on_sigbus(int sig, siginfo_t* si, void* ctx) {
  int saved = errno;
  if (si != nullptr && si->si_code > 0) {  // a fault (BUS_ADRERR ...), not a signal someone sent
    uintptr_t a = (uintptr_t)si->si_addr;
    for (Region& r : regions) {
      if (!r.used.load(std::memory_order_acquire)) continue;
      uintptr_t s = r.start.load(std::memory_order_acquire), e = r.end.load(std::memory_order_acquire);
      if (s == 0 || a < s || a >= e) continue;
      uintptr_t from = a & page_mask;
      void* p = mmap((void*)from, e - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (p != MAP_FAILED) {
        r.faults.fetch_add(1, std::memory_order_relaxed);
        errno = saved;
        return;
      }
      break;  // cannot repair it: fall through to what would have happened anyway
    }
  }
  pass_on(sig, si, ctx);
  errno = saved;
}

void install() {
  std::call_once(installed, [] {
    page_mask = ~uintptr_t(sysconf(_SC_PAGESIZE) - 1);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous) != 0) throw std::runtime_error("cannot install the SIGBUS handler");
  });
}

int claim(uintptr_t start, uintptr_t end) {
  for (int i = 0; i < SLOTS; ++i) {
    int expect = 0;
    if (regions[i].used.compare_exchange_strong(expect, 1, std::memory_order_acq_rel)) {
      regions[i].faults.store(0, std::memory_order_relaxed);
      regions[i].start.store(start, std::memory_order_release);
      regions[i].end.store(end, std::memory_order_release);
      return i;
    }
  }
  return -1;  // table full: the mapping works, unguarded (guarded() says so)
}

void unclaim(int i) {
  if (i < 0) return;
  regions[i].start.store(0, std::memory_order_release);
  regions[i].end.store(0, std::memory_order_release);
  regions[i].used.store(0, std::memory_order_release);
}

class Mapping {
 public:
  explicit Mapping(int fd) {
    install();
    struct stat st;
    if (fstat(fd, &st) != 0) throw std::runtime_error(std::string("fstat: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw py::value_error("not a regular file");
    if (st.st_size <= 0) throw py::value_error("cannot map an empty file");
    size_ = (size_t)st.st_size;
    size0_ = st.st_size;
    mtime0_ = st.st_mtim;
    void* p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    addr_ = (uint8_t*)p;
    fd_ = fcntl(fd, F_DUPFD_CLOEXEC, 0);  // kept to fstat the mapped file itself (not whatever its path names now)
    slot_ = claim((uintptr_t)addr_, (uintptr_t)addr_ + size_);
  }
  ~Mapping() {
    unclaim(slot_);  // before munmap: the handler must never repair an address that is no longer ours
    munmap(addr_, size_);
    if (fd_ >= 0) close(fd_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  uint8_t* data() const { return addr_; }
  size_t size() const { return size_; }
  bool guarded() const { return slot_ >= 0; }
  uint64_t faults() const { return slot_ >= 0 ? regions[slot_].faults.load(std::memory_order_relaxed) : 0; }

  // "" while the file is as it was mapped; else what happened to it, for an error message.
  std::string changed() const {
    uint64_t f = faults();
    struct stat st;
    if (fd_ < 0 || fstat(fd_, &st) != 0) return f ? "read past its end (it shrank while in use)" : "";
    std::string why;
    if (st.st_size < size0_)
      why = "truncated from " + std::to_string(size0_) + " to " + std::to_string(st.st_size) + " bytes";
    else if (st.st_size != size0_)
      why = "size changed from " + std::to_string(size0_) + " to " + std::to_string(st.st_size) + " bytes";
    else if (st.st_mtim.tv_sec != mtime0_.tv_sec || st.st_mtim.tv_nsec != mtime0_.tv_nsec)
      why = "rewritten in place (same size, new modification time)";
    if (f) why += std::string(why.empty() ? "" : "; ") + "reads past its end returned zeros (" + std::to_string(f) +
                  " SIGBUS caught)";
    return why;
  }

 private:
  uint8_t* addr_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
  int slot_ = -1;
  off_t size0_ = 0;
  struct timespec mtime0_ {};
};

}  // namespace

PYBIND11_MODULE(_mapguard, mod) {
  mod.doc() = "Read-only file mappings guarded against SIGBUS (a file truncated under its mapping)";
  py::class_<Mapping>(mod, "Mapping", py::buffer_protocol(),
                      "The whole regular file open at `fd`, mapped read-only (a buffer; the fd may be closed after). "
                      "Unmapped when the last buffer taken from it is released.")
      .def(py::init<int>(), py::arg("fd"))
      .def_buffer([](Mapping& m) -> py::buffer_info {
        return py::buffer_info(m.data(), 1, py::format_descriptor<uint8_t>::format(), 1, {(py::ssize_t)m.size()},
                               {(py::ssize_t)1}, /*readonly=*/true);
      })
      .def("__len__", &Mapping::size)
      .def_property_readonly("guarded", &Mapping::guarded, "False when the guard table was full (unguarded)")
      .def("faults", &Mapping::faults, "SIGBUS faults repaired in this mapping (reads past a shrunk file's end)")
      .def("changed", &Mapping::changed,
           "'' while the file is as mapped; else how it changed (truncated, resized, rewritten, faulted)");
}
