"""Value-dependent circuits run through ONE native program (issue 37, item 2): once a program holds
CONTROL_FLOW_AFTER paths, a request no path fits runs the wasm's own control flow natively (no recording, no new
path, no file growth), byte-identical to `snarkjs wtns calculate` for every input.

bigint.circom is a small analogue of zk-email's RSAVerifier65537 witness code: k-limb long division with a
value-dependent normalisation (leading zeros), quotient digits corrected in a loop, carries propagated in a
while, early returns from a comparison loop; torture.circom and control.circom add collatz/gcd/digit loops,
recursion, shifts by input amounts, a ternary, assert and log."""

from __future__ import annotations

import json
import random
import shutil

import pytest

import snarkd.witness.native as native_module
from snarkd.witness import CircuitAssertError, NativeCalculator, WitnessCalculator
from wfixtures import compiled, wasm_cache  # noqa: F401

N_BITS, K_LIMBS = 32, 4  # a 128-bit modulus: the circuit's loops as long as zk-email's, its witness small


def limbs(x: int, n: int = N_BITS, k: int = K_LIMBS) -> list[str]:
    return [str((x >> (n * i)) & ((1 << n) - 1)) for i in range(k)]


def value(ls, n: int = N_BITS) -> int:
    return sum(int(x) << (n * i) for i, x in enumerate(ls))


def bigint_inputs(i: int, n: int = N_BITS, k: int = K_LIMBS) -> dict:
    """A modulus whose top limb has 0..n-1 leading zeros (normalisation loops as long), a signature below it, and a
    message that is signature^65537 mod modulus for even i (the circuit's `matches` is 1) or random for odd i."""
    r = random.Random(1000 + i)
    top_bits = r.randint(1, n)
    mod = (r.getrandbits(n * (k - 1) + top_bits) | (1 << (n * (k - 1) + top_bits - 1))) | 1
    sig = r.randrange(2, mod)
    msg = pow(sig, 65537, mod) if i % 2 == 0 else r.randrange(0, mod)
    return {"signature": limbs(sig, n, k), "modulus": limbs(mod, n, k), "message": limbs(msg, n, k)}


def fresh(circuit, tmp_path, **kw) -> NativeCalculator:
    wasm = tmp_path / "circuit.wasm"
    shutil.copyfile(circuit.wasm, wasm)
    return NativeCalculator(wasm, cache=False, strict=True, **kw)


def wprog(calc) -> int:
    return calc.loaded_from.stat().st_size if calc.loaded_from else 0


def byte_identical(calc, circuit, inputs, tmp_path, tag) -> str:
    out = tmp_path / f"native-{tag}.wtns"
    before = calc.stats.as_dict()
    calc.calculate_to_file(inputs, out)
    assert out.read_bytes() == circuit.snarkjs_witness(inputs).read_bytes(), f"{tag}: {inputs}"
    after = calc.stats.as_dict()
    return next(k for k in after if after[k] != before[k])


COMPILERS = ["circom2", "circom-2.0.8", "circom-2.1.9"]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_bigint_long_division_every_input_through_one_program(compiler, curve, tmp_path):
    c = compiled("bigint.circom", curve, compiler=compiler, N=N_BITS, K=K_LIMBS)
    calc = fresh(c, tmp_path)
    n = 12
    sources = []
    sizes = []
    for i in range(n):
        sources.append(byte_identical(calc, c, bigint_inputs(i), tmp_path, i))
        sizes.append(wprog(calc))
    assert calc.stats.wasm == 0
    # recorded while the program was young, then never again: the control-flow run serves the rest
    assert calc.stats.recorded <= native_module.CONTROL_FLOW_AFTER
    assert calc.program.n_paths <= native_module.CONTROL_FLOW_AFTER
    assert calc.value_dependent
    first_control = sources.index("control")
    assert all(s == "control" for s in sources[first_control:])
    assert first_control <= native_module.CONTROL_FLOW_AFTER
    assert len(set(sizes[first_control:])) == 1  # the file does not grow with traffic
    # the circuit itself is right (pow65537 against Python's)
    from snarkd.formats.wtns import read_wtns

    for i in (0, n - 1):
        inp = bigint_inputs(i)
        w = read_wtns(c.snarkjs_witness(inp))
        assert value([w.value(1 + j) for j in range(K_LIMBS)]) == pow(value(inp["signature"]), 65537,
                                                                       value(inp["modulus"]))


def test_a_value_dependent_program_reloads_as_one_and_records_nothing(curve, tmp_path):
    c = compiled("bigint.circom", curve, N=N_BITS, K=K_LIMBS)
    calc = fresh(c, tmp_path)
    for i in range(native_module.CONTROL_FLOW_AFTER + 2):
        byte_identical(calc, c, bigint_inputs(i), tmp_path, i)
    size = wprog(calc)
    again = NativeCalculator(calc.path, cache=False, strict=True)
    assert again.value_dependent and again.program.n_paths == 1  # the file keeps the newest path (none served)
    for i in range(20, 26):
        assert byte_identical(again, c, bigint_inputs(i), tmp_path, f"again-{i}") == "control"
    assert again.stats.recorded == 0 and again.stats.wasm == 0
    assert wprog(again) == size
    assert again.describe()["value_dependent"] is True


def test_the_verdict_keeps_the_file_at_its_size_after_one_request_until_its_path_serves(tmp_path):
    """When a recording makes the program value-dependent, its file keeps the paths that have served (none here)
    and the smallest other, and the verdict: one path, no larger than after the first request, for any traffic; a
    program loaded from it is value-dependent until its path has served CONTROL_FLOW_AFTER replays, then learns."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    calc = fresh(c, tmp_path)
    sources = [byte_identical(calc, c, bigint_inputs(0), tmp_path, 0)]
    after_one = wprog(calc)
    for i in range(1, 16):
        sources.append(byte_identical(calc, c, bigint_inputs(i), tmp_path, i))
    recorded = [i for i, s in enumerate(sources) if s == "recorded"]
    assert len(recorded) == native_module.CONTROL_FLOW_AFTER and sources[recorded[-1] + 1:] == ["control"] * (
        len(sources) - recorded[-1] - 1)
    sizes = [p["bytes"] for p in calc.program.path_stats()]  # in the order recorded
    assert calc.program.n_paths == native_module.CONTROL_FLOW_AFTER and calc.meta["value_dependent"] is True
    # one path, the verdict and its paths' replays in the header
    assert wprog(calc) <= after_one + len(', "hits": 0, "value_dependent": true')
    again = NativeCalculator(calc.path, cache=False, strict=True)
    assert again.meta["hits"] == 0
    assert again.value_dependent and again._program is None  # paths that never served: not decoded until asked for
    ctl = byte_identical(again, c, bigint_inputs(41), tmp_path, "lazy")
    assert ctl == "control" and again._program is None
    assert again.program.n_paths == 1
    assert again.program.path_stats()[0]["bytes"] == min(sizes)
    kept = recorded[len(sizes) - 1 - sizes[::-1].index(min(sizes))]  # the request whose path the file kept
    served = [byte_identical(again, c, bigint_inputs(kept), tmp_path, f"kept-{k}")
              for k in range(native_module.PROBE_EVERY + native_module.CONTROL_FLOW_AFTER - 2)]  # ("lazy": 1st)
    assert served.count("native") == native_module.CONTROL_FLOW_AFTER and not again.value_dependent
    assert byte_identical(again, c, bigint_inputs(40), tmp_path, "learnt") == "recorded"
    assert "value_dependent" not in again.meta and again.program.n_paths == 2


def test_a_new_input_from_the_cli_on_a_value_dependent_file_stays_lean(tmp_path):
    """`snarkd witness --engine native` in a fresh process on a value-dependent program file (the verdict, no path
    ever served): the control-flow run's witness is snarkjs's, and the process imports neither the wasm engine (its
    validation: the file vouches for these bytes) nor logging, nor decodes the file's path."""
    from test_witness_cli import lean_cli_witness

    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    calc = fresh(c, tmp_path)
    for i in range(native_module.CONTROL_FLOW_AFTER):
        assert byte_identical(calc, c, bigint_inputs(i), tmp_path, i) == "recorded"
    assert calc.meta["value_dependent"] is True and calc.meta["hits"] == 0
    inputs = bigint_inputs(50)
    inp, out = tmp_path / "input.json", tmp_path / "cli.wtns"
    inp.write_text(json.dumps(inputs))
    lean_cli_witness(calc.path, inp, out)
    assert out.read_bytes() == c.snarkjs_witness(inputs).read_bytes()


def test_a_path_that_serves_requests_is_still_replayed(tmp_path, monkeypatch):
    """A value-dependent program keeps replaying the paths that have served requests (hits); where none has, the
    control-flow run comes at once (no partial replays that would miss anyway). Once its paths have served as many
    replays as there are paths, it learns paths again."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    calc = fresh(c, tmp_path)
    seen = bigint_inputs(7)
    monkeypatch.setattr(native_module, "CONTROL_FLOW_AFTER", 100)
    assert byte_identical(calc, c, seen, tmp_path, "first") == "recorded"
    assert byte_identical(calc, c, seen, tmp_path, "replayed") == "native"  # its path has a hit now
    assert byte_identical(calc, c, bigint_inputs(8), tmp_path, "second") == "recorded"
    monkeypatch.setattr(native_module, "CONTROL_FLOW_AFTER", calc.program.n_paths)
    assert calc.value_dependent  # 1 hit, 2 paths
    assert byte_identical(calc, c, bigint_inputs(40), tmp_path, "new") == "control"
    assert byte_identical(calc, c, seen, tmp_path, "seen-again") == "native"
    assert not calc.value_dependent  # 2 hits, 2 paths: the paths serve, learning goes on
    assert byte_identical(calc, c, bigint_inputs(41), tmp_path, "learnt") == "recorded"
    assert calc.stats.recorded == 3 and calc.stats.control == 1


def test_recurring_shapes_are_still_learnt(tmp_path):
    """A circuit with a few shapes that recur (control.circom's collatz loop on a handful of values): the first
    misses past CONTROL_FLOW_AFTER run the control flow, every PROBE_EVERY-th tries the kept paths, and as they
    serve replays the rest are learnt;
    after a few rounds every request is a replay."""
    c = compiled("control.circom", "bn128", include_circomlib=True)
    calc = fresh(c, tmp_path)
    shapes = [{"a": a, "b": 1} for a in (27, 6, 7, 97, 31)]
    for _ in range(10):
        last = [byte_identical(calc, c, inp, tmp_path, f"{inp['a']}") for inp in shapes]
    assert last == ["native"] * len(shapes)
    assert calc.stats.control >= 1 and calc.stats.wasm == 0
    assert calc.program.n_paths <= native_module.MAX_PATHS


def torture_inputs(k: int) -> dict:
    return {"a": 1000 + 37 * k, "b": 3 + k, "s": k, "v": [k, 20, 3, 40]}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_torture_loops_recursion_and_shifts_through_one_program(compiler, curve, tmp_path):
    c = compiled("torture.circom", curve, compiler=compiler)
    calc = fresh(c, tmp_path)
    for k in range(10):
        byte_identical(calc, c, torture_inputs(k), tmp_path, k)
    assert calc.stats.control >= 10 - native_module.CONTROL_FLOW_AFTER
    assert calc.program.n_paths <= native_module.CONTROL_FLOW_AFTER
    assert calc.stats.wasm == 0


def test_control_flow_logs_and_asserts_are_the_wasms(tmp_path):
    c = compiled("control.circom", "bn128", include_circomlib=True)
    calc = fresh(c, tmp_path)
    wasm = WitnessCalculator(c.wasm, cache=False)
    for a in (27, 6, 7, 97, 31, 1, 999_999):
        inputs = {"a": a, "b": a % 5}
        got, want = [], []
        w = calc.calculate(inputs, log=got.append)
        assert (w.values == wasm.calculate(inputs, log=want.append).values).all()
        assert got == want
    assert calc.stats.control >= 3 and calc.stats.wasm == 0
    # a failed assert in the control-flow run: the wasm engine's error, reported as a fallback
    fell_back = []
    calc.on_fallback = fell_back.append
    with pytest.raises(CircuitAssertError) as n:
        calc.calculate({"a": 1_000_001, "b": 0})
    with pytest.raises(CircuitAssertError) as w:
        wasm.calculate({"a": 1_000_001, "b": 0})
    assert n.value.code == w.value.code and n.value.line == w.value.line
    assert fell_back and "wasm engine" in fell_back[0]


def test_the_control_flow_run_keeps_the_fuel_bound(tmp_path):
    """The wasm engine's fuel bounds the control-flow run too: a request past it is the wasm engine's error."""
    c = compiled("torture.circom", "bn128")
    calc = fresh(c, tmp_path)
    for k in range(native_module.CONTROL_FLOW_AFTER + 1):
        calc.calculate(torture_inputs(k))
    assert calc.value_dependent
    res = calc._run([(p.hash, p.data) for p in calc.prepare(torture_inputs(50))])
    assert res.ok
    tight = native_module.NativeCalculator(calc.path, cache=False, fuel=50)
    res = tight._run([(p.hash, p.data) for p in tight.prepare(torture_inputs(50))])
    assert not res.ok and res.error_kind == "circuit" and "step budget" in res.message
