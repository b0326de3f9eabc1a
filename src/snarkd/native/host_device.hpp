// Qualifiers for code written once for the CPU core and the CUDA kernels (gpu/), as the point
// formulas (ec/xyzz.hpp) and the Miller loop's line steps (pairing/lines.hpp): a host compiler
// sees plain inline functions, nvcc and NVRTC `__host__ __device__` ones. The device's field types
// are __device__ only, so there these are instantiated for the device alone. Code that must
// differ tests __CUDA_ARCH__ where it stands. No includes: NVRTC has no host headers.
#pragma once

// SNARKD_HD_INLINE, a shared formula called from one member on each side:
// - device: forced inline into that member (the GPU's __noinline__ point and line calls), which
//   then compiles to the same SASS as when it held the formula itself;
// - host: plain inline, as the members were: g++ compiles the formula as the function the member
//   was, byte for byte, and inlines the one-line member into its callers, which call the formula
//   directly. (Forcing it into the member instead changed g++'s register allocation: 16 to 98
//   bytes of a 10 to 140 KB point function.)
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SNARKD_HD __host__ __device__
#define SNARKD_HD_INLINE SNARKD_HD __forceinline__
#else
#define SNARKD_HD
#define SNARKD_HD_INLINE inline
#endif
