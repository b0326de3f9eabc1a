// snarkd.native._witness: native witness generation from a circom circuit's .wasm.
//
//   inspect(wasm)                 the module's facts (field, sizes, input signals)
//   record(wasm, inputs, ...)     run the wasm in our interpreter (witness/record.hpp), returning
//                                 the witness and the compiled path of what it computed
//   run(wasm, inputs, ...)        the control-flow run: the wasm's own control flow natively, nothing
//                                 traced or kept (a value-dependent circuit's requests no path fits)
//   Program                       the paths of one circuit: evaluate (replay), add_path,
//                                 serialize / load
//   CompiledLib                   a compiled witness library (snarkd.witness.compiled), loaded from bytes
//                                 Python has checked (a memfd, dlopen'd here: no ctypes on the CLI's path)
//   set_huge_pages(on)            [cpu] huge_pages for those libraries' linear memories
// Everything heavy runs with the GIL released. Python (snarkd/witness/native.py) owns files,
// inputs and fallbacks.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.hpp"
#include "curves/bls12_381.hpp"
#include "curves/bn254.hpp"
#include "py_buffer.hpp"
#include "py_path_gate.hpp"
#include "witness/program.hpp"
#include "witness/record.hpp"
#include "witness/wasm_module.hpp"

namespace py = pybind11;
using namespace snarkd;
using namespace snarkd::witness;

namespace {

enum Curve : int { BN254 = 0, BLS12_381 = 1 };

template <class P>
bool prime_is(const std::vector<uint32_t>& w) {
  if (w.size() != 2 * P::N) return false;
  for (size_t i = 0; i < P::N; i++)
    if ((uint64_t(w[2 * i]) | (uint64_t(w[2 * i + 1]) << 32)) != P::MOD[i]) return false;
  return true;
}

py::int_ limbs_to_int(const uint32_t* w, size_t n) {
  py::int_ r(0);
  for (size_t i = n; i-- > 0;) r = py::int_(py::reinterpret_steal<py::object>(
      PyNumber_Or(PyNumber_Lshift(r.ptr(), py::int_(32).ptr()), py::int_(w[i]).ptr())));
  return r;
}

// The wasm bytes and their parsed module, kept together (the module points into the bytes).
struct Wasm {
  // The caller's bytes object, kept rather than copied (bodies and data segments point into it; immutable): a copy
  // was the size of the .wasm in fresh pages, ~220 page faults of a one-shot `snarkd witness` on the RSA verifier.
  // Released with the Python object, under the GIL.
  py::bytes bytes;
  std::unique_ptr<Module> module;
  explicit Wasm(py::bytes b) : bytes(std::move(b)) {
    try {
      module = std::make_unique<Module>((const uint8_t*)PyBytes_AS_STRING(bytes.ptr()), size_t(PyBytes_GET_SIZE(bytes.ptr())));
      fuse_field_calls(*module);  // before any Recorder reads it
    } catch (const WasmError& e) {
      throw Unsupported(e.what());
    } catch (const std::bad_alloc&) {
      throw Unsupported("out of memory parsing the module");
    }
  }
};

// Facts every caller needs first: which field, the sizes, the input signal table.
py::dict inspect(const Wasm& w) {
  // The prime decides the field; a Recorder for BN254 reads it (any P would do for the facts).
  Recorder<bn254::FrP> r(*w.module, RecordLimits{}, false);
  std::vector<uint32_t> prime = r.raw_prime();
  py::dict d;
  d["version"] = r.version();
  d["minor"] = r.minor_version();
  d["patch"] = r.patch_version();
  d["n32"] = r.n32();
  d["prime"] = limbs_to_int(prime.data(), prime.size());
  d["witness_size"] = r.witness_size();
  d["input_size"] = r.input_size();
  d["curve"] = prime_is<bn254::FrP>(prime) ? py::object(py::str("bn128"))
               : prime_is<bls12_381::FrP>(prime) ? py::object(py::str("bls12381"))
                                                  : py::object(py::none());
  py::list sigs;
  const auto table = r.input_signals();
  if (!d["curve"].is_none()) r.check_input_signals(table);
  for (auto& s : table) sigs.append(py::make_tuple(s.hash, s.pos, s.size));
  d["signals"] = sigs;
  return d;
}

struct AnyPath {
  int curve;
  std::shared_ptr<void> path;
  uint64_t nodes, live_ins, regs, guards, consts;
};

// A witness computed natively, handed to Python in the block the run wrote it to: (W, 4) little-endian u64 plain
// limbs, read-only, as the bytes object it replaces. Copying it into a vector and then into bytes cost a one-shot
// `snarkd witness` two fresh blocks of the witness's size (the RSA verifier's 6 MB: ~3,000 page faults and two copies,
// ~10 ms of its ~150 ms CPU; a process that runs many keeps malloc's blocks, so in process it hardly showed).
struct WitnessBytes {
  std::shared_ptr<void> owner;  // the Big<Mont<P>> holding the values (freed with the last Python reference)
  const char* data = nullptr;
  size_t bytes = 0;
};

template <class F>
WitnessBytes witness_bytes(Big<F>&& values) {
  static_assert(sizeof(F) == 32 && std::is_standard_layout<F>::value, "a value is 4 u64 limbs, as .wtns stores it");
  auto keep = std::make_shared<Big<F>>(std::move(values));
  return {keep, reinterpret_cast<const char*>(keep->data()), keep->size() * sizeof(F)};
}

struct RecordResult {
  bool ok = false;
  std::string error_kind, message;
  int code = 0;
  py::object witness = py::none();  // WitnessBytes: (W, 4) uint64 plain limbs
  py::list logs;
  std::shared_ptr<AnyPath> path;
  std::vector<std::pair<std::string, uint64_t>> stats;  // filled without the GIL
};

std::string decimal(const uint64_t* limbs) {
  uint64_t v[4] = {limbs[0], limbs[1], limbs[2], limbs[3]};
  std::string s;
  for (;;) {
    bool zero = !(v[0] | v[1] | v[2] | v[3]);
    if (zero) break;
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; i--) {
      unsigned __int128 cur = (rem << 64) | v[i];
      v[i] = uint64_t(cur / 10);
      rem = cur % 10;
    }
    s.push_back(char('0' + int(rem)));
  }
  if (s.empty()) s = "0";
  return std::string(s.rbegin(), s.rend());
}

// The recorded path replayed on the request's own inputs must give the witness the recording computed (cw_plain,
// converted to plain in its own block, which then goes to Python as it is); the logs of this run come from that replay.
template <class P>
void check_replay(const Big<Mont<P>>& cw_plain, const Path<Mont<P>>& path,
                  const std::vector<std::pair<uint64_t, std::vector<Mont<P>>>>& inputs,
                  const std::vector<typename Recorder<P>::InputSignal>& table, uint32_t input_base, uint32_t n_inputs,
                  RecordResult& out, std::vector<std::pair<bool, std::string>>& logs) {
  using F = Mont<P>;
  std::vector<F> frame(cw_plain.size() + path.n_regs);
  std::vector<uint64_t> in_plain(size_t(n_inputs) * 4, 0);
  for (auto& [hash, vals] : inputs) {
    for (auto& s : table) {
      if (s.hash != hash) continue;
      for (uint32_t i = 0; i < vals.size() && i < s.size; i++) {
        uint32_t idx = s.pos + i - input_base;
        if (idx < n_inputs) {
          F n = vals[i].from_mont();
          std::memcpy(&in_plain[4 * size_t(idx)], n.v, 32);
        }
      }
    }
  }
  std::vector<LogEvent> ev;
  size_t at = 0;
  if (Replay<P>::run(path, frame.data(), in_plain.data(), n_inputs, &at, &ev) != REPLAY_OK) {
    out.error_kind = "unsupported";
    out.message = "internal: the recorded path does not replay its own inputs (instruction " + std::to_string(at) + ")";
    return;
  }
  for (size_t i = 0; i < cw_plain.size(); i++)
    if (std::memcmp(frame[i].v, cw_plain[i].v, 32) != 0) {
      out.error_kind = "unsupported";
      out.message = "internal: the recorded path gives another witness element " + std::to_string(i);
      return;
    }
  // the logs of this run, in order (values as the replay prints them)
  for (auto& e : ev) logs.emplace_back(e.is_value, e.is_value ? decimal(e.value.data()) : path.strings[e.str]);
}

template <class P>
void record_as(const Wasm& w, const std::vector<std::pair<uint64_t, std::vector<Mont<P>>>>& inputs,
               bool sanity, bool force, RecordLimits lim, uint32_t input_base, uint32_t n_inputs, int curve,
               RecordResult& out, WitnessBytes& wit, std::vector<std::pair<bool, std::string>>& logs) {
  using F = Mont<P>;
  BigScope scope;  // first in, last out: the build's large blocks are reused within it, unmapped after it
  const auto t0 = std::chrono::steady_clock::now();
  Trace<F> t;
  Big<F> cw;  // the concrete witness (not when force)
  std::vector<typename Recorder<P>::InputSignal> table;
  uint64_t steps = 0, converted = 0;
  try {
    Recorder<P> r(*w.module, lim, force);
    table = r.input_signals();
    r.record(sanity, inputs, table, input_base, n_inputs);
    t = r.take_trace();
    cw = r.take_concrete_witness();
    steps = r.steps();
    converted = r.converted_ifs();
  } catch (const CircuitFailure& e) {  // the recorder's memory and shadow go back to the block cache either way:
    out.error_kind = "circuit";        // the compiler's tables reuse their pages
    out.code = e.code;
    out.message = e.what();
    return;
  }
  const size_t trace_nodes = t.nodes.size();
  const auto t1 = std::chrono::steady_clock::now();
  auto path = Compiler<P>::compile(t, uint32_t(t.witness.size()));
  const auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return uint64_t(std::chrono::duration<double, std::milli>(b - a).count() + 0.5); };
  // A build from placeholder inputs (force) returns no witness and no logs, and its forced asserts may make
  // its own replay miss: nothing below would be read (a 2^20 chain: 32 MiB and ~0.1 s saved).
  if (!force) {
    for (F& v : cw) v = v.from_mont();  // the witness plain, in its own block (the .wtns form)
    check_replay<P>(cw, *path, inputs, table, input_base, n_inputs, out, logs);
  }
  if (!out.error_kind.empty()) return;
  if (!force) wit = witness_bytes(std::move(cw));
  auto ap = std::make_shared<AnyPath>();
  ap->curve = curve;
  ap->path = path;
  ap->nodes = trace_nodes;
  ap->live_ins = path->code.size();
  ap->regs = path->n_regs;
  ap->guards = path->n_guards;
  ap->consts = path->consts.size();
  out.path = ap;
  out.ok = true;
  out.stats = {{"steps", steps},
               {"trace_nodes", trace_nodes},
               {"instructions", path->code.size()},
               {"registers", path->n_regs},
               {"constants", path->consts.size()},
               {"guards", path->n_guards},
               {"converted_ifs", converted},
               {"record_ms", ms(t0, t1)},
               {"compile_ms", ms(t1, t2)}};
}

// The control-flow run: the wasm's own structured control flow (loops, branches, calls, addresses decided by this
// request's values) run by the native interpreter with circom's field functions on the native core; nothing is
// traced, so nothing is guarded and nothing is kept: one program (the module) for every input of a circuit whose
// course depends on its values. The witness is the run's concrete one (what a recording returns too), the logs
// those of this run, in order.
template <class P>
void run_as(const Wasm& w, const std::vector<std::pair<uint64_t, std::vector<Mont<P>>>>& inputs, bool sanity,
            RecordLimits lim, uint32_t input_base, uint32_t n_inputs, RecordResult& out, WitnessBytes& wit,
            std::vector<std::pair<bool, std::string>>& logs) {
  using F = Mont<P>;
  BigScope scope;
  const auto t0 = std::chrono::steady_clock::now();
  Trace<F> t;
  Big<F> cw;
  uint64_t steps = 0;
  try {
    Recorder<P, /*UNTRACED=*/true> r(*w.module, lim, false);
    const auto table = r.input_signals();
    r.record(sanity, inputs, table, input_base, n_inputs);
    t = r.take_trace();
    cw = r.take_concrete_witness();
    steps = r.steps();
  } catch (const CircuitFailure& e) {
    out.error_kind = "circuit";
    out.code = e.code;
    out.message = e.what();
    return;
  }
  wit = witness_bytes(std::move(cw));  // (the control-flow run's concrete witness is plain already)
  for (size_t k = 1; k < t.nodes.size(); k++) {
    const TNode& nd = t.nodes[k];
    if (nd.op == T_LOG_STR) {
      if (nd.a >= t.strings.size()) throw Unsupported("internal: log string");
      logs.emplace_back(false, t.strings[nd.a]);
    } else if (nd.op == T_LOG_VAL) {
      if (!(nd.a & CONST_BIT) || (nd.a & ~CONST_BIT) >= t.consts.size())
        throw Unsupported("internal: a traced value in the control-flow run");
      F n = t.consts[nd.a & ~CONST_BIT].from_mont();
      uint64_t l[4] = {0, 0, 0, 0};
      for (size_t j = 0; j < P::N && j < 4; j++) l[j] = n.v[j];
      logs.emplace_back(true, decimal(l));
    } else {
      throw Unsupported("internal: a trace node in the control-flow run");
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  out.ok = true;
  out.stats = {{"steps", steps},
               {"run_ms", uint64_t(std::chrono::duration<double, std::milli>(t1 - t0).count() + 0.5)}};
}

template <class P>
std::vector<std::pair<uint64_t, std::vector<Mont<P>>>> inputs_from(py::list inputs) {
  std::vector<std::pair<uint64_t, std::vector<Mont<P>>>> out;
  for (auto item : inputs) {
    auto tup = item.cast<py::tuple>();
    uint64_t hash = tup[0].cast<uint64_t>();
    Buf b(tup[1], "input values");
    size_t n = b.count(32, "4 uint64 limbs per value");
    std::vector<Mont<P>> vals(n);
    for (size_t i = 0; i < n; i++) {
      uint64_t l[4];
      std::memcpy(l, b.data() + 32 * i, 32);
      if (!Mont<P>::lt_mod(l)) throw py::value_error("input value not reduced modulo the prime");
      vals[i] = Mont<P>::from_limbs(l).to_mont();
    }
    out.emplace_back(hash, std::move(vals));
  }
  return out;
}

template <class P>
struct OnCurve {
  using Fr = P;
};

// The frame record() and run() share: the limits, the inputs read for the curve, the body run without the GIL,
// and every refusal (unsupported or invalid wasm, a bound missed: out of memory, `doing` says where) returned as
// kind "unsupported" with no path, never thrown: the process lives. give_witness: the witness and logs go back.
template <class Body>
RecordResult refusals_returned(int curve, py::list inputs, uint64_t max_memory, uint64_t max_steps, const char* doing,
                               bool give_witness, Body body) {
  RecordResult out;
  RecordLimits lim;
  if (max_memory) lim.max_memory = max_memory;
  if (max_steps) lim.max_steps = max_steps;
  WitnessBytes wit;
  std::vector<std::pair<bool, std::string>> logs;
  auto refuse = [&out](std::string message) {
    out.ok = false;
    out.path.reset();
    out.error_kind = "unsupported";
    out.message = std::move(message);
  };
  try {
    if (curve == BN254) {
      auto in = inputs_from<bn254::FrP>(inputs);
      Computing nogil;
      body(OnCurve<bn254::FrP>{}, in, lim, out, wit, logs);
    } else if (curve == BLS12_381) {
      auto in = inputs_from<bls12_381::FrP>(inputs);
      Computing nogil;
      body(OnCurve<bls12_381::FrP>{}, in, lim, out, wit, logs);
    } else {
      throw py::value_error("curve must be 0 (bn128) or 1 (bls12381)");
    }
  } catch (const Unsupported& e) {
    refuse(e.what());
  } catch (const WasmError& e) {
    refuse(e.what());
  } catch (const std::bad_alloc&) {  // a bound we missed: refused, the process lives
    refuse(std::string("out of memory ") + doing);
  } catch (const std::length_error& e) {
    refuse(std::string("out of memory ") + doing + " (" + e.what() + ")");
  }
  if (out.ok && give_witness) {
    out.witness = py::cast(std::move(wit));  // (W, 4) plain limbs, not copied
    for (auto& [is_val, text] : logs) out.logs.append(py::make_tuple(is_val, text));
  }
  return out;
}

RecordResult record(const Wasm& w, int curve, py::list inputs, bool sanity, bool force, uint64_t max_memory,
                    uint64_t max_steps, uint32_t input_base, uint32_t n_inputs) {
  return refusals_returned(curve, inputs, max_memory, max_steps, "while recording", !force,
                           [&](auto on, const auto& in, RecordLimits lim, RecordResult& out, auto& wit, auto& logs) {
                             using P = typename decltype(on)::Fr;
                             record_as<P>(w, in, sanity, force, lim, input_base, n_inputs, curve, out, wit, logs);
                           });
}

RecordResult run(const Wasm& w, int curve, py::list inputs, bool sanity, uint64_t max_memory, uint64_t max_steps,
                 uint32_t input_base, uint32_t n_inputs) {
  return refusals_returned(curve, inputs, max_memory, max_steps, "in the control-flow run", true,
                           [&](auto on, const auto& in, RecordLimits lim, RecordResult& out, auto& wit, auto& logs) {
                             using P = typename decltype(on)::Fr;
                             run_as<P>(w, in, sanity, lim, input_base, n_inputs, out, wit, logs);
                           });
}

// -- the program ------------------------------------------------------------------------------------

// Writes a program to a file descriptor through a buffer (its large arrays straight from memory), with the
// CRC-32C of what it wrote: a 2^20 circuit's 70 MB program goes from the path to the file, not through a
// bytes object first.
class FdWriter {
 public:
  explicit FdWriter(int fd) : fd_(fd) { buf_.reserve(BUF); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void raw(const void* p, size_t n) {
    if (buf_.size() + n > BUF) flush();
    if (n >= BUF) emit(static_cast<const uint8_t*>(p), n);
    else buf_.insert(buf_.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  }
  // flushes; the CRC-32C and the byte count of everything written
  std::pair<uint32_t, uint64_t> finish() {
    flush();
    return {crc_ ^ 0xffffffffu, written_};
  }

 private:
  static constexpr size_t BUF = size_t(1) << 20;
  int fd_;
  std::vector<uint8_t> buf_;
  uint32_t crc_ = 0xffffffffu;
  uint64_t written_ = 0;
  void flush() {
    emit(buf_.data(), buf_.size());
    buf_.clear();
  }
  void emit(const uint8_t* p, size_t n) {
    crc_ = crc32c_update(crc_, p, n);
    written_ += n;
    while (n) {
      ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) throw std::system_error(k < 0 ? errno : EIO, std::generic_category(), "writing the witness program");
      p += k;
      n -= size_t(k);
    }
  }
};

struct ProgramBase {
  virtual ~ProgramBase() = default;
};

template <class P>
struct ProgramT : ProgramBase {
  using F = Mont<P>;
  uint32_t witness_size, n_inputs;
  mutable std::mutex mu;
  std::shared_ptr<const std::vector<std::shared_ptr<Path<F>>>> paths =
      std::make_shared<std::vector<std::shared_ptr<Path<F>>>>();

  ProgramT(uint32_t w, uint32_t n) : witness_size(w), n_inputs(n) {}

  std::shared_ptr<const std::vector<std::shared_ptr<Path<F>>>> snapshot() const {
    std::lock_guard<std::mutex> g(mu);
    return paths;
  }
  void add(std::shared_ptr<Path<F>> p) {
    std::lock_guard<std::mutex> g(mu);
    auto next = std::make_shared<std::vector<std::shared_ptr<Path<F>>>>(*paths);
    next->push_back(std::move(p));
    paths = next;
  }
  // Drop path i (replays in flight keep their snapshot).
  void remove(size_t i) {
    std::lock_guard<std::mutex> g(mu);
    if (i >= paths->size()) throw py::index_error("no such path");
    auto next = std::make_shared<std::vector<std::shared_ptr<Path<F>>>>(*paths);
    next->erase(next->begin() + std::ptrdiff_t(i));
    paths = next;
  }
  static uint64_t bytes_of(const Path<F>& p) {  // its share of the program's bytes (serialize's)
    ByteWriter count;
    write_path(count, p);
    return count.size();
  }
  uint32_t frame_rows() const {
    uint32_t r = 0;
    for (auto& p : *snapshot()) r = std::max(r, p->n_regs);
    return witness_size + r;
  }
  // Returns (status, path index, instruction) and fills logs.
  std::tuple<int, int, size_t> evaluate(const uint64_t* inputs, F* frame, size_t frame_rows,
                                        std::vector<std::pair<bool, std::string>>* logs) const {
    auto snap = snapshot();
    // most used path first
    std::vector<size_t> order(snap->size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return (*snap)[a]->hits.load() > (*snap)[b]->hits.load(); });
    size_t at = 0;
    int last = REPLAY_MISS;
    for (size_t i : order) {
      const Path<F>& p = *(*snap)[i];
      if (witness_size + size_t(p.n_regs) > frame_rows) continue;
      std::vector<LogEvent> ev;
      int st = Replay<P>::run(p, frame, inputs, n_inputs, &at, logs ? &ev : nullptr);
      if (st == REPLAY_OK) {
        const_cast<Path<F>&>(p).hits.fetch_add(1);
        if (logs)
          for (auto& e : ev) logs->emplace_back(e.is_value, e.is_value ? decimal(e.value.data()) : p.strings[e.str]);
        return {REPLAY_OK, int(i), 0};
      }
      last = st;
      if (st == REPLAY_TRAP) return {REPLAY_TRAP, int(i), at};
    }
    return {last, -1, at};
  }
  template <class W>
  void write(W& w, const std::vector<std::shared_ptr<Path<F>>>& paths) const {
    w.u32(witness_size);
    w.u32(n_inputs);
    w.u32(uint32_t(paths.size()));
    for (auto& p : paths) write_path(w, *p);
  }
  py::bytes serialize() const {
    auto snap = snapshot();
    ByteWriter count;
    write(count, *snap);
    py::bytes out = py::reinterpret_steal<py::bytes>(PyBytes_FromStringAndSize(nullptr, Py_ssize_t(count.size())));
    if (!out) throw py::error_already_set();
    ByteWriter w(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.ptr())));
    {
      py::gil_scoped_release nogil;  // the bytes object is ours alone until it is returned
      write(w, *snap);
    }
    return out;
  }
  // keep: the indices of the paths to write (a value-dependent program's file keeps fewer than it holds), or all
  std::pair<uint32_t, uint64_t> write_to(int fd, const std::optional<std::vector<size_t>>& keep) const {
    auto snap = snapshot();
    std::vector<std::shared_ptr<Path<F>>> chosen;
    if (keep) {
      for (size_t i : *keep) {
        if (i >= snap->size()) throw py::index_error("no such path");
        chosen.push_back((*snap)[i]);
      }
    }
    py::gil_scoped_release nogil;
    FdWriter w(fd);
    write(w, keep ? chosen : *snap);
    return w.finish();
  }
  static std::unique_ptr<ProgramT> load(const uint8_t* data, size_t len) {
    ByteReader r(data, len);
    uint32_t ws = r.u32(), ni = r.u32(), np = r.u32();
    if (np > 4096) throw std::runtime_error("native witness program: implausible path count");
    auto prog = std::make_unique<ProgramT>(ws, ni);
    for (uint32_t i = 0; i < np; i++) prog->add(read_path<F>(r, ws, ni));
    if (!r.done()) throw std::runtime_error("native witness program: trailing bytes");
    return prog;
  }
};

struct Program {
  int curve;
  std::unique_ptr<ProgramBase> impl;
  template <class Fn>
  auto with(Fn&& fn) {
    if (curve == BN254) return fn(*static_cast<ProgramT<bn254::FrP>*>(impl.get()));
    return fn(*static_cast<ProgramT<bls12_381::FrP>*>(impl.get()));
  }
};

// [cpu] huge_pages for the compiled libraries' linear memories (set_huge_pages): passed to every run, which
// replaces a copy's kept reservation made with the other setting
std::atomic<bool> g_wc_huge_pages{true};

// A compiled witness library (compiled_entry.hpp's C functions), loaded from bytes the caller has checked (its
// tag and identity: snarkd/witness/compiled/__init__.py). The bytes go into an anonymous memory file that is
// dlopen'd: never a path a file could be swapped under. The descriptor stays open for the process's life (the
// loader knows a library by the name it was opened as, and a later library opened as the same /proc/self/fd/N, a
// number reused after a close, would be taken for this one), and the library is never unloaded (its thread-local
// and static state outlive any one Python object). Not reentrant: the caller runs one computation at a time per copy.
struct CompiledLib {
  using AbiFn = int (*)();
  using RunFn = int (*)(const uint32_t*, uint64_t, uint8_t*, uint64_t, uint64_t, int64_t, int32_t, uint32_t, int32_t*);
  using MemoryFn = void (*)(uint64_t*, uint64_t*, int32_t*);
  using TextFn = const char* (*)();
  using SizeFn = uint64_t (*)();
  int abi = 0;
  int fd = -1;  // the sealed memory file (kept open)
  RunFn run_fn = nullptr;
  TextFn message_fn = nullptr, logs_fn = nullptr;
  SizeFn logs_size_fn = nullptr;
  MemoryFn memory_fn = nullptr;

  explicit CompiledLib(py::object data) {
    Buf b(data, "library");
    const int fd = memfd_create("snarkd-witness.so", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) throw_os("memfd_create");
    for (size_t done = 0; done < b.len();) {
      const ssize_t n = ::write(fd, b.data() + done, b.len() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        errno = e ? e : EIO;
        throw_os("writing the library to its memory file");
      }
      done += size_t(n);
    }
    // sealed before it is loaded: the bytes the caller checked are the bytes mapped, for the process's life (a
    // private mapping of a file still shows later writes to pages it has not copied, and the memory file is
    // reachable as /proc/PID/fd/N by this user's other processes)
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
      const int e = errno;
      ::close(fd);
      errno = e;
      throw_os("sealing the library's memory file");
    }
    this->fd = fd;
    const std::string name = "/proc/self/fd/" + std::to_string(fd);
    void* h;
    {
      py::gil_scoped_release nogil;  // the loader maps and relocates ~1 MB: let other threads run
      h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
      const char* why = dlerror();
      ::close(fd);
      throw py::value_error(std::string("cannot be loaded (") + (why ? why : "dlopen failed") + ")");
    }
    auto abi_fn = (AbiFn)dlsym(h, "snarkd_wc_abi");
    run_fn = (RunFn)dlsym(h, "snarkd_wc_run");
    message_fn = (TextFn)dlsym(h, "snarkd_wc_message");
    logs_fn = (TextFn)dlsym(h, "snarkd_wc_logs");
    logs_size_fn = (SizeFn)dlsym(h, "snarkd_wc_logs_size");
    memory_fn = (MemoryFn)dlsym(h, "snarkd_wc_memory");
    // a library without them is not ours: left loaded (its constructors have run; unloading gains nothing), unused
    if (!abi_fn || !run_fn || !message_fn || !logs_fn || !logs_size_fn || !memory_fn)
      throw py::value_error("not a compiled witness library");
    abi = abi_fn();
  }

  [[noreturn]] static void throw_os(const char* what) {
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, what);
    throw py::error_already_set();
  }

  // inputs: [(fnv hash, plain little-endian values, 32 bytes each)], encoded here as the entry reads them (per
  // signal the hash's halves, the value count, the values as u32 words); out: a writable buffer of at least
  // witness_size * 32 bytes. (status 0 ok / 1 a trap / 2 no thread, message, circom's code or None, log text).
  py::tuple run(py::sequence inputs, py::object out, uint64_t witness_size, uint64_t max_memory, int64_t fuel,
                bool sanity) {
    Buf o(out, "out", true);
    if (witness_size > o.len() / 32) throw py::value_error("out: smaller than the witness");
    std::vector<uint32_t> words;
    for (py::handle item : inputs) {
      auto pair = py::reinterpret_borrow<py::sequence>(item);
      if (pair.size() != 2) throw py::value_error("inputs: (hash, values) pairs");
      const uint64_t h = pair[0].cast<uint64_t>();
      Buf v(pair[1], "input values");
      const size_t n = v.count(32, "8 u32 words per value");
      if (n > UINT32_MAX) throw py::value_error("inputs: too many values");
      const size_t at = words.size();
      words.resize(at + 3 + 8 * n);
      words[at] = uint32_t(h >> 32), words[at + 1] = uint32_t(h), words[at + 2] = uint32_t(n);
      std::memcpy(words.data() + at + 3, v.data(), 32 * n);
    }
    int32_t code = -1;
    int status;
    {
      py::gil_scoped_release nogil;
      const uint32_t flags = g_wc_huge_pages.load(std::memory_order_relaxed) ? 1 : 0;
      status = run_fn(words.data(), words.size(), o.wdata(), witness_size, max_memory, fuel, sanity ? 1 : 0, flags,
                      &code);
    }
    const char* m = message_fn();
    const uint64_t nlog = logs_size_fn();
    auto text = [](const char* p, size_t n) {
      return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(p ? p : "", p ? Py_ssize_t(n) : 0, "replace"));
    };
    return py::make_tuple(status, text(m, m ? std::strlen(m) : 0), code < 0 ? py::object(py::none()) : py::int_(code),
                          nlog ? text(logs_fn(), nlog) : py::str(""));
  }

  // (address, bytes the next run zeroes, huge pages advised) of the linear memory this copy keeps between runs
  py::tuple memory() const {
    uint64_t base = 0, dirty = 0;
    int32_t huge = 0;
    memory_fn(&base, &dirty, &huge);
    return py::make_tuple(base, dirty, bool(huge));
  }
};

Program make_program(int curve, uint32_t witness_size, uint32_t n_inputs) {
  Program p{curve, nullptr};
  if (curve == BN254) p.impl = std::make_unique<ProgramT<bn254::FrP>>(witness_size, n_inputs);
  else if (curve == BLS12_381) p.impl = std::make_unique<ProgramT<bls12_381::FrP>>(witness_size, n_inputs);
  else throw py::value_error("curve must be 0 (bn128) or 1 (bls12381)");
  return p;
}

}  // namespace

PYBIND11_MODULE(_witness, mod) {
  mod.doc() = "Native witness generation from circom's .wasm (record, compile, replay)";

  py::register_exception<Unsupported>(mod, "Unsupported");
  mod.attr("PROGRAM_FORMAT") = PROGRAM_FORMAT;
  // [cpu] ifma's switch for this module (snarkd.native.apply_ifma sets it with _core's): its own copy of
  // g_use_simd52, changed only while none of its computations runs (path_gate.hpp)
  mod.def("set_ifma", [](bool on) {
    return switch_paths([on] {
      bool prev = g_use_simd52;
      g_use_simd52 = on && detect_simd52();
      return prev;
    });
  }, py::arg("on"), "[cpu] ifma for native witnesses: the AVX-512 IFMA kernels where the CPU has them (True) or never; "
     "waits for running witness calls; returns the previous setting");
  mod.def("set_huge_pages", [](bool on) { return g_wc_huge_pages.exchange(on); }, py::arg("on"),
          "[cpu] huge_pages for compiled witness libraries: MADV_HUGEPAGE on their linear memories (True, the "
          "default) or no advice; read at each run's start; returns the previous setting");
  mod.def("huge_pages", [] { return g_wc_huge_pages.load(); }, "The compiled libraries' huge-pages setting");
  mod.def("uses_simd52", [] { return g_use_simd52; }, "True while native witnesses use the AVX-512 IFMA kernels");

  py::class_<Wasm>(mod, "Wasm")
      .def(py::init([](py::bytes b) { return std::make_unique<Wasm>(std::move(b)); }), py::arg("wasm"),
           "Parse a circom witness generator (.wasm bytes); raises Unsupported naming what is not supported.")
      .def("inspect", [](const Wasm& w) {
        try {
          return inspect(w);
        } catch (const CircuitFailure& e) {
          throw Unsupported(std::string("instantiating the module: ") + e.what());
        } catch (const WasmError& e) {
          throw Unsupported(e.what());
        } catch (const std::bad_alloc&) {
          throw Unsupported("out of memory instantiating the module");
        } catch (const std::length_error&) {
          throw Unsupported("out of memory instantiating the module");
        }
      }, "dict: version, n32, prime, witness_size, input_size, curve ('bn128'/'bls12381'/None), signals");

  py::class_<AnyPath, std::shared_ptr<AnyPath>>(mod, "Path")
      .def_readonly("curve", &AnyPath::curve)
      .def_readonly("instructions", &AnyPath::live_ins)
      .def_readonly("registers", &AnyPath::regs)
      .def_readonly("guards", &AnyPath::guards)
      .def_readonly("constants", &AnyPath::consts);

  py::class_<WitnessBytes>(mod, "WitnessBytes", py::buffer_protocol())
      .def_buffer([](WitnessBytes& w) {
        static const char empty = 0;  // a witness of no values still gives a valid pointer
        return py::buffer_info(const_cast<char*>(w.bytes ? w.data : &empty), 1, "B", 1, {Py_ssize_t(w.bytes)}, {1},
                               /*readonly=*/true);
      })
      .def("__len__", [](const WitnessBytes& w) { return w.bytes; });

  py::class_<RecordResult>(mod, "RecordResult")
      .def_readonly("ok", &RecordResult::ok)
      .def_readonly("error_kind", &RecordResult::error_kind)
      .def_readonly("message", &RecordResult::message)
      .def_readonly("code", &RecordResult::code)
      .def_readonly("witness", &RecordResult::witness)
      .def_readonly("logs", &RecordResult::logs)
      .def_readonly("path", &RecordResult::path)
      .def_property_readonly("stats", [](const RecordResult& r) {
        py::dict d;
        for (auto& [k, v] : r.stats) d[py::str(k)] = v;
        return d;
      });

  mod.def("record", &record, py::arg("wasm"), py::arg("curve"), py::arg("inputs"), py::arg("sanity_check") = false,
          py::arg("force_asserts") = false, py::arg("max_memory") = 0, py::arg("max_steps") = 0,
          py::arg("input_base") = 0, py::arg("n_inputs") = 0,
          "Run the wasm natively on these inputs [(hash, (k, 4) uint64 plain values)], recording a path.\n"
          "force_asserts: take every assert's passing arm (a build from placeholder inputs: no witness).");

  mod.def("run", &run, py::arg("wasm"), py::arg("curve"), py::arg("inputs"), py::arg("sanity_check") = false,
          py::arg("max_memory") = 0, py::arg("max_steps") = 0, py::arg("input_base") = 0, py::arg("n_inputs") = 0,
          "Run the wasm's own control flow natively on these inputs (no trace, no path): the witness and the logs.");
  py::class_<CompiledLib>(mod, "CompiledLib")
      .def(py::init([](py::object data) { return std::make_unique<CompiledLib>(std::move(data)); }), py::arg("data"),
           "Load a compiled witness library from its (checked) bytes through a memory file; ValueError if it\n"
           "cannot be loaded or is not one")
      .def_readonly("abi", &CompiledLib::abi, "The library's snarkd_wc_abi(): ENTRY_ABI * 1000 + RUNTIME_VERSION")
      .def_readonly("fd", &CompiledLib::fd, "The sealed memory file the library was loaded from (open for the process)")
      .def("memory", &CompiledLib::memory,
           "(address, dirty bytes, huge pages advised) of the linear memory kept between runs (address 0: none yet)")
      .def("run", &CompiledLib::run, py::arg("inputs"), py::arg("out"), py::arg("witness_size"),
           py::arg("max_memory") = 0, py::arg("fuel") = 0, py::arg("sanity") = false,
           "One witness into out (the GIL released): (status 0 ok / 1 trap / 2 no thread, message, code or None, "
           "logs)");
  py::class_<Program>(mod, "Program")
      .def(py::init(&make_program), py::arg("curve"), py::arg("witness_size"), py::arg("n_inputs"))
      .def_readonly("curve", &Program::curve)
      .def_property_readonly("frame_rows", [](Program& p) { return p.with([](auto& t) { return t.frame_rows(); }); })
      .def_property_readonly("n_paths", [](Program& p) { return p.with([](auto& t) { return t.snapshot()->size(); }); })
      .def_property_readonly("witness_size", [](Program& p) { return p.with([](auto& t) { return t.witness_size; }); })
      .def_property_readonly("n_inputs", [](Program& p) { return p.with([](auto& t) { return t.n_inputs; }); })
      .def("path_stats", [](Program& p) {
        return p.with([](auto& t) {
          py::list out;
          for (auto& path : *t.snapshot()) {
            py::dict d;
            d["instructions"] = path->code.size();
            d["registers"] = path->n_regs;
            d["guards"] = path->n_guards;
            d["constants"] = path->consts.size();
            d["hits"] = path->hits.load();
            d["bytes"] = t.bytes_of(*path);
            out.append(d);
          }
          return out;
        });
      })
      .def("remove_path", [](Program& p, size_t i) { p.with([&](auto& t) { t.remove(i); return 0; }); }, py::arg("index"),
           "Drop a path (the program-size rule in snarkd/witness/native.py)")
      .def("add_path", [](Program& p, std::shared_ptr<AnyPath> path) {
        if (!path || path->curve != p.curve) throw py::value_error("path of another field");
        p.with([&](auto& t) {
          using T = std::remove_reference_t<decltype(t)>;
          t.add(std::static_pointer_cast<Path<typename T::F>>(path->path));
          return 0;
        });
      })
      .def("evaluate",
           [](Program& p, py::object inputs, py::object frame, bool want_logs) {
             Buf in(inputs, "inputs");
             Buf fr(frame, "frame", true);
             size_t ni = in.count(32, "4 uint64 limbs per input");
             size_t rows = fr.count(32, "4 uint64 limbs per row");
             return p.with([&](auto& t) {
               using T = std::remove_reference_t<decltype(t)>;
               using F = typename T::F;
               if (ni != t.n_inputs) throw py::value_error("inputs: expected " + std::to_string(t.n_inputs) + " values");
               std::vector<std::pair<bool, std::string>> logs;
               std::tuple<int, int, size_t> r;
               {
                 Computing nogil;
                 r = t.evaluate((const uint64_t*)in.data(), (F*)fr.wdata(), rows, want_logs ? &logs : nullptr);
               }
               py::list lg;
               for (auto& [v, s] : logs) lg.append(py::make_tuple(v, s));
               return py::make_tuple(std::get<0>(r), std::get<1>(r), std::get<2>(r), lg);
             });
           },
           py::arg("inputs"), py::arg("frame"), py::arg("want_logs") = false,
           "Replay: inputs (n_inputs, 4) uint64 plain; frame (frame_rows, 4) uint64, its first witness_size rows\n"
           "receive the witness (plain). Returns (status 0 ok / 1 miss / 2 trap, path, instruction, logs).")
      .def("serialize", [](Program& p) { return p.with([](auto& t) { return t.serialize(); }); }, "The program's bytes")
      .def("write_to", [](Program& p, int fd, std::optional<std::vector<size_t>> keep) {
        try {
          return p.with([&](auto& t) { return t.write_to(fd, keep); });
        } catch (const std::system_error& e) {
          errno = e.code().value();
          PyErr_SetFromErrno(PyExc_OSError);
          throw py::error_already_set();
        }
      }, py::arg("fd"), py::arg("keep") = py::none(),
           "Write the program's bytes (serialize's) to a file descriptor at its position: (CRC-32C, bytes written);\n"
           "keep: only these paths (indices), in this order")
      .def_static("load", [](int curve, py::object data) {
        Buf b(data, "program");
        Program p{curve, nullptr};
        try {
          if (curve == BN254) p.impl = ProgramT<bn254::FrP>::load(b.data(), b.len());
          else if (curve == BLS12_381) p.impl = ProgramT<bls12_381::FrP>::load(b.data(), b.len());
          else throw py::value_error("curve must be 0 (bn128) or 1 (bls12381)");
        } catch (const std::runtime_error& e) {
          throw py::value_error(e.what());
        }
        return p;
      }, py::arg("curve"), py::arg("data"));
}
