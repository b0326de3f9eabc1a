"""groth16_blind (native/groth16/blind.hpp, the one assembly every prover path uses) against py_ecc: the proof's
three points from five MSM sums, the key's header points and r, s, by snarkjs's formulas."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

scalars = st.integers(min_value=0, max_value=2**256)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ks=st.lists(scalars, min_size=10, max_size=10), r=scalars, s=scalars, inf=st.sets(st.sampled_from("a b1 c h b2".split())))
def test_blind_equals_the_formulas(curve, ks, r, s, inf):
    pe, order = curve.pe, curve.r
    ks = [k % order for k in ks]
    r, s = r % order, s % order
    g1 = lambda k: pe.multiply(pe.G1, k)  # noqa: E731
    g2 = lambda k: pe.multiply(pe.G2, k)  # noqa: E731
    sums = {"a": g1(ks[0]), "b1": g1(ks[1]), "c": g1(ks[2]), "h": g1(ks[3]), "b2": g2(ks[4])}
    for name in inf:  # a sum of no rows (a key of public inputs only) is the point at infinity
        sums[name] = pe.Z2 if name == "b2" else pe.Z1
    alpha1, beta1, delta1, beta2, delta2 = g1(ks[5]), g1(ks[6]), g1(ks[7]), g2(ks[8]), g2(ks[9])
    enc = {n: (curve.g2_enc(p) if n in ("b2", "beta2", "delta2") else curve.g1_enc(p)) for n, p in
           (*sums.items(), ("alpha1", alpha1), ("beta1", beta1), ("delta1", delta1), ("beta2", beta2), ("delta2", delta2))}
    b = lambda x: x.to_bytes(32, "little")  # noqa: E731
    pi_a, pi_b, pi_c = curve.mod.groth16_blind({n: enc[n] for n in sums}, {n: enc[n] for n in ("alpha1", "beta1", "delta1",
                                               "beta2", "delta2")}, b(r), b(s), b(r * s % order))
    want_a = pe.add(pe.add(sums["a"], alpha1), pe.multiply(delta1, r))
    want_b = pe.add(pe.add(sums["b2"], beta2), pe.multiply(delta2, s))
    b1 = pe.add(pe.add(sums["b1"], beta1), pe.multiply(delta1, s))
    want_c = pe.add(pe.add(pe.add(sums["c"], sums["h"]), pe.multiply(want_a, s)),
                    pe.add(pe.multiply(b1, r), pe.neg(pe.multiply(delta1, r * s % order))))
    got = (curve.g1_dec(np.frombuffer(pi_a, dtype=np.uint64)), curve.g2_dec(np.frombuffer(pi_b, dtype=np.uint64)),
           curve.g1_dec(np.frombuffer(pi_c, dtype=np.uint64)))
    assert all(pe.eq(x, y) for x, y in zip(got, (want_a, want_b, want_c)))


def test_blind_names_a_wrong_size(curve):
    z1, z2 = np.zeros(2 * curve.L, dtype=np.uint64), np.zeros(4 * curve.L, dtype=np.uint64)
    sums = {"a": z1, "b1": z1, "c": z1[:-1], "h": z1, "b2": z2}
    header = {"alpha1": z1, "beta1": z1, "delta1": z1, "beta2": z2, "delta2": z2}
    with pytest.raises(ValueError, match="^c: "):
        curve.mod.groth16_blind(sums, header, bytes(32), bytes(32), bytes(32))
    with pytest.raises(ValueError, match="^r: not below r"):
        curve.mod.groth16_blind({**sums, "c": z1}, header, b"\xff" * 32, bytes(32), bytes(32))
