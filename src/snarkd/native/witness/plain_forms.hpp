// The control-flow run's field functions (Recorder<P, UNTRACED>) on values in either form, plain or Montgomery.
//
// circom's witness functions are mostly integer work (zk-email's long division: `%` and `\` by 2^n, comparisons,
// 121-bit limbs multiplied and added, loop counters turned into indices): in Montgomery form every such operation
// converted its operands to plain and its result back, a Montgomery product each (the memo in record.hpp catches
// only values that recur). Here a value stays in the form the operation that made it left it in, and is converted
// only where an operation needs the other form:
//   - integer operators, comparisons, literals, Fr_toInt: plain in, plain out;
//   - + and -: either form, both operands in one (a plain one wins: integer work is the common case);
//   - *: Montgomery x Montgomery is Montgomery; plain x Montgomery is one Montgomery product that gives the plain
//     product (a * bR / R = ab); plain x plain is the integer product when it is below p (121-bit limbs: 242 bits),
//     else one operand converted, then as plain x Montgomery;
//   - / and inverse: the inverse in Montgomery form, then *; powers as record.hpp's pow.
// write_elem writes a plain value as circom's long normal form (type 0x80000000) and a Montgomery one as long
// Montgomery (0xC0000000): both the wasm's own forms for that value, and either way the words are marked as the
// native functions' (a raw read of them is refused). A recording keeps every value in Montgomery form (its trace's
// constants are Montgomery); these are never called there.
#pragma once

namespace snarkd::witness {

// An element in short or long normal form (circom's literals, the wasm's own stores): its plain value.
template <class P, bool UNTRACED>
__attribute__((noinline)) typename Recorder<P, UNTRACED>::F Recorder<P, UNTRACED>::decode_plain(const uint8_t* p,
                                                                                             uint32_t a) {
  int32_t sv;
  uint32_t type;
  std::memcpy(&sv, p, 4);
  std::memcpy(&type, p + 4, 4);
  if (type & 0x3FFFFFFFu) not_circoms(a);  // (long Montgomery, 0xC0000000, is read_elem's)
  F v = F::zero();
  if (type & 0x80000000u) {
    std::memcpy(v.v, p + 8, sizeof v.v);
    if (!F::lt_mod(v.v)) not_circoms(a);
    return v;
  }
  v.v[0] = uint64_t(sv < 0 ? -int64_t(sv) : int64_t(sv));
  if (sv < 0) v = v.neg();  // p - |sv|
  if (type) {  // a literal keeps its Montgomery form beside the short value, and ffwasm reads either: they must agree
    F m;
    if (sv > -SMALL_LITERALS && sv < SMALL_LITERALS) {
      m = small_literals()[sv < 0 ? -sv : sv];
      if (sv < 0) m = m.neg();  // Montgomery's form of p - |sv| is p - |sv|'s: negation is linear
    } else {
      m = mont(v);
    }
    if (std::memcmp(m.v, p + 8, sizeof m.v) != 0) not_circoms(a);
  }
  return v;
}

// a * b in the cheapest form (above); plain_out says which the result is in.
template <class P, bool UNTRACED>
typename Recorder<P, UNTRACED>::F Recorder<P, UNTRACED>::mul_forms(const Val& a, const Val& b, bool& plain_out) {
  plain_out = a.plain || b.plain;
  if (a.plain != b.plain || !a.plain) return a.v * b.v;
  // both plain: the integer product where the operands' limbs fit in N (it is below 2^256) and it is below p
  size_t na = P::N, nb = P::N;
  while (na && !a.v.v[na - 1]) na--;
  while (nb && !b.v.v[nb - 1]) nb--;
  if (na <= 2 && nb <= 2) {
    // two limbs at most each (121-bit limbs, counters: nearly every plain product here): the loop below in
    // registers, its result limbs stored once (the loop's stores and reloads of r, then its 16-byte copy out,
    // waited on one another)
    const u64 a0 = a.v.v[0], a1 = a.v.v[1], b0 = b.v.v[0], b1 = b.v.v[1];
    const u128 t00 = u128(a0) * b0, t01 = u128(a0) * b1, t10 = u128(a1) * b0, t11 = u128(a1) * b1;
    const u128 mid = (t00 >> 64) + u64(t01) + u64(t10);  // < 3 * 2^64
    const u128 hi = (mid >> 64) + (t01 >> 64) + (t10 >> 64) + u64(t11);  // < 4 * 2^64
    const u64 r0 = u64(t00), r1 = u64(mid), r2 = u64(hi), r3 = u64(hi >> 64) + u64(t11 >> 64);  // below 2^256
    // r < p (F::lt_mod) by the borrow of r - p, on the registers: lt_mod takes the limbs from memory, and the
    // product stored there for it was then copied out 16 bytes at a time (a store-forwarding stall per product)
    u64 borrow = 0;
    const u64 r[4] = {r0, r1, r2, r3};
    for (size_t k = 0; k < 4; k++) borrow = u64((u128(r[k]) - P::MOD[k] - borrow) >> 64) & 1;
    if (borrow) {
      F out;
      out.v[0] = r0;
      out.v[1] = r1;
      out.v[2] = r2;
      out.v[3] = r3;
      return out;
    }
  } else if (na + nb <= P::N) {
    F r = F::zero();
    for (size_t i = 0; i < na; i++) {
      u64 carry = 0;
      for (size_t j = 0; j < nb; j++) {
        const u128 t = u128(a.v.v[i]) * b.v.v[j] + r.v[i + j] + carry;
        r.v[i + j] = u64(t);
        carry = u64(t >> 64);
      }
      r.v[i + nb] = carry;  // i + nb < na + nb <= N
    }
    if (F::lt_mod(r.v)) return r;
  }
  // else the shorter one (a loop counter, a small literal: its Montgomery form is likely remembered) converted
  return na < nb ? mont(a.v) * b.v : a.v * mont(b.v);
}

// a OP b into r (its form: rp); returns the result's mark
template <class P, bool UNTRACED>
uint32_t Recorder<P, UNTRACED>::binary_value(HostFn h, const Val& a, const Val& b, F& r, bool& rp) {
  rp = true;  // plain unless an operation below says otherwise
  switch (h) {
    case H_ADD:
    case H_SUB: {
      const bool same = a.plain == b.plain;
      const F x = same ? a.v : plain_of(a), y = same ? b.v : plain_of(b);
      r = h == H_ADD ? x + y : x - y;
      rp = same ? a.plain : true;
      break;
    }
    case H_MUL: r = mul_forms(a, b, rp); break;
    case H_DIV: {
      Val inv{0, inverse(mont_of(b))};
      r = mul_forms(a, inv, rp);
      break;
    }
    case H_IDIV:
    case H_MOD:
      if (h == H_IDIV ? CF::n_idiv(plain_of(a), plain_of(b), r) : CF::n_mod(plain_of(a), plain_of(b), r))
        trap("integer divide by zero");
      break;
    case H_POW: {
      const F e = plain_of(b);
      if (!(one_limb_below(e, 128) && small_pow(plain_of(a), e, r))) {
        r = CF::pow_n(mont_of(a), e);
        rp = false;
      }
      break;
    }
    case H_EQ: r = CF::n_bool(same_value(a, b)); break;
    case H_NEQ: r = CF::n_bool(!same_value(a, b)); break;
    case H_LT:
    case H_GT:
    case H_LEQ:
    case H_GEQ:
    case H_BAND:
    case H_SHL:
    case H_SHR: plain_binary(h, plain_of(a), plain_of(b), r); break;
    case H_LAND: r = CF::n_bool(CF::is_true(a.v) && CF::is_true(b.v)); break;  // (0 is 0 in either form)
    case H_LOR: r = CF::n_bool(CF::is_true(a.v) || CF::is_true(b.v)); break;
    case H_BOR: r = CF::n_bor(plain_of(a), plain_of(b)); break;
    case H_BXOR: r = CF::n_bxor(plain_of(a), plain_of(b)); break;
    default: throw Unsupported("internal: binary op");
  }
  return result_mark(h, a, b);
}

// a OP b's mark: a product with 0 is the one result that drops the mark of a value computed from the inputs (as a
// recording's identities: its other ones give an operand or r itself)
template <class P, bool UNTRACED>
__attribute__((always_inline)) inline uint32_t Recorder<P, UNTRACED>::result_mark(HostFn h, const Val& a, const Val& b) {
  const bool by_zero = h == H_MUL && ((!a.id && a.v.is_zero()) || (!b.id && b.v.is_zero()));
  return (!a.id && !b.id) || by_zero ? 0 : TAINT;
}

// Comparisons, == and !=, & and shifts of two plain values into r (plain): binary_value's, and binary_direct's in
// the interpreter's handler. false: another function.
template <class P, bool UNTRACED>
__attribute__((always_inline)) inline bool Recorder<P, UNTRACED>::plain_binary(HostFn h, const F& x, const F& y, F& r) {
  switch (h) {
    case H_EQ: r = CF::n_bool(x == y); return true;
    case H_NEQ: r = CF::n_bool(!(x == y)); return true;
    case H_LT: r = CF::n_bool(CF::n_less(x, y)); return true;
    case H_GT: r = CF::n_bool(CF::n_less(y, x)); return true;
    case H_LEQ: r = CF::n_bool(!CF::n_less(y, x)); return true;
    case H_GEQ: r = CF::n_bool(!CF::n_less(x, y)); return true;
    case H_BAND: r = CF::n_band(x, y); return true;
    case H_SHL: r = CF::n_shl(x, y); return true;
    case H_SHR: r = CF::n_shr(x, y); return true;
    default: return false;
  }
}

// Fr_add(dst, a, b) and the like: the result written from where it was computed (no Val between)
template <class P, bool UNTRACED>
void Recorder<P, UNTRACED>::binary_to(uint32_t dst, HostFn h, const Val& a, const Val& b) {
  F r;
  bool rp;
  const uint32_t id = binary_value(h, a, b, r, rp);
  write_value(dst, id, r, rp);
}

// The commonest binary functions of the RSA verifier's control-flow run, a third of its 1.9 M each: comparisons
// of two plain values (loop bounds, carries) and products, done in the interpreter's handler (inlined) as
// binary_value does them, without the calls of binary_to and binary_value, the switch and the result through
// memory between them (~45 instructions a call each). false: anything else, for binary_to.
template <class P, bool UNTRACED>
__attribute__((always_inline)) inline bool Recorder<P, UNTRACED>::binary_direct(uint32_t dst, HostFn h, const Val& a,
                                                                                 const Val& b) {
  F r;
  if (h == H_MUL) {
    bool rp;
    r = mul_forms(a, b, rp);
    write_value(dst, result_mark(h, a, b), r, rp);
    return true;
  }
  if (!(a.plain && b.plain) || !plain_binary(h, a.v, b.v, r)) return false;
  write_value(dst, result_mark(h, a, b), r, true);
  return true;
}

template <class P, bool UNTRACED>
typename Recorder<P, UNTRACED>::Val Recorder<P, UNTRACED>::unary_forms(HostFn h, const Val& a) {
  Val out;
  out.id = a.id ? TAINT : 0;
  out.plain = true;
  F r;
  switch (h) {
    case H_NEG: r = a.v.neg(); out.plain = a.plain; break;
    case H_INV: r = inverse(mont_of(a)); out.plain = false; break;
    case H_LNOT: r = CF::n_bool(!CF::is_true(a.v)); break;
    case H_BNOT: r = CF::n_bnot(plain_of(a)); break;
    case H_SQUARE: r = mul_forms(a, a, out.plain); break;
    default: throw Unsupported("internal: unary op");
  }
  put(out.v, r.v);
  return out;
}

}  // namespace snarkd::witness
