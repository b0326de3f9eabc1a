// The native field functions out of line (runtime_ext.cpp), for translate.py --extern-runtime: a proxy for a program
// whose code is not optimised across the field calls (a template / copy-and-patch JIT calling a runtime built ahead).
#pragma once
#include <cstdint>
#define RTX3(N) extern "C" void rtx_Fr_##N(int32_t, int32_t, int32_t);
#define RTX2(N) extern "C" void rtx_Fr_##N(int32_t, int32_t);
#define RTX1(N) extern "C" int32_t rtx_Fr_##N(int32_t);
#define RTX_ALL                                                                                                    \
  RTX3(add) RTX3(sub) RTX3(mul) RTX3(div) RTX3(idiv) RTX3(mod) RTX3(pow) RTX3(eq) RTX3(neq) RTX3(lt) RTX3(gt)     \
  RTX3(leq) RTX3(geq) RTX3(land) RTX3(lor) RTX3(band) RTX3(bor) RTX3(bxor) RTX3(shl) RTX3(shr) RTX3(copyn)       \
  RTX2(copy) RTX2(square) RTX2(neg) RTX2(inv) RTX2(lnot) RTX2(bnot) RTX1(isTrue) RTX1(toInt)
RTX_ALL
#undef RTX3
#undef RTX2
#undef RTX1
