// A bench driver of the compiled witness program (the product's code: snarkd.witness.compiled's translation and
// native/witness/compiled_{runtime,entry}.hpp), as an executable, for in-process CPU timings without Python.
// Built as one translation unit with the generated C++ (run.py: -DGEN="path/gen.cpp").
// harness INPUTS.bin OUT.wtns [RUNS [INPUTS2.bin OUT2.wtns ...]]: INPUTS.bin from run.py (the entry's encoding:
// per input signal its hash halves, its value count, the values); each run is one snarkd_wc_run (a fresh memory,
// inputs, every witness value); prints each run's CPU and wall ms and writes the last run's witness as a .wtns.
#include GEN
#include <cstdio>
#include <ctime>
#include <vector>

static double ms(clockid_t c) {
  timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int one(const char* inp, const char* outp, int runs) {
  FILE* f = std::fopen(inp, "rb");
  if (!f) return 2;
  std::vector<uint32_t> in;
  uint32_t w;
  while (std::fread(&w, 4, 1, f) == 1) in.push_back(w);
  std::fclose(f);
  rt::instantiate(true);
  const uint64_t nw = uint32_t(exp_getWitnessSize());
  rt::release();
  std::vector<uint8_t> wit(nw * 32);
  for (int run = 0; run < runs; run++) {
    double c0 = ms(CLOCK_PROCESS_CPUTIME_ID), w0 = ms(CLOCK_MONOTONIC);
    int32_t code = -1;
    if (snarkd_wc_run(in.data(), in.size(), wit.data(), nw, 0, 0, 0, 1 /* huge pages, as the product's default */, &code)) {
      std::fprintf(stderr, "trap: %s (code %d)\n", snarkd_wc_message(), code);
      return 1;
    }
    double c1 = ms(CLOCK_PROCESS_CPUTIME_ID), w1 = ms(CLOCK_MONOTONIC);
    std::printf("run %d cpu_ms %.3f wall_ms %.3f\n", run, c1 - c0, w1 - w0);
  }
  FILE* o = std::fopen(outp, "wb");
  if (!o) return 2;
  const uint32_t n8 = 32;
  uint32_t hdr[4] = {0, 2, 2, 1};
  std::memcpy(&hdr[0], "wtns", 4);
  uint64_t len1 = 8 + n8, len2 = uint64_t(n8) * nw;
  std::fwrite(hdr, 4, 4, o);
  std::fwrite(&len1, 8, 1, o);
  std::fwrite(&n8, 4, 1, o);
  uint64_t prime[4] = {rt::P::MOD[0], rt::P::MOD[1], rt::P::MOD[2], rt::P::MOD[3]};
  std::fwrite(prime, 8, 4, o);
  uint32_t nw32 = uint32_t(nw), two = 2;
  std::fwrite(&nw32, 4, 1, o);
  std::fwrite(&two, 4, 1, o);
  std::fwrite(&len2, 8, 1, o);
  std::fwrite(wit.data(), 1, wit.size(), o);
  std::fclose(o);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int rc = one(argv[1], argv[2], argc > 3 ? std::atoi(argv[3]) : 1);
  for (int k = 4; !rc && k + 1 < argc; k += 2) rc = one(argv[k], argv[k + 1], 1);
  return rc;
}
