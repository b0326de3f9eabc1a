"""WitnessCalculator against `snarkjs wtns calculate`: byte-identical .wtns on both
curves, input forms, every error case, reuse and threads."""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from snarkd.curves.params import BLS12_381, BN254
from snarkd.errors import EXIT_BAD_INPUT, InputError
from snarkd.formats.wtns import read_wtns
from snarkd.witness import (
    CircuitAssertError,
    CircuitFormatError,
    InputValueError,
    MissingInputError,
    SignalSizeError,
    UnknownSignalError,
    WitnessCalculator,
    fnv_hash,
)
from snarkd.witness import wasm_runtime
from wfixtures import ARRAYS_INPUT, POSEIDON_INPUT, arrays, bus, constraint_circuit, noinput, poseidon, wasm_cache  # noqa: F401

R = {"bn128": BN254.r, "bls12381": BLS12_381.r}


def ours(wasm, inputs, tmp_path, **kw) -> bytes:
    out = tmp_path / "ours.wtns"
    WitnessCalculator(wasm, **kw).calculate_to_file(inputs, out)
    return out.read_bytes()


# -- byte-identical to snarkjs ------------------------------------------------------------


def test_shared_fixture_circuits_byte_identical(all_circuits, tmp_path):
    """chain, chain_exact, no_public, many_public, circomlib_cmp (tests/conftest.py)."""
    for case in all_circuits:
        assert ours(case.circuit.wasm, case.inputs, tmp_path) == case.wtns.read_bytes(), case.name


def test_arrays_byte_identical(arrays, tmp_path):
    ref = arrays.snarkjs_witness(ARRAYS_INPUT)
    assert ours(arrays.wasm, ARRAYS_INPUT, tmp_path) == ref.read_bytes()


@pytest.mark.slow
def test_poseidon_circomlib_byte_identical(poseidon, tmp_path):
    ref = poseidon.snarkjs_witness(POSEIDON_INPUT)
    assert ours(poseidon.wasm, POSEIDON_INPUT, tmp_path) == ref.read_bytes()
    w = read_wtns(ref)
    assert w.prime == R[poseidon.curve]


def test_poseidon_known_hash_bn128(poseidon):
    if poseidon.curve != "bn128":
        pytest.skip("the published Poseidon vector is for BN254")
    calc = WitnessCalculator(poseidon.wasm)
    w = calc.calculate(POSEIDON_INPUT)
    # circomlibjs poseidon([1, 2]); hash[0] is output 1 (w[0] = 1, then outputs).
    assert w.value(1) == 0x115CC0F5E7D690413DF64C6B9662E9CF2A3617F2743245519E19607A4417189A


def test_no_input_circuit(noinput, tmp_path):
    ref = noinput.snarkjs_witness({})
    assert ours(noinput.wasm, {}, tmp_path) == ref.read_bytes()
    assert WitnessCalculator(noinput.wasm).calculate({}).value(1) == 42


def test_bus_inputs_match_circom_generate_witness(bus, tmp_path):
    inputs = {"p": {"x": 2, "y": 3}, "ps": [{"x": 4, "y": 5}, {"x": 6, "y": 7}], "k": 1}
    ref = bus.circom_witness(inputs, tmp_path)
    assert ours(bus.wasm, inputs, tmp_path) == ref.read_bytes()
    w = WitnessCalculator(bus.wasm).calculate(inputs)
    assert w.value(1) == 4 * 7 + 2 * 3 + 1


def test_input_forms_equivalent(poseidon, tmp_path):
    """Numbers, decimal/hex strings, negative values, numpy arrays: the same witness as
    snarkjs gives for the canonical decimal inputs."""
    r = R[poseidon.curve]
    canonical = {
        "preimage": [[str(r - 1), "2"], ["255", "31"], ["0", "5"]],
        "x": "1000",
        "bound": "18446744073709551615",
    }
    ref = poseidon.snarkjs_witness(canonical).read_bytes()
    forms = {
        "preimage": [[-1, " 2 "], ["0xff", "0x1F"], np.array([0, 5], dtype=np.uint64)],
        "x": 1000.0,
        "bound": 2**64 - 1,
    }
    assert ours(poseidon.wasm, forms, tmp_path) == ref
    flat = dict(forms, preimage=[str(r - 1), 2, 255, 31, 0, 5])  # flattening is row-major
    assert ours(poseidon.wasm, flat, tmp_path) == ref
    big = dict(canonical, preimage=[[r - 1, "0b10"], ["0o377", 31], [False, 5]])
    assert ours(poseidon.wasm, big, tmp_path) == ref


def test_reuse_and_chunking(poseidon, monkeypatch):
    """One calculator, many inputs, no state carried over; tiny chunks give the same bytes."""
    calc = WitnessCalculator(poseidon.wasm)
    a = calc.calculate_words(POSEIDON_INPUT)
    other = dict(POSEIDON_INPUT, x=5)
    b = calc.calculate_words(other)
    assert not np.array_equal(a, b)
    assert np.array_equal(calc.calculate_words(POSEIDON_INPUT), a)
    monkeypatch.setattr(wasm_runtime, "CHUNK", 3)
    fresh = WitnessCalculator(poseidon.wasm)
    assert np.array_equal(fresh.calculate_words(POSEIDON_INPUT), a)
    assert np.array_equal(fresh.calculate_words(other), b)


def test_threads(poseidon):
    calc = WitnessCalculator(poseidon.wasm)
    inputs = [dict(POSEIDON_INPUT, x=i) for i in range(24)]
    expected = [calc.calculate_words(i) for i in inputs]
    barrier = threading.Barrier(8)

    def work(i):
        if i < 8:
            barrier.wait()
        return calc.calculate_words(inputs[i])

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(work, range(len(inputs))))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    assert 1 <= len(calc._idle) <= 8


def test_threads_with_errors(arrays):
    """Failing runs in some threads do not disturb good runs in others."""
    calc = WitnessCalculator(arrays.wasm)
    good = calc.calculate_words(ARRAYS_INPUT)
    bad = dict(ARRAYS_INPUT, a=7)

    def work(i):
        if i % 2:
            with pytest.raises(CircuitAssertError):
                calc.calculate_words(bad)
            return None
        return calc.calculate_words(ARRAYS_INPUT)

    with ThreadPoolExecutor(6) as pool:
        for res in pool.map(work, range(40)):
            if res is not None:
                assert np.array_equal(res, good)


def test_max_instances(poseidon):
    calc = WitnessCalculator(poseidon.wasm, max_instances=2)
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda i: calc.calculate_words(dict(POSEIDON_INPUT, x=i)), range(12)))
    assert len(calc._idle) <= 2


def test_log_output(arrays):
    lines = []
    WitnessCalculator(arrays.wasm).calculate(ARRAYS_INPUT, log=lines.append)
    assert lines == ["c is 53"]


def test_properties(arrays):
    calc = WitnessCalculator(arrays.wasm)
    assert calc.prime == R[arrays.curve]
    assert calc.n32 == 8 and calc.n8 == 32
    assert calc.input_size == 1 + 3 * 2
    assert calc.version[0] == 2
    assert calc.witness_size == len(read_wtns(arrays.snarkjs_witness(ARRAYS_INPUT)))


def test_fnv_hash():
    # FNV-1a 64 reference values
    assert fnv_hash("") == 0xCBF29CE484222325
    assert fnv_hash("a") == 0xAF63DC4C8601EC8C
    assert fnv_hash("foobar") == 0x85944171F73967E8


# -- errors -------------------------------------------------------------------------------


def test_failed_assert_reports_template_and_line(arrays):
    calc = WitnessCalculator(arrays.wasm)
    with pytest.raises(CircuitAssertError) as ei:
        calc.calculate(dict(ARRAYS_INPUT, a=7))
    e = ei.value
    assert e.code == 4
    assert e.template == "Arrays_0" and e.line == 16
    assert "Assert Failed" in str(e) and "Error in template Arrays_0 line: 16" in str(e)
    assert str(arrays.wasm) in str(e)
    assert isinstance(e, InputError) and e.exit_code == EXIT_BAD_INPUT
    # the calculator still works afterwards
    assert calc.calculate(ARRAYS_INPUT).value(1) == 53


def test_failed_constraint(constraint_circuit):
    calc = WitnessCalculator(constraint_circuit.wasm)
    with pytest.raises(CircuitAssertError) as ei:
        calc.calculate({"a": 2, "b": 3, "c": 5})
    assert ei.value.template == "Check_0" and ei.value.line == 10
    assert calc.calculate({"a": 2, "b": 3, "c": 6}).value(1) == 6


def test_missing_input_named(arrays):
    calc = WitnessCalculator(arrays.wasm)
    with pytest.raises(MissingInputError) as ei:
        calc.calculate({"a": 3})
    assert ei.value.missing == ["b"] and ei.value.signal == "b"
    assert "'b'" in str(ei.value) and "1 of the circuit's 7" in str(ei.value)


def test_missing_input_without_sym(arrays):
    calc = WitnessCalculator(arrays.wasm.read_bytes(), name="x.wasm")
    with pytest.raises(MissingInputError) as ei:
        calc.calculate({"b": ARRAYS_INPUT["b"]})
    assert "6 of the circuit's 7" in str(ei.value)


def test_missing_bus_field_named(bus):
    calc = WitnessCalculator(bus.wasm)
    with pytest.raises(MissingInputError) as ei:
        calc.calculate({"p": {"x": 2, "y": 3}, "ps": [{"x": 4, "y": 5}, {"x": 6}], "k": 1})
    assert ei.value.missing == ["ps[1].y"]


def test_extra_input(arrays):
    calc = WitnessCalculator(arrays.wasm)
    with pytest.raises(UnknownSignalError) as ei:
        calc.calculate(dict(ARRAYS_INPUT, c=1))  # an output, not an input
    assert ei.value.signal == "c" and "'c'" in str(ei.value)
    with pytest.raises(UnknownSignalError) as ei:
        calc.calculate(dict(ARRAYS_INPUT, zzz=[]))
    assert ei.value.signal == "zzz"


@pytest.mark.parametrize(
    "b, given",
    [([[1, 2], [3, 4]], 4), ([[1, 2], [3, 4], [5, 6], [7, 8]], 8), ([1, 2, 3, 4, 5], 5), (5, 1)],
)
def test_wrong_array_size(arrays, b, given):
    with pytest.raises(SignalSizeError) as ei:
        WitnessCalculator(arrays.wasm).calculate({"a": 1, "b": b})
    e = ei.value
    assert e.signal == "b" and e.given == given and e.expected == 6
    assert ("not enough" if given < 6 else "too many") in str(e)


def test_value_not_below_prime(arrays):
    r = R[arrays.curve]
    calc = WitnessCalculator(arrays.wasm)
    for bad in (r, str(r), hex(r), r + 5, -r):
        inputs = copy.deepcopy(ARRAYS_INPUT)
        inputs["b"][2][1] = bad
        with pytest.raises(InputValueError) as ei:
            calc.calculate(inputs)
        assert ei.value.signal == "b" and "'b[2][1]'" in str(ei.value)
        assert "field prime" in str(ei.value)
    inputs = copy.deepcopy(ARRAYS_INPUT)
    inputs["b"][0][0] = r - 1
    calc.calculate(inputs)


@pytest.mark.parametrize("bad", ["abc", "1.5", "1e3", "", None, 1.5, float("nan"), "-0x5"])
def test_value_not_an_integer(arrays, bad):
    inputs = {"a": bad, "b": ARRAYS_INPUT["b"]}
    with pytest.raises(InputValueError) as ei:
        WitnessCalculator(arrays.wasm).calculate(inputs)
    assert "'a" in str(ei.value)


def test_inputs_not_an_object(arrays):
    with pytest.raises(InputError):
        WitnessCalculator(arrays.wasm).calculate([1, 2])


def test_not_a_wasm(tmp_path):
    p = tmp_path / "bad.wasm"
    p.write_bytes(b"\0asm junk")
    with pytest.raises(CircuitFormatError) as ei:
        WitnessCalculator(p)
    assert "bad.wasm" in str(ei.value)
    with pytest.raises(InputError) as ei:
        WitnessCalculator(tmp_path / "missing.wasm")
    assert "missing.wasm" in str(ei.value)


def test_not_a_circom_wasm(tmp_path):
    import wasmtime

    p = tmp_path / "other.wasm"
    p.write_bytes(wasmtime.wat2wasm('(module (func (export "f")))'))
    with pytest.raises(CircuitFormatError) as ei:
        WitnessCalculator(p)
    assert "circom" in str(ei.value)


def test_compiled_module_cache(arrays, tmp_path, monkeypatch):
    from snarkd.config.sections import ENGINE_DEFAULTS

    monkeypatch.setitem(ENGINE_DEFAULTS, "wasm_cache", str(tmp_path / "cache"))  # what cache=True means
    a = WitnessCalculator(arrays.wasm).calculate_words(ARRAYS_INPUT)
    entries = list((tmp_path / "cache").glob("*.cwasm"))
    assert len(entries) == 1
    assert np.array_equal(WitnessCalculator(arrays.wasm).calculate_words(ARRAYS_INPUT), a)  # loaded from the cache
    entries[0].write_bytes(b"corrupt")
    assert np.array_equal(WitnessCalculator(arrays.wasm).calculate_words(ARRAYS_INPUT), a)  # recompiled
    assert entries[0].read_bytes() != b"corrupt"
    monkeypatch.setitem(ENGINE_DEFAULTS, "wasm_cache", "off")
    assert np.array_equal(WitnessCalculator(arrays.wasm, cache=False).calculate_words(ARRAYS_INPUT), a)
    assert wasm_runtime.cache_dir() is None
    # the library never reads the environment: cache=True is the declared default, whatever it says; a callable
    # (an entry point's resolution) is asked when a cache is needed
    monkeypatch.setitem(ENGINE_DEFAULTS, "wasm_cache", str(tmp_path / "declared"))
    monkeypatch.setenv("SNARKD_WASM_CACHE", str(tmp_path / "from-env"))
    WitnessCalculator(arrays.wasm).calculate_words(ARRAYS_INPUT)
    assert list((tmp_path / "declared").glob("*.cwasm")) and not (tmp_path / "from-env").exists()
    WitnessCalculator(arrays.wasm, cache=lambda: str(tmp_path / "given")).calculate_words(ARRAYS_INPUT)
    assert list((tmp_path / "given").glob("*.cwasm"))


def test_missing_input_named_with_subcomponents(poseidon):
    calc = WitnessCalculator(poseidon.wasm)
    with pytest.raises(MissingInputError) as ei:
        calc.calculate({"preimage": POSEIDON_INPUT["preimage"]})
    assert sorted(ei.value.missing) == ["bound", "x"]
    assert sorted(calc.input_signals()) == [("bound", 1), ("preimage", 6), ("x", 1)]
