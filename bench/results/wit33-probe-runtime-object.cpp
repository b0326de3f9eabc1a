#include "witness/compiled_runtime.hpp"
namespace rt {
__attribute__((used)) void* const keep_runtime[] = {(void*)&nat_Fr_copyn, (void*)&nat_Fr_add, (void*)&nat_Fr_sub, (void*)&nat_Fr_neg, (void*)&nat_Fr_mul, (void*)&nat_Fr_square, (void*)&nat_Fr_div, (void*)&nat_Fr_inv, (void*)&nat_Fr_pow, (void*)&nat_Fr_idiv, (void*)&nat_Fr_mod, (void*)&nat_Fr_eq, (void*)&nat_Fr_neq, (void*)&nat_Fr_lt, (void*)&nat_Fr_gt, (void*)&nat_Fr_leq, (void*)&nat_Fr_geq, (void*)&nat_Fr_land, (void*)&nat_Fr_lor, (void*)&nat_Fr_lnot, (void*)&nat_Fr_band, (void*)&nat_Fr_bnot, (void*)&nat_Fr_shl, (void*)&nat_Fr_shr};
}
