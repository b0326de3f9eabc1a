// runtime_ext.hpp's functions: runtime.hpp's native field functions, out of line (see runtime_ext.hpp).
#include "runtime.hpp"
#include "runtime_ext.hpp"
#define RTX3(N) extern "C" void rtx_Fr_##N(int32_t r, int32_t a, int32_t b) { rt::nat_Fr_##N(r, a, b); }
#define RTX2(N) extern "C" void rtx_Fr_##N(int32_t r, int32_t a) { rt::nat_Fr_##N(r, a); }
#define RTX1(N) extern "C" int32_t rtx_Fr_##N(int32_t a) { return rt::nat_Fr_##N(a); }
RTX_ALL
