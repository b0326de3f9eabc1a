// Driver of the round-26 prototype: circom's witness protocol (witness_calculator.js) on the compiled module.
// harness INPUTS.bin OUT.wtns [RUNS [INPUTS2.bin OUT2.wtns ...]]: INPUTS.bin from run.py (u32 count, then per
// value u32 hMSB, hLSB, index and the field's n32 words); each run instantiates fresh memory, sets the inputs,
// computes every witness and copies it out; prints each run's CPU and wall ms (CLOCK_PROCESS_CPUTIME_ID /
// CLOCK_MONOTONIC) and writes the last run's witness as snarkjs's .wtns. Further pairs: one run each, after.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "runtime.hpp"

static bool quiet = false;  // (the shared library prints nothing)

int32_t exp_getFieldNumLen32();
int32_t exp_getWitnessSize();
int32_t exp_getSharedRWMemoryStart();
void exp_writeSharedRWMemory(int32_t, int32_t);
int32_t exp_readSharedRWMemory(int32_t);
void exp_init(int32_t);
void exp_setInputSignal(int32_t, int32_t, int32_t);
void exp_getWitness(int32_t);
void exp_getRawPrime();

static double ms(clockid_t c) {
  timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int one(const char* inp, const char* outp, int runs);
#ifndef WC_SHARED
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int rc = one(argv[1], argv[2], argc > 3 ? std::atoi(argv[3]) : 1);
  for (int k = 4; !rc && k + 1 < argc; k += 2) rc = one(argv[k], argv[k + 1], 1);
  return rc;
}
#else
static const bool quiet_init = (quiet = true);
#endif
static int compute(const std::vector<uint32_t>& in, const char* outp, int runs);
static int one(const char* inp, const char* outp, int runs) {
  FILE* f = std::fopen(inp, "rb");
  if (!f) return 2;
  std::vector<uint32_t> in;
  uint32_t w;
  while (std::fread(&w, 4, 1, f) == 1) in.push_back(w);
  std::fclose(f);
  return compute(in, outp, runs);
}
// For a shared-library build (-DWC_SHARED): one witness from encoded inputs (run.py's encoding) into OUT.wtns
extern "C" int wc_compute(const uint32_t* in, size_t n_words, const char* outp) {
  return compute(std::vector<uint32_t>(in, in + n_words), outp, 1);
}
static int compute(const std::vector<uint32_t>& in, const char* outp, int runs) {
  std::vector<uint32_t> wit;
  uint32_t n32 = 0, nw = 0;
  std::vector<uint32_t> prime;
  try {
    for (int run = 0; run < runs; run++) {
      double c0 = ms(CLOCK_PROCESS_CPUTIME_ID), w0 = ms(CLOCK_MONOTONIC);
      rt::instantiate();
      n32 = uint32_t(exp_getFieldNumLen32());
      exp_getRawPrime();
      prime.resize(n32);
      for (uint32_t j = 0; j < n32; j++) prime[j] = uint32_t(exp_readSharedRWMemory(j));
      nw = uint32_t(exp_getWitnessSize());
      exp_init(0);
      size_t p = 1;
      for (uint32_t k = 0; k < in[0]; k++) {
        uint32_t h = in[p], l = in[p + 1], idx = in[p + 2];
        for (uint32_t j = 0; j < n32; j++) exp_writeSharedRWMemory(j, int32_t(in[p + 3 + j]));
        exp_setInputSignal(int32_t(h), int32_t(l), int32_t(idx));
        p += 3 + n32;
      }
      wit.resize(size_t(nw) * n32);
      const uint32_t shared = uint32_t(exp_getSharedRWMemoryStart());
      for (uint32_t i = 0; i < nw; i++) {
        exp_getWitness(int32_t(i));
        if (n32 == 8)  // (a constant size: an inline copy, not a call of memcpy per witness)
          std::memcpy(&wit[size_t(i) * 8], rt::M + shared, 32);
        else
          std::memcpy(&wit[size_t(i) * n32], rt::M + shared, 4 * n32);
      }
      double c1 = ms(CLOCK_PROCESS_CPUTIME_ID), w1 = ms(CLOCK_MONOTONIC);
      if (!quiet) std::printf("run %d cpu_ms %.3f wall_ms %.3f\n", run, c1 - c0, w1 - w0);
    }
  } catch (const rt::Trap& t) {
    std::fprintf(stderr, "trap: %s (code %d) %s\n", t.what.c_str(), t.code, rt::err_str.c_str());
    return 1;
  }
  double c0 = ms(CLOCK_PROCESS_CPUTIME_ID);
  FILE* o = std::fopen(outp, "wb");
  const uint32_t n8 = 4 * n32;
  std::vector<uint32_t> hdr = {0, 2, 2, 1};
  std::memcpy(&hdr[0], "wtns", 4);
  uint64_t len1 = 8 + n8, len2 = uint64_t(n8) * nw;
  std::fwrite(hdr.data(), 4, hdr.size(), o);
  std::fwrite(&len1, 8, 1, o);
  std::fwrite(&n8, 4, 1, o);
  std::fwrite(prime.data(), 4, n32, o);
  std::fwrite(&nw, 4, 1, o);
  uint32_t two = 2;
  std::fwrite(&two, 4, 1, o);
  std::fwrite(&len2, 8, 1, o);
  std::fwrite(wit.data(), 4, wit.size(), o);
  std::fclose(o);
  if (!quiet) std::printf("write_ms %.3f\n", ms(CLOCK_PROCESS_CPUTIME_ID) - c0);
  return 0;
}
