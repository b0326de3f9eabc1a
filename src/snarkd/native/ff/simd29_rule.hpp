// The one place that decides, per CPU model, whether the AVX2 lanes (ff/simd29.hpp's product,
// msm/bucket_simd29.hpp's adders; used where IFMA is off) are on by default for each curve's G1 and
// G2, or whether a calibration in the process decides. A calibration reads one short timing, and on
// a shared VM that timing follows the vCPU's neighbour: on a 2-vCPU Emerald Rapids VM main's G1
// calibration read BLS12-381's lanes on in 28 of 40 fresh processes and BN254's in 18 of 40 (cpu-notes
// round 37), so each proof took one path or the other by chance. Where whole MSMs have been measured
// on a CPU model, its row below fixes the choice; every other CPU (Zen 4, where the calibration
// reads on steadily, 1.57x / 1.50x product, round 25; CPUs never measured) keeps the calibration.
//
// A row is added only with its figures: whole MSMs of a key (H, A and B2 of bench/work's chain 2^16
// BN254 and chain 2^15 BLS12-381), lanes against one at a time, alternated rounds under chrt, CPU
// time (bench/results/cpu40-lanes-msm-*.txt, made by bench/results/cpu40-lanes-msm.py).
#pragma once
#include <cstring>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace snarkd {

// CPUID's vendor string and display family / model (the extended fields folded in as the vendors'
// manuals define them)
struct CpuModel {
  std::string vendor;
  unsigned family = 0, model = 0;
};

inline CpuModel cpu_model() {
  CpuModel m;
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return m;
  char v[13];
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &d, 4);
  std::memcpy(v + 8, &c, 4);
  v[12] = 0;
  m.vendor = v;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return m;
  const unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf, efam = (a >> 20) & 0xff, emod = (a >> 16) & 0xf;
  m.family = fam == 0xf ? fam + efam : fam;
  m.model = (fam == 0x6 || fam == 0xf) ? (emod << 4) | mod : mod;
#endif
  return m;
}

enum class LaneRule : int { calibrate = -1, off = 0, on = 1 };

inline const char* lane_rule_name(LaneRule r) {
  return r == LaneRule::on ? "on" : r == LaneRule::off ? "off" : "calibrate";
}

// The rule: the CPU's model, the curve (bls: BLS12-381, else BN254) and the group -> on, off, or
// "calibrate" (the process's own calibration decides: simd29_pays for G1, simd29_g2_pays for G2).
inline LaneRule simd29_rule(const CpuModel& cpu, bool bls, bool g2) {
  // Intel Xeon family 6 model 207 (Emerald Rapids), a 2-vCPU VM (cpu-notes round 38; two sets at load
  // 0.5 and 2.1, 7 and 9 rounds, T = 2): BN254's lanes lose in every whole MSM (G1 H and A 5-10% more
  // CPU by the minimum, B2 18-22% more); BLS12-381's win (B2 21-23% less CPU; G1 level to 2% less). vpmuludq's 5-cycle latency here (3 on Zen 4) costs the 9-limb
  // BN254 product more than the scalar mulx path it replaces; BLS12-381's 14 limbs amortise it.
  (void)g2;
  if (cpu.vendor == "GenuineIntel" && cpu.family == 6 && cpu.model == 207) return bls ? LaneRule::on : LaneRule::off;
  return LaneRule::calibrate;
}

// A lane switch's value (g_use_simd29*: -1 until _core._set_simd29 sets it, then 0 / 1): its default
// until set
inline bool lane_switch(int set, bool (*by_default)()) { return set < 0 ? by_default() : set != 0; }

// A default from the rule, calibrating only where the rule says so
template <class Calibrate>
inline bool lane_default(LaneRule r, Calibrate&& calibrate) {
  return r == LaneRule::calibrate ? calibrate() : r == LaneRule::on;
}

}  // namespace snarkd
