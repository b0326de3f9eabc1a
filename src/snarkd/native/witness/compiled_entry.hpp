// The entry of a compiled witness program (snarkd.witness.compiled): included at the end of the generated C++,
// after the module's functions and its exports (exp_*). circom's witness protocol (witness_calculator.js) on the
// compiled module: a fresh memory, init, every input value through the shared RW memory and setInputSignal, then
// getWitness per signal, each value copied out. Built with -fvisibility=hidden: only the functions below are seen
// from outside (two circuits' libraries in one process never share the runtime's state).
//
// Not reentrant (the module's state is global): the caller runs one computation at a time per library.
#pragma once
#include <pthread.h>

#include <cstdint>
#include <cstring>
#include <string>

int32_t exp_getFieldNumLen32();
int32_t exp_getWitnessSize();
int32_t exp_getSharedRWMemoryStart();
void exp_writeSharedRWMemory(int32_t, int32_t);
int32_t exp_readSharedRWMemory(int32_t);
void exp_init(int32_t);
void exp_setInputSignal(int32_t, int32_t, int32_t);
void exp_getWitness(int32_t);
void exp_getRawPrime();

namespace rt {
constexpr int ENTRY_ABI = 2;  // 2: snarkd_wc_run's flags (huge pages), snarkd_wc_memory (round 29)
constexpr size_t STACK_BYTES = size_t(256) << 20;  // the computation's own thread: lazily committed
constexpr size_t STACK_MARGIN = size_t(32) << 20;  // left for the deepest frame and the field functions below it

struct Job {
  // in: per input signal, u32 hash MSB, u32 hash LSB, u32 count, then count values of 8 u32 words (plain, little
  // endian)
  const uint32_t* in;
  uint64_t n_words;
  uint8_t* out;  // witness_size * 32 bytes
  uint64_t witness_size;
  uint32_t max_pages;
  int64_t fuel;
  int32_t sanity;
  bool huge_pages;
  // out
  int status = 0;  // 0 ok, 1 a trap (message, code)
  int code = -1;   // circom's exception code, -1 for another trap
  std::string message;
};

inline void compute(Job& j) {
  instantiate(j.huge_pages);
  reset_globals();
  err_str.clear(), msg_str.clear(), log_str.clear();
  const uint32_t n32 = uint32_t(exp_getFieldNumLen32());
  if (n32 != 8) trap("the module's field is not the one this program was built for");
  exp_getRawPrime();
  for (uint32_t k = 0; k < 8; k++) {
    const uint64_t limb = P::MOD[k / 2];
    if (uint32_t(exp_readSharedRWMemory(int32_t(k))) != uint32_t(k % 2 ? limb >> 32 : limb))
      trap("the module's prime is not the one this program was built for");
  }
  if (uint64_t(uint32_t(exp_getWitnessSize())) != j.witness_size) trap("the module's witness size disagrees");
  exp_init(j.sanity);
  uint64_t p = 0;
  while (p < j.n_words) {
    if (j.n_words - p < 3) trap("malformed inputs");
    const uint32_t h = j.in[p], l = j.in[p + 1], n = j.in[p + 2];
    p += 3;
    if ((j.n_words - p) / 8 < n) trap("malformed inputs");
    for (uint32_t i = 0; i < n; i++, p += 8) {
      for (uint32_t w = 0; w < 8; w++) exp_writeSharedRWMemory(int32_t(w), int32_t(j.in[p + w]));
      exp_setInputSignal(int32_t(h), int32_t(l), int32_t(i));
    }
  }
  const uint32_t shared = uint32_t(exp_getSharedRWMemoryStart());
  for (uint64_t i = 0; i < j.witness_size; i++) {
    exp_getWitness(int32_t(i));
    chk(shared, 32);
    std::memcpy(j.out + 32 * i, M + shared, 32);
  }
}

inline void* run_thread(void* arg) {
  Job& j = *static_cast<Job*>(arg);
  stack_limit = uintptr_t(__builtin_frame_address(0)) - (STACK_BYTES - STACK_MARGIN);
  max_pages = j.max_pages;
  fuel = j.fuel > 0 ? j.fuel : INT64_MAX;
  try {
    compute(j);
  } catch (const Trap& t) {
    j.status = 1;
    j.code = t.code;
    j.message = t.code ? err_str : t.what;
    if (j.message.empty()) j.message = t.what;
  } catch (const std::bad_alloc&) {
    j.status = 1;
    j.message = "out of memory";
  } catch (...) {
    j.status = 1;
    j.message = "an unexpected error in the compiled program";
  }
  release();  // kept for the next run (a daemon keeps the library loaded), past KEEP given back
  return nullptr;
}
inline std::string last_message, last_logs;
}  // namespace rt

#define SNARKD_WC_EXPORT extern "C" __attribute__((visibility("default")))
// The ABI (Python checks it before any call) and the runtime's version (the library file is bound to it too).
SNARKD_WC_EXPORT int snarkd_wc_abi() { return rt::ENTRY_ABI * 1000 + rt::RUNTIME_VERSION; }
// One witness: 0 ok (out filled), 1 a trap (snarkd_wc_message, *code: circom's exception code or -1), 2 the
// computation's thread could not be started.
// flags: bit 0, transparent huge pages advised for the linear memory ([cpu] huge_pages).
SNARKD_WC_EXPORT int snarkd_wc_run(const uint32_t* in, uint64_t n_words, uint8_t* out, uint64_t witness_size,
                                   uint64_t max_memory, int64_t fuel, int32_t sanity, uint32_t flags, int32_t* code) {
  rt::Job j;
  j.in = in, j.n_words = n_words, j.out = out, j.witness_size = witness_size, j.fuel = fuel, j.sanity = sanity;
  j.huge_pages = flags & 1;
  const uint64_t pages = max_memory ? max_memory / 65536 : 65536;
  j.max_pages = uint32_t(pages > 65536 ? 65536 : pages);
  pthread_attr_t attr;
  pthread_t th;
  if (pthread_attr_init(&attr)) return 2;
  pthread_attr_setstacksize(&attr, rt::STACK_BYTES);
  const int rc = pthread_create(&th, &attr, rt::run_thread, &j);
  pthread_attr_destroy(&attr);
  if (rc) return 2;
  pthread_join(th, nullptr);
  rt::last_message = j.message;
  rt::last_logs = rt::log_str + rt::msg_str;  // complete lines, then an unfinished one (render_log prints it too)
  rt::log_str.clear(), rt::msg_str.clear();
  *code = j.code;
  return j.status;
}
// The linear memory kept between runs (tests, diagnostics): its address (0 before the first run), the bytes the next
// run zeroes, whether the reservation has MADV_HUGEPAGE.
SNARKD_WC_EXPORT void snarkd_wc_memory(uint64_t* base, uint64_t* dirty, int32_t* huge_pages) {
  *base = uint64_t(uintptr_t(rt::M)), *dirty = rt::dirty, *huge_pages = rt::advised;
}
SNARKD_WC_EXPORT const char* snarkd_wc_message() { return rt::last_message.c_str(); }
// log()'s output of the last run: lines ended by "\n", the last one perhaps unfinished
SNARKD_WC_EXPORT const char* snarkd_wc_logs() { return rt::last_logs.c_str(); }
SNARKD_WC_EXPORT uint64_t snarkd_wc_logs_size() { return rt::last_logs.size(); }
