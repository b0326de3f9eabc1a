"""The native witness engine computes exactly what the circuit's wasm computes: every circom operator on
edge and random field values (hypothesis; the oracle is circom's own generated wasm, run by wasmtime),
control flow that depends on inputs (a while, ternaries, \\ and %, indices, assert, log), and
byte-identical .wtns against `snarkjs wtns calculate`, on both curves."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import snarkd.witness.native as native_module
from snarkd.curves.params import BLS12_381, BN254
from snarkd.witness import CircuitAssertError, NativeCalculator, WitnessCalculator
from wfixtures import compiled, wasm_cache  # noqa: F401

R = {"bn128": BN254.r, "bls12381": BLS12_381.r}


def both_engines(name: str, curve: str):
    """The circuit, a native calculator and a wasm one on it."""
    c = compiled(name, curve)
    return c, NativeCalculator(c.wasm, cache=False, strict=True), WitnessCalculator(c.wasm, cache=False)


@pytest.fixture(scope="session")
def ops(curve):
    return both_engines("ops.circom", curve)


@pytest.fixture(scope="session")
def control(curve, tmp_path_factory):
    """The circuit's wasm copied where no earlier run left a program beside it (the fixture cache outlives a
    session: a .wprog recorded by the last run would start this one with its paths known)."""
    c = compiled("control.circom", curve, include_circomlib=True)
    wasm = tmp_path_factory.mktemp(f"control-{curve}") / "circuit.wasm"
    shutil.copyfile(c.wasm, wasm)
    return c, NativeCalculator(wasm, cache=False, strict=True), WitnessCalculator(wasm, cache=False)


def field_values(p: int):
    half = (p - 1) // 2
    edges = [0, 1, 2, 3, 7, 8, 31, 32, 255, 256, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64,
             2**128, 2**253, 2**254 % p, half - 1, half, half + 1, p - 1, p - 2, p - 2**32, p - 2**64]
    return st.one_of(st.sampled_from(edges), st.integers(0, 2**70), st.integers(p - 2**40, p - 1),
                     st.integers(0, p - 1))


def shifts(p: int):
    return st.one_of(st.integers(0, 300), st.integers(p - 300, p - 1), st.sampled_from([253, 254, 255, 256]),
                     st.integers(0, p - 1))


def same_witness(native, wasm, inputs, log=None):
    lines_n, lines_w = [], []
    try:
        expect = wasm.calculate(inputs, log=lines_w.append).values
    except CircuitAssertError as exc:
        with pytest.raises(CircuitAssertError) as got:
            native.calculate(inputs)
        assert got.value.code == exc.code
        return None
    got = native.calculate(inputs, log=lines_n.append).values
    assert np.array_equal(got, expect), f"native witness differs for {inputs}"
    assert lines_n == lines_w
    return lines_n


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_operator_matches_the_wasm(ops, data):
    c, native, wasm = ops
    p = R[c.curve]
    a = data.draw(field_values(p), "a")
    b = data.draw(field_values(p), "b")
    k = data.draw(shifts(p), "k")
    same_witness(native, wasm, {"a": str(a), "b": str(b), "k": str(k)})


def control_flow_matches(native, wasm, inputs: dict, runs: int = 1) -> list[int]:
    """The control-flow run's witness (runs times: each starts afresh) byte for byte the wasm's; its values."""
    expect = wasm.calculate(inputs)
    run = [(q.hash, q.data) for q in native.prepare(inputs)]
    for _ in range(runs):
        res = native._run(run)
        assert res.ok, res.message
        assert bytes(res.witness) == expect.values.tobytes(), f"control-flow run differs for {inputs}"
    return expect.to_ints()


def circom_shl(a: int, k: int, p: int) -> int:
    """a << k for 0 <= k < bitlen(p), as circom computes it: bits past 2^256 dropped, masked to bitlen(p), p
    subtracted once."""
    x = (a << k) % 2**256 & (2 ** p.bit_length() - 1)
    return x - p if x >= p else x


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_matches_the_wasm_on_every_operator(ops, data):
    """ops.circom through the control-flow run itself (not a recording or a replay): every operator, shifts by any
    amount among them (circom_field.hpp's shr_small/shl_small for 0 <= k < bitlen(p), the general path else), and
    the products, byte for byte the wasm's and, where Python says it simply, its integers."""
    c, native, wasm = ops
    p = R[c.curve]
    a = data.draw(field_values(p), "a")
    b = data.draw(field_values(p), "b")
    k = data.draw(shifts(p), "k")
    got = control_flow_matches(native, wasm, {"a": str(a), "b": str(b), "k": str(k)})
    o = got[1 : 1 + 33]
    assert o[2] == a * b % p and o[17] == a & b
    assert o[24] == circom_shl(a, 200, p) and o[25] == a >> 253
    if k < p.bit_length():
        assert o[21] == circom_shl(a, k, p) and o[22] == a >> k


@pytest.fixture(scope="session")
def pow2div(curve):
    return both_engines("pow2div.circom", curve)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_divides_by_powers_of_two_as_the_wasm(pow2div, data):
    """\\ and % by 2^k (the power-of-two path) and by divisors that are not, and loop tests on the quotients, through
    the control-flow run: byte for byte the wasm's, and Python's integers."""
    c, native, wasm = pow2div
    p = R[c.curve]
    a = data.draw(field_values(p), "a")
    k = data.draw(st.one_of(st.integers(0, p.bit_length() - 1), st.sampled_from([0, 1, 63, 64, 65, 121, 128, 191, 192])))
    o = control_flow_matches(native, wasm, {"a": str(a), "k": str(k)})[1 : 1 + 8]
    d = 1 << k
    assert o[:6] == [a // d, a % d, a // (d + 1), a % (d + 3), a >> 121, a % 2**121]
    # d * (i + 1) is a field product: past p (2^k with k near bitlen(p)) it wraps, and the divisor is its residue
    assert o[6] == sum(1 for i in range(4) if circom_signed(a // (d * (i + 1) % p), p) > i)  # circom's signed order
    assert o[7] == (1 if a // d else 2)


@pytest.fixture(scope="session")
def forms(curve):
    return both_engines("forms.circom", curve)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_matches_the_wasm_on_every_pairing_of_forms(forms, data):
    """The control-flow run keeps values plain or Montgomery as their operation left them (plain_forms.hpp):
    forms.circom takes every operator over plain x plain, Montgomery x plain and plain x Montgomery operands,
    products below and past p among them; its witness must be the wasm's, byte for byte."""
    c, native, wasm = forms
    p = R[c.curve]
    inputs = {"a": str(data.draw(field_values(p), "a")), "b": str(data.draw(field_values(p), "b"))}
    got = control_flow_matches(native, wasm, inputs)
    a, b = (int(inputs[k]) for k in "ab")
    assert got[1 + 2] == a * b % p and got[1 + 18 * 2 + 13] == (a >> 130) * (b >> 130) % p  # o[0][2], o[2][13]


@pytest.fixture(scope="session")
def compare(curve):
    return both_engines("compare.circom", curve)


def circom_signed(v: int, p: int) -> int:
    """circom's value of a field element in comparisons: above p/2 it is negative."""
    return v - p if v > p // 2 else v


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_compares_and_multiplies_as_the_wasm(compare, data):
    """Comparisons of two plain values and products run in the interpreter's handler (binary_direct), the other
    pairings through binary_to: compare.circom takes <, >, <=, >=, ==, != on each pairing of forms, with circom's
    negative values and equal operands, and products by 0 and 1; the witness must be the wasm's, byte for byte,
    and o[0][*] (plain x plain) circom's order of the signed values."""
    c, native, wasm = compare
    p = R[c.curve]
    a, b = data.draw(field_values(p), "a"), data.draw(field_values(p), "b")
    got = control_flow_matches(native, wasm, {"a": str(a), "b": str(b)})
    x, y, n = circom_signed(a, p), circom_signed(b, p), circom_signed((p - a) % p, p)
    assert got[1:5] == [int(x < y), int(x > y), int(x <= y), int(x >= y)]  # o[0][0..3]
    assert got[1 + 6] == int(n < y) and got[1 + 9] == b  # o[0][6], o[0][9]


@pytest.fixture(scope="session")
def literals(curve):
    return both_engines("literals.circom", curve)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_reads_marked_literals_and_kept_inverses_as_the_wasm(literals, data):
    """The control-flow run takes a short literal it has checked once by its mark (record.hpp's LITERAL) and an
    inverse it has computed from its memo: literals.circom reads literals in loops, overwrites vars copied from
    them and divides by recurring and changing divisors; the witness must be the wasm's, byte for byte, each run
    (a run starts with no marks and no memo: run twice, the same bytes)."""
    c, native, wasm = literals
    p = R[c.curve]
    a, b = data.draw(field_values(p), "a"), data.draw(field_values(p), "b")
    got = control_flow_matches(native, wasm, {"a": str(a), "b": str(b)}, runs=2)
    x0 = a % p
    assert got[1] == (x0 * pow(1 << 121, -1, p)) % p  # o[0][0]: a / 2^121, the field's division
    assert got[1 + 8] == (1023 * 1023 - 1022) % p  # o[0][8]: literals copied, overwritten, multiplied


def test_operators_on_both_arms_and_the_guarded_division(ops):
    """o[26]/o[27]/o[30] are ternaries on signals (one path for every input); o[31] has \\ in one
    arm (a guard: each side of b == 2 is its own path, learnt when first met)."""
    c, native, wasm = ops
    before = native.stats.as_dict()
    for a, b in [(5, 2), (5, 3), (0, 2), (9, 1), (12, 0)]:
        same_witness(native, wasm, {"a": a, "b": b, "k": 3})
    after = native.stats.as_dict()
    assert after["wasm"] == before["wasm"]  # never the wasm engine: replays and recordings only
    assert native.program.n_paths >= 2


def test_a_division_by_zero_is_the_wasm_engines_error(ops):
    c, native, wasm = ops
    p = R[c.curve]
    i = _sqrt_minus_one(p)  # b * b + 1 == 0: `\` and `%` by zero trap in the wasm
    with pytest.raises(CircuitAssertError) as w:
        wasm.calculate({"a": 5, "b": i, "k": 0})
    fell_back = []
    native.on_fallback = fell_back.append
    with pytest.raises(CircuitAssertError) as n:
        native.calculate({"a": 5, "b": i, "k": 0})
    native.on_fallback = None
    assert str(n.value) == str(w.value)
    assert fell_back and "wasm engine" in fell_back[0]


# a ** b with a below 2^32 and b below 128 is taken in integers while the result fits 128 bits (the recorder's
# shortcut for zk-email's poly_eval): both sides of each bound, and the cases the shortcut leaves to the field
SMALL_POWERS = [(0, 0), (0, 5), (1, 127), (5, 0), (2, 127), (2, 128), (3, 80), (3, 81), (2**32 - 1, 4),
                (2**32 - 1, 5), (2**32, 2), (32, 16), (7, 127)]


@pytest.mark.parametrize("a, b", SMALL_POWERS)
def test_small_integer_powers_match_the_wasm_and_python(ops, a, b):
    c, native, wasm = ops
    inputs = {"a": a, "b": b, "k": 0}
    expect = wasm.calculate(inputs)
    assert expect.to_ints()[1 + 4] == pow(a, b, R[c.curve])  # o[4], after the constant 1
    # the control-flow run (the recorder's own `**`; a replay would take the program's)
    res = native._run([(p.hash, p.data) for p in native.prepare(inputs)])
    assert res.ok, res.message
    assert bytes(res.witness) == expect.values.tobytes()


def _sqrt_minus_one(p: int) -> int:
    for g in range(2, 100):
        x = pow(g, (p - 1) // 4, p)
        if x * x % p == p - 1:
            return x
    raise AssertionError("no square root of -1")


CONTROL_INPUTS = [{"a": 27, "b": 4}, {"a": 27, "b": 9}, {"a": 6, "b": 0}, {"a": 7, "b": 7}, {"a": 1, "b": 0},
                  {"a": 999_999, "b": 3}, {"a": 97, "b": 96}]


def test_input_dependent_control_flow_matches_the_wasm(control, monkeypatch):
    """A while whose trip count depends on an input, `%`/`\\` on inputs, an index from an input, IsEqual's
    ternary, assert and log: each input is replayed or recorded as a new path, never approximated."""
    c, native, wasm = control
    monkeypatch.setattr(native_module, "CONTROL_FLOW_AFTER", native_module.MAX_PATHS + 1)  # recording misses, never the control-flow run
    for inputs in CONTROL_INPUTS:
        lines = same_witness(native, wasm, inputs)
        assert lines == [f"a {inputs['a']} b {inputs['b']} steps {_collatz(inputs['a'])}"]
    for inputs in CONTROL_INPUTS:  # every path is known now: all replays
        before = native.stats.native
        same_witness(native, wasm, inputs)
        assert native.stats.native == before + 1
    assert native.stats.wasm == 0


def test_a_failed_assert_is_the_wasm_engines_error(control):
    c, native, wasm = control
    with pytest.raises(CircuitAssertError) as w:
        wasm.calculate({"a": 1_000_001, "b": 0})
    with pytest.raises(CircuitAssertError) as n:
        native.calculate({"a": 1_000_001, "b": 0})
    assert n.value.code == w.value.code == 4 and n.value.line == w.value.line


@pytest.mark.parametrize("which", ["ops", "control"])
def test_byte_identical_to_snarkjs(which, ops, control, tmp_path):
    c, native, _ = ops if which == "ops" else control
    for i, inputs in enumerate([{"a": 3, "b": 5, "k": 2}, {"a": str(R[c.curve] - 1), "b": 2, "k": 300}]
                               if which == "ops" else CONTROL_INPUTS[:3]):
        out = tmp_path / f"{i}.wtns"
        native.calculate_to_file(inputs, out)
        assert out.read_bytes() == c.snarkjs_witness(inputs).read_bytes()


def _collatz(n: int) -> int:
    steps, x = 0, n
    while x != 1 and steps < 200:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


@pytest.fixture(scope="session")
def copyloop(curve):
    return both_engines("copyloop.circom", curve)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_copies_arrays_as_the_wasm(copyloop, data):
    """circom's element copy loops (array assignments, function arguments and results; interp.hpp runs their
    iterations without dispatch): byte for byte the wasm's witness, and Python's integers."""
    c, native, wasm = copyloop
    p = R[c.curve]
    a = [data.draw(field_values(p), f"a{i}") for i in range(8)]
    k = data.draw(field_values(p), "k")
    o = control_flow_matches(native, wasm, {"a": [str(v) for v in a], "k": str(k)})[1 : 1 + 21]
    y = a[::-1]
    z = [(y[i] * k + i) % p for i in range(8)]
    assert o[:8] == [(z[i] + a[i]) % p for i in range(8)]
    assert o[8:16] == y
    assert o[16:21] == [a[3], (a[3] + k) % p, (a[4] + k) % p, (a[5] + k) % p, z[7]]


@pytest.fixture(scope="session")
def addcopy(curve):
    return both_engines("addcopy.circom", curve)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_flow_run_assigns_sums_and_literals_as_the_wasm(addcopy, data):
    """Fr_add/Fr_sub into a temporary then Fr_copy of it (interp.hpp writes both in the add's handler), Fr_copy of
    a literal (copy_elem's literal path), loops whose exit test depends on the inputs (the comparison, Fr_isTrue,
    i32.eqz and br_if in the comparison's handler), elements indexed by values (Fr_toInt and the scaled address in
    Fr_toInt's handler), `if`, `?:` and `===` (Fr_eq, Fr_isTrue, i32.eqz and if in the comparison's handler; the
    check fails where a[0] is 7): byte for byte the wasm's witness, and Python's integers."""
    c, native, wasm = addcopy
    p = R[c.curve]
    a = [data.draw(st.one_of(st.just(7), field_values(p)), "a0")]
    a += [data.draw(field_values(p), f"a{i}") for i in range(1, 8)]
    k = data.draw(field_values(p), "k")
    inputs = {"a": [str(v) for v in a], "k": str(k)}
    if a[0] == 7:  # the circuit's `===` fails: on both engines
        with pytest.raises(CircuitAssertError):
            wasm.calculate(inputs)
        res = native._run([(q.hash, q.data) for q in native.prepare(inputs)])
        assert not res.ok
        return
    o = control_flow_matches(native, wasm, inputs)[1 : 1 + 24]

    def acc(n):
        s = 0
        for i in range(n):
            s = (s + a[i] - k) % p
            s = (s + s * k - 1) % p
        return s

    s = acc(8)
    x = (a[0] + a[1]) % p
    assert o[0:2] == [x, (x - k) % p]
    assert o[2:10] == [(a[i] + i - 7) % p for i in range(8)]
    assert o[10:16] == [s, 31, k % p, (5 - 24) % p, 0, 1023]
    b = a[0] % 5
    assert o[16:18] == [b * k % p, (b + 1) // 2 * 2]
    assert o[18] == (a[b] + b + acc(b)) % p
    assert o[19:21] == [k % p if b < 3 else (k + 1) % p, (5 if b >= 2 else 0) + (7 if b != 1 else 0)]
    assert o[21:24] == [k % p if b < 2 else 3, 1 if b >= 4 else 0, (2 if 0 < b < 4 else 0) + (3 if b in (0, 4) else 0)]
