"""The compiled witness library (snarkd.witness.compiled, round 27): a circom .wasm translated to C++, built by the
system's compiler, kept beside the .wasm as CIRCUIT.wasm.wso under the user's HMAC, run by the native engine where
it would run the interpreter's control-flow run (value-dependent circuits).

One library per circuit and curve for the whole session (built at -O1: the compiler's time is most of this file's;
one test builds at the product's -O3). Witnesses byte for byte against `snarkjs wtns calculate`, in process and
through `snarkd witness`; an assert gives the interpreter's error and exit code; a tampered or stale library is
refused, not loaded; mutated modules never crash the process (a refusal or a trap); no compiler is a clear message."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

import snarkd.witness.native as native_module
from snarkd.witness import CircuitAssertError, NativeCalculator
from snarkd.witness import compiled as compiled_mod
from wfixtures import compiled, wasm_cache  # noqa: F401

from test_native_control_flow import K_LIMBS, N_BITS, bigint_inputs

pytestmark = pytest.mark.skipif(compiled_mod.compiler() is None, reason="no C++ compiler")

TEST_OPT = "-O1"


def _copy(circuit, folder):
    folder.mkdir(parents=True, exist_ok=True)
    wasm = folder / "circuit.wasm"
    shutil.copyfile(circuit.wasm, wasm)
    return wasm


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """(circuit, curve) -> (Compiled, folder with circuit.wasm and its .wso), each built once per session."""
    cache = {}

    def get(name: str, curve: str = "bn128", **params):
        key = (name, curve, tuple(sorted(params.items())))
        if key not in cache:
            c = compiled(name, curve, include_circomlib=name == "control.circom", **params)
            folder = tmp_path_factory.mktemp(f"wso-{name.split('.')[0]}-{curve}")
            wasm = _copy(c, folder)
            calc = NativeCalculator(wasm, cache=False, strict=True)
            info = calc.compile(opt=TEST_OPT)
            assert info["built"] and os.path.exists(info["path"])
            cache[key] = (c, folder)
        return cache[key]

    return get


def _with_library(c, src_folder, tmp_path):
    """A fresh folder with the circuit's .wasm and the session's library (no .wprog)."""
    wasm = _copy(c, tmp_path / "w")
    shutil.copyfile(src_folder / "circuit.wasm.wso", tmp_path / "w" / "circuit.wasm.wso")
    return wasm


def _value_dependent(calc, inputs_of, start: int = 0) -> int:
    """Drive a fresh calculator to where a new input runs the control flow: the value-dependent verdict
    (CONTROL_FLOW_AFTER recordings), or, with a compiled library kept, the first miss after one recorded path (round
    35: the library serves it, nothing more is recorded); the next index."""
    i = start
    while not calc.value_dependent and not calc.compiled_runs:
        calc.calculate_bytes(inputs_of(i))
        i += 1
    return i


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_bigint_compiled_byte_identical(built, curve, tmp_path):
    c, folder = built("bigint.circom", curve, N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    calc = NativeCalculator(wasm, cache=False, strict=True)
    i = _value_dependent(calc, bigint_inputs)
    runs, control = calc.compiled_runs, calc.stats.control
    for k in range(i, i + 4):
        out = tmp_path / f"o{k}.wtns"
        calc.calculate_to_file(bigint_inputs(k), out)
        assert out.read_bytes() == c.snarkjs_witness(bigint_inputs(k)).read_bytes(), k
    assert calc.compiled_runs == runs + 4 and calc.stats.control == control + 4 and calc.stats.wasm == 0
    assert calc.compiled_library.endswith(".wso")


def _inputs_for(c, i: int) -> dict:
    """Inputs of control.circom (a collatz loop, \\, %, a ternary, an index from a value, assert, log) and
    torture.circom (loops, recursion, shifts by input amounts) by index."""
    from test_native_control_flow import torture_inputs

    if "control" in c.name:
        a = [27, 6, 7, 97, 31, 1, 999_999, 12345, 871, 77031][i % 10] + 1000 * (i // 10)
        return {"a": a, "b": a % 5}
    return torture_inputs(i)


@pytest.mark.parametrize("name", ["control.circom", "torture.circom"])
def test_cli_compiled_byte_identical(built, name, tmp_path):
    """Through `snarkd witness` (a fresh process per input), once the program is value-dependent: the compiled
    library runs (--timings names it) and every .wtns equals snarkjs's."""
    c, folder = built(name)
    wasm = _with_library(c, folder, tmp_path)
    calc = NativeCalculator(wasm, cache=False, strict=True)
    i = _value_dependent(calc, lambda k: _inputs_for(c, k))
    calc.close()
    for k in range(i, i + 3):
        inputs = _inputs_for(c, k)
        inp, out = tmp_path / f"in{k}.json", tmp_path / f"o{k}.wtns"
        inp.write_text(json.dumps(inputs))
        proc = subprocess.run([sys.executable, "-m", "snarkd", "witness", "--engine", "native", "--quiet", "--timings",
                               str(wasm), str(inp), str(out)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert "witness (compiled)" in proc.stderr, proc.stderr
        assert out.read_bytes() == c.snarkjs_witness(inputs).read_bytes(), k


def test_assert_and_logs_as_the_interpreter(built, tmp_path):
    """log() output of a compiled run is the wasm's; a failing assert in a compiled run gives the error the
    interpreter's path gives (the wasm engine's: same message, code and line, so the same exit code), said as a
    fallback."""
    from snarkd.witness import WitnessCalculator

    c, folder = built("control.circom")
    wasm = _with_library(c, folder, tmp_path)
    fell_back = []
    calc = NativeCalculator(wasm, cache=False, strict=True, on_fallback=fell_back.append)
    i = _value_dependent(calc, lambda k: _inputs_for(c, k))
    runs = calc.compiled_runs
    ref = WitnessCalculator(c.wasm, cache=False)
    for k in range(i, i + 3):
        got, want = [], []
        w = calc.calculate(_inputs_for(c, k), log=got.append)
        assert (w.values == ref.calculate(_inputs_for(c, k), log=want.append).values).all()
        assert got == want and got
    assert calc.compiled_runs == runs + 3
    bad = {"a": 1_000_001, "b": 0}
    with pytest.raises(CircuitAssertError) as got:
        calc.calculate(bad)
    plain = NativeCalculator(wasm, cache=False, strict=True, compiled="off")
    assert plain.program.n_paths  # (the .wprog the first calculator saved: the interpreter's paths)
    with pytest.raises(CircuitAssertError) as want:
        plain.calculate(bad)
    assert str(got.value) == str(want.value)
    assert (got.value.code, got.value.line) == (want.value.code, want.value.line)
    assert fell_back and "wasm engine" in fell_back[-1]
    assert plain.compiled_library is None


def test_tampered_library_refused(built, tmp_path, caplog):
    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    lib = tmp_path / "w" / "circuit.wasm.wso"
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 1  # a byte of the library's code
    lib.write_bytes(bytes(data))
    messages = []
    calc = NativeCalculator(wasm, cache=False, strict=True, on_fallback=messages.append)
    i = _value_dependent(calc, bigint_inputs)
    out = tmp_path / "o.wtns"
    calc.calculate_to_file(bigint_inputs(i), out)  # the interpreter's control-flow run instead
    assert out.read_bytes() == c.snarkjs_witness(bigint_inputs(i)).read_bytes()
    assert calc.compiled_runs == 0 and calc.stats.control == 1
    assert any("compiled witness library refused" in m and "tag does not match" in m for m in messages), messages


def test_two_libraries_in_one_process(built):
    """Two circuits' libraries loaded in one process each run their own circuit (the loader must not take the second
    for the first: both were opened as /proc/self/fd/N)."""
    runs = []
    for name in ("ops.circom", "control.circom"):
        c, folder = built(name)
        calc = NativeCalculator(folder / "circuit.wasm", cache=False, strict=True)
        lib = calc._compiled_program()
        inputs = {"a": "5", "b": "7", "k": "3"} if name == "ops.circom" else {"a": 27, "b": 2}
        raw = bytearray(32 * calc.witness_size)
        status, message, _, _ = lib.run([(q.hash, q.data) for q in calc.prepare(inputs)],
                                        raw, calc.witness_size)
        assert status == 0, (name, message)
        assert bytes(raw) == c.snarkjs_witness(inputs).read_bytes()[-len(raw):]
        runs.append(lib)
    assert runs[0] is not runs[1]


def test_concurrent_runs_each_on_a_copy(built):
    """Runs from several threads at once (a daemon's synthesis workers): each on a loaded copy of its own, every
    witness exact."""
    from concurrent.futures import ThreadPoolExecutor

    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    calc = NativeCalculator(folder / "circuit.wasm", cache=False, strict=True)
    lib = calc._compiled_program()

    def one(k):
        inputs = bigint_inputs(k)
        raw = bytearray(32 * calc.witness_size)
        enc = [(q.hash, q.data) for q in calc.prepare(inputs)]
        for _ in range(5):
            status, message, _, _ = lib.run(enc, raw, calc.witness_size)
            assert status == 0, message
        return bytes(raw) == c.snarkjs_witness(inputs).read_bytes()[-len(raw):]

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(one, range(8)))
    assert 1 <= lib.copies <= 4


def test_stale_library_refused(built, tmp_path):
    """Another circuit's library beside this .wasm: its identity (the wasm's SHA-256) does not match."""
    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    other, other_folder = built("control.circom")
    wasm = _copy(c, tmp_path / "w")
    shutil.copyfile(other_folder / "circuit.wasm.wso", tmp_path / "w" / "circuit.wasm.wso")
    with pytest.raises(compiled_mod.LibraryError, match="stale|tag does not match"):
        compiled_mod.load([str(tmp_path / "w" / "circuit.wasm.wso")], "0" * 64, "bn128")
    messages = []
    calc = NativeCalculator(wasm, cache=False, strict=True, on_fallback=messages.append)
    assert calc.compiled_library is None and messages


def test_setting_off(built, tmp_path, monkeypatch):
    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    monkeypatch.setenv("SNARKD_WITNESS_COMPILED", "off")
    from snarkd.cli.witness import compiled_setting

    calc = NativeCalculator(wasm, cache=False, strict=True, compiled=compiled_setting)
    i = _value_dependent(calc, bigint_inputs)
    calc.calculate_bytes(bigint_inputs(i))
    assert calc.compiled_runs == 0 and calc.stats.control == 1 and calc.compiled_library is None


def test_the_setting_from_env_agrees_with_the_config():
    """`snarkd witness` reads [witness] compiled without the config layer (config/witness.py): the declared choices,
    default and variable, and the same value as the config layer for every environment (None where it refuses)."""
    from snarkd.config import Config, ConfigError
    from snarkd.config.settings import BY_NAME
    from snarkd.config.witness import COMPILED_DEFAULT, COMPILED_ENV, compiled_from_env

    s = BY_NAME["witness.compiled"]
    assert s.default == COMPILED_DEFAULT and s.env == COMPILED_ENV
    for raw in (None, "auto", "off", "Off", "on", "", " off"):
        env = {} if raw is None else {COMPILED_ENV: raw}
        try:
            expected = Config.defaults(env).witness.compiled
        except ConfigError:
            expected = None
        assert compiled_from_env(env) == expected, raw


def test_no_compiler_clear_message(tmp_path, monkeypatch):
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    wasm = _copy(c, tmp_path / "w")
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    calc = NativeCalculator(wasm, cache=False, strict=True)
    with pytest.raises(compiled_mod.CompileError, match="no C\\+\\+ compiler"):
        calc.compile()
    inp, out = tmp_path / "in.json", tmp_path / "o.wtns"
    inp.write_text(json.dumps(bigint_inputs(0)))
    proc = subprocess.run([sys.executable, "-m", "snarkd", "witness", "--compile", "--quiet", str(wasm), str(inp),
                           str(out)], capture_output=True, text=True, env={**os.environ, "CXX": "/nonexistent/c++"})
    assert proc.returncode == 0 and "no C++ compiler" in proc.stderr, proc.stderr
    assert out.read_bytes() == c.snarkjs_witness(bigint_inputs(0)).read_bytes()
    assert not (tmp_path / "w" / "circuit.wasm.wso").exists()


def test_cli_compile_o3(tmp_path):
    """The product's -O3 build through `snarkd witness --compile-tier full`: built, said with its time and size,
    then kept; nothing half-written left beside it (round 33: `--compile` alone builds the fast tier)."""
    c = compiled("ops.circom", "bn128")
    wasm = _copy(c, tmp_path / "w")
    inputs = {"a": "123456789", "b": "987654321987654321987654321", "k": "7"}
    inp, out = tmp_path / "in.json", tmp_path / "o.wtns"
    inp.write_text(json.dumps(inputs))
    cmd = [sys.executable, "-m", "snarkd", "witness", "--compile-tier", "full", "--quiet", str(wasm), str(inp),
           str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "compiled witness library (full tier) built in" in proc.stderr and "-O3" in proc.stderr, proc.stderr
    assert out.read_bytes() == c.snarkjs_witness(inputs).read_bytes()
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["circuit.wasm", "circuit.wasm.wprog",
                                                                  "circuit.wasm.wso"]
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 0 and "(full tier) already built" in again.stderr, again.stderr
    assert "built in" not in again.stderr
    # the library itself runs the circuit exactly (ops.circom is value-independent: the engine replays it, so the
    # library is called directly here)
    calc = NativeCalculator(wasm, cache=False, strict=True)
    lib = calc._compiled_program()
    raw = bytearray(32 * calc.witness_size)
    prepared = calc.prepare(inputs)
    status, message, code, _ = lib.run([(p.hash, p.data) for p in prepared], raw,
                                       calc.witness_size)
    assert status == 0, message
    assert bytes(raw) == bytes(calc.calculate_bytes(inputs)[0])


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_every_operator_on_edge_values(built, curve):
    """ops.circom (every operator; values near p, 2^k edges, shifts by any amount, negative shifts) through the
    library directly, against snarkjs: the native field functions of both fields."""
    c, folder = built("ops.circom", curve)
    edge_values_exact(c, NativeCalculator(folder / "circuit.wasm", cache=False, strict=True), curve)


def edge_values_exact(c, calc, curve: str) -> None:
    """ops.circom's operators on edge values through the library beside calc's .wasm: every witness snarkjs's."""
    from test_native_exact import R

    lib = calc._compiled_program()
    assert lib is not None
    p = R[curve]
    half = (p - 1) // 2
    values = [0, 1, 2, 7, 2**31 - 1, 2**31, 2**32, 2**63, 2**64 - 1, 2**64, 2**128, 2**200 + 3, half, half + 1,
              p - 1, p - 2, p - 2**32, p - 2**64]
    r = random.Random(3)
    for n in range(8):
        inputs = {"a": str(r.choice(values)), "b": str(r.choice(values[1:]) if n % 3 else r.randrange(1, p)),
                  "k": str(r.choice([0, 1, 5, 63, 64, 200, 253, 254, 255, 256, 300, p - 1, p - 64, r.randrange(p)]))}
        raw = bytearray(32 * calc.witness_size)
        prepared = calc.prepare(inputs)
        status, message, code, _ = lib.run([(q.hash, q.data) for q in prepared], raw,
                                           calc.witness_size)
        assert status == 0, (inputs, message)
        assert bytes(raw) == c.snarkjs_witness(inputs).read_bytes()[-len(raw):], inputs


def _mutations(data: bytes, n: int, seed: int):
    r = random.Random(seed)
    for _ in range(n):
        b = bytearray(data)
        for _ in range(r.randint(1, 8)):
            k = r.randrange(len(b))
            b[k] = r.randrange(256) if r.random() < 0.7 else b[k] ^ (1 << r.randrange(8))
        yield bytes(b)


def test_translator_refuses_or_translates_mutants(tmp_path):
    """Mutated circuit modules: the translator refuses them (Refused) or translates them; never another exception."""
    from snarkd.witness.compiled.translate import Refused, translate

    data = compiled("control.circom", "bn128", include_circomlib=True).wasm.read_bytes()
    refused = translated = 0
    for m in _mutations(data, 300, 5):
        try:
            translate(m)
            translated += 1
        except Refused:
            refused += 1
    assert refused + translated == 300 and refused > 0


# A circom-shaped module (its imports and exports) whose getWitness does something hostile, chosen by the input's
# first word: load past the memory (1), store past it (2), unreachable (3), divide by zero (4), call_indirect with
# the wrong type (5), recursion without end (6), a loop without end (7), grow past the limit then load (8),
# memory.fill past the end (9); 0 writes the value. Imports and exports as circom's.
# The runtime imports and the exports every circom module has (the modules below are circom's shape, by hand)
_RUNTIME_IMPORTS = """  (import "runtime" "exceptionHandler" (func $exc (param i32)))
  (import "runtime" "printErrorMessage" (func $pem))
  (import "runtime" "writeBufferMessage" (func $wbm))
  (import "runtime" "showSharedRWMemory" (func $ssm))
"""
# The functions every hand-written module below has alike: the shared memory's reader (at 128), init and
# setInputSignal doing nothing, BN254's prime written where the reader reads
_READ_INIT_PRIME = """  (func $readSharedRWMemory (param i32) (result i32)
    (i32.load (i32.add (i32.const 128) (i32.shl (local.get 0) (i32.const 2)))))
  (func $init (param i32))
  (func $setInputSignal (param i32 i32 i32))
  (func $getRawPrime
    (i64.store (i32.const 128) (i64.const 0x43E1F593F0000001))
    (i64.store (i32.const 136) (i64.const 0x2833E84879B97091))
    (i64.store (i32.const 144) (i64.const 0xB85045B68181585D))
    (i64.store (i32.const 152) (i64.const 0x30644E72E131A029)))
"""
_CIRCOM_EXPORTS = """  (export "getFieldNumLen32" (func $getFieldNumLen32))
  (export "getWitnessSize" (func $getWitnessSize))
  (export "getSharedRWMemoryStart" (func $getSharedRWMemoryStart))
  (export "writeSharedRWMemory" (func $writeSharedRWMemory))
  (export "readSharedRWMemory" (func $readSharedRWMemory))
  (export "init" (func $init))
  (export "setInputSignal" (func $setInputSignal))
  (export "getWitness" (func $getWitness))
  (export "getRawPrime" (func $getRawPrime))
  (export "getMessageChar" (func $getMessageChar))
  (export "memory" (memory 0)))
"""

HOSTILE_WAT = """
(module
  (type $v (func))
  (type $i (func (param i32)))
""" + _RUNTIME_IMPORTS + """  (memory 2)
  (table 2 funcref)
  (elem (i32.const 0) $getRawPrime $init)
  (global $mode (mut i32) (i32.const 0))
  (data (i32.const 1024) "PRIME")
  (func $getFieldNumLen32 (result i32) (i32.const 8))
  (func $getWitnessSize (result i32) (i32.const 1))
  (func $getSharedRWMemoryStart (result i32) (i32.const 0))
  (func $writeSharedRWMemory (param i32 i32)
    (if (i32.eqz (local.get 0)) (then (global.set $mode (local.get 1))))
    (i32.store (i32.add (i32.const 64) (i32.shl (local.get 0) (i32.const 2))) (local.get 1)))
""" + _READ_INIT_PRIME + """  (func $rec (param i32) (result i32) (i32.add (call $rec (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))
  (func $getMessageChar (result i32) (i32.const 0))
  (func $getWitness (param i32)
    (local $m i32)
    (local.set $m (global.get $mode))
    (if (i32.eq (local.get $m) (i32.const 1)) (then (drop (i32.load (i32.const 0x7FFFFFF0)))))
    (if (i32.eq (local.get $m) (i32.const 2)) (then (i64.store (i32.const 131070) (i64.const 1))))
    (if (i32.eq (local.get $m) (i32.const 3)) (then unreachable))
    (if (i32.eq (local.get $m) (i32.const 4)) (then (drop (i32.div_u (i32.const 1) (i32.sub (local.get $m) (i32.const 4))))))
    (if (i32.eq (local.get $m) (i32.const 5)) (then (call_indirect (type $v) (i32.const 1))))
    (if (i32.eq (local.get $m) (i32.const 6)) (then (drop (call $rec (i32.const 0)))))
    (if (i32.eq (local.get $m) (i32.const 7)) (then (loop $l (br $l))))
    (if (i32.eq (local.get $m) (i32.const 8)) (then
      (drop (memory.grow (i32.const 100000)))
      (drop (i32.load (i32.const 200000)))))
    (if (i32.eq (local.get $m) (i32.const 9)) (then (memory.fill (i32.const 100) (i32.const 0) (i32.const 200000))))
    (if (i32.eq (local.get $m) (i32.const 10)) (then (call $exc (i32.const 4))))
    (i32.store (i32.const 0) (i32.const 42)))
""" + _CIRCOM_EXPORTS

HOSTILE_RUN = """
import struct, sys
from snarkd.witness import compiled as C
lib = C.load([sys.argv[1]], sys.argv[2], "bn128")
for mode in range(11):
    out = bytearray(32)
    inputs = [(0, struct.pack("<8I", mode, 0, 0, 0, 0, 0, 0, 0))]
    status, message, code, _ = lib.run(inputs, out, 1, max_memory=4 << 20, fuel=10**7)
    print(mode, status, code, message, flush=True)
"""


def test_hostile_module_traps_never_crash(tmp_path):
    """Out-of-bounds loads and stores, unreachable, division by zero, an indirect call of the wrong type, endless
    recursion, an endless loop (fuel), memory.grow past the limit, memory.fill past the end, circom's exception: each
    an error returned from the library; the process lives (a child here, so that a crash would show as a signal)."""
    import hashlib

    import wasmtime

    wasm = bytes(wasmtime.wat2wasm(HOSTILE_WAT))
    sha = hashlib.sha256(wasm).hexdigest()
    info = compiled_mod.build(wasm, sha, "bn128", [str(tmp_path / "h.wasm.wso")], opt="-O0")
    proc = subprocess.run([sys.executable, "-c", HOSTILE_RUN, info["path"], sha], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    rows = {int(line.split()[0]): line.split(None, 3)[1:] for line in proc.stdout.splitlines()}
    assert rows[0][0] == "0"
    expect = {1: "out of bounds", 2: "out of bounds", 3: "unreachable", 4: "integer divide by zero",
              5: "indirect call type mismatch", 6: "call stack exhausted", 7: "all fuel consumed",
              8: "out of bounds", 9: "out of bounds", 10: "circom exception"}
    for mode, text in expect.items():
        status, code, message = rows[mode][0], rows[mode][1], rows[mode][2] if len(rows[mode]) > 2 else ""
        assert status == "1" and text in message, (mode, rows[mode])
    assert rows[10][1] == "4"


def test_translator_refuses_foreign_imports():
    import wasmtime

    from snarkd.witness.compiled.translate import Refused, translate

    foreign = HOSTILE_WAT.replace('(import "runtime" "showSharedRWMemory" (func $ssm))',
                                  '(import "env" "system" (func $ssm))')
    with pytest.raises(Refused, match="import"):
        translate(wasmtime.wat2wasm(foreign))
    no_export = HOSTILE_WAT.replace('(export "getWitness" (func $getWitness))', "")
    with pytest.raises(Refused, match="getWitness"):
        translate(wasmtime.wat2wasm(no_export))


def test_checked_bytes_that_are_no_library_refused(tmp_path):
    """The native loader (_witness.CompiledLib, a memfd dlopen'd: round 28, no ctypes) refuses bytes that are not a
    shared object and a shared object without the entry's functions; through CompiledProgram each is a LibraryError
    naming the file, which the engine reports before running the interpreter."""
    from snarkd.native import _witness

    with pytest.raises(ValueError, match="cannot be loaded"):
        _witness.CompiledLib(b"\x7fELF but not one" + bytes(200))
    src = tmp_path / "other.cpp"
    src.write_text('extern "C" int snarkd_wc_abi() { return 1001; }\n')  # the ABI alone: no run, no messages
    so = tmp_path / "other.so"
    subprocess.run([*compiled_mod.compiler(), "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    with pytest.raises(ValueError, match="not a compiled witness library"):
        _witness.CompiledLib(so.read_bytes())
    with pytest.raises(compiled_mod.LibraryError, match="other.wso: not a compiled witness library"):
        compiled_mod.CompiledProgram(str(tmp_path / "other.wso"), memoryview(so.read_bytes()), {})


def test_loaded_library_file_is_sealed(built):
    """The memory file a library was loaded from is sealed before dlopen: neither written nor resized after (the
    checked bytes stay the mapped ones), and the seals themselves cannot be lifted."""
    import fcntl

    _, folder = built("ops.circom")
    calc = NativeCalculator(folder / "circuit.wasm", cache=False, strict=True)
    lib = calc._compiled_program()
    fd = lib._free[0].fd
    assert fd >= 0 and os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:snarkd-witness.so")
    with pytest.raises(PermissionError):
        os.pwrite(fd, b"\0", 0)
    with pytest.raises(PermissionError):
        os.ftruncate(fd, 1)
    seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    want = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
    assert seals & want == want


# Round 29: a loaded copy keeps its linear memory between runs. A module whose getWitness, by the input's first word,
# writes markers over a data segment, into the initial pages and into grown ones (above 64 MiB for mode 3, past the
# part a copy keeps) and then traps (1, 3), or reads all of those back into the witness (2): memory.size at the start,
# the data segment's first word, the markers' places, memory.grow's result against the limit, the grown pages'.
RESET_WAT = """
(module
""" + _RUNTIME_IMPORTS + """  (memory 2)
  (global $mode (mut i32) (i32.const 0))
  (data (i32.const 1024) "PRIM")
  (func $getFieldNumLen32 (result i32) (i32.const 8))
  (func $getWitnessSize (result i32) (i32.const 1))
  (func $getSharedRWMemoryStart (result i32) (i32.const 0))
  (func $writeSharedRWMemory (param i32 i32)
    (if (i32.eqz (local.get 0)) (then (global.set $mode (local.get 1)))))
""" + _READ_INIT_PRIME + """  (func $getMessageChar (result i32) (i32.const 0))
  (func $getWitness (param i32)
    (local $m i32)
    (local.set $m (global.get $mode))
    (if (i32.eq (local.get $m) (i32.const 1)) (then
      (i32.store (i32.const 1024) (i32.const 0x5A5A5A5A))
      (i32.store (i32.const 20) (i32.const 0x5A5A5A5A))
      (i32.store (i32.const 2000) (i32.const 0x5A5A5A5A))
      (drop (memory.grow (i32.const 3)))
      (i32.store (i32.const 196616) (i32.const 0x5A5A5A5A))
      unreachable))
    (if (i32.eq (local.get $m) (i32.const 3)) (then
      (drop (memory.grow (i32.const 1100)))
      (i32.store (i32.const 196616) (i32.const 0x5A5A5A5A))
      (i32.store (i32.const 72089600) (i32.const 0x5A5A5A5A))
      unreachable))
    (if (i32.eq (local.get $m) (i32.const 2)) (then
      (i32.store (i32.const 0) (memory.size))
      (i32.store (i32.const 4) (i32.load (i32.const 1024)))
      (i32.store (i32.const 8) (i32.load (i32.const 2000)))
      (i32.store (i32.const 12) (memory.grow (i32.const 1200)))
      (i32.store (i32.const 16) (memory.grow (i32.const 3)))
      (i32.store (i32.const 24) (i32.load (i32.const 196616)))
      (if (i32.gt_u (memory.size) (i32.const 1101)) (then
        (i32.store (i32.const 28) (i32.load (i32.const 72089600))))))))
""" + _CIRCOM_EXPORTS


@pytest.fixture(scope="module")
def reset_lib(tmp_path_factory):
    import hashlib

    import wasmtime

    wasm = bytes(wasmtime.wat2wasm(RESET_WAT))
    sha = hashlib.sha256(wasm).hexdigest()
    dest = tmp_path_factory.mktemp("wso-reset") / "r.wasm.wso"
    info = compiled_mod.build(wasm, sha, "bn128", [str(dest)], opt="-O0")
    return compiled_mod.load([info["path"]], sha, "bn128")


def _reset_run(lib, mode: int, max_pages: int):
    import struct

    out = bytearray(32)
    status, message, _, _ = lib.run([(0, struct.pack("<8I", mode, 0, 0, 0, 0, 0, 0, 0))], out, 1,
                                    max_memory=max_pages * 65536)
    return status, message, struct.unpack("<8i", out)


@pytest.mark.parametrize("writer", [1, 3])
def test_kept_memory_is_a_fresh_instance_each_run(reset_lib, writer):
    """A run that writes over a data segment, the initial pages and grown ones (mode 3: past the 16 MiB a copy keeps)
    and then traps; the next run on the same copy sees a fresh instance: the initial size, the data segment, zeros
    where the markers were, memory.grow's result and limit as before (1200 pages past a limit of 1103: -1)."""
    status, _, fresh = _reset_run(reset_lib, 2, 1103)
    assert status == 0
    prim = int.from_bytes(b"PRIM", "little")
    assert fresh == (2, prim, 0, -1, 2, 0, 0, 0)
    for _ in range(2):
        status, message, _ = _reset_run(reset_lib, writer, 1103)
        assert status == 1 and "unreachable" in message
        copy = reset_lib._free[-1]
        base, dirty, _ = copy.memory()
        assert base and dirty <= 16 << 20  # a copy keeps at most 16 MiB (mode 3 grew to 72 MB)
        assert _reset_run(reset_lib, 2, 1103) == (0, "", fresh)
    # past the limit of the run before: grown to 1202 pages, the address written in mode 3 reads zero
    status, _, big = _reset_run(reset_lib, 2, 1300)
    assert status == 0 and big == (2, prim, 0, 2, 1202, 0, 0, 0)
    assert reset_lib.copies == 1


def _vm_flags(base: int) -> list[str] | None:
    """The VmFlags of the mapping that starts at base (/proc/self/smaps), None where the kernel does not say."""
    start = f"{base:x}-"
    with open("/proc/self/smaps") as fh:
        found = False
        for line in fh:
            if not found:
                found = line.startswith(start)
            elif line.startswith("VmFlags:"):
                return line.split()[1:]
    return None


def test_huge_pages_setting_reaches_the_library(reset_lib):
    """_witness.set_huge_pages ([cpu] huge_pages): on, the kept linear memory is advised MADV_HUGEPAGE (the kernel's
    "hg" flag on the mapping); off, a fresh reservation without the advice; on again, advised again."""
    from snarkd.native import _witness

    if not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
        pytest.skip("no transparent huge pages in this kernel: MADV_HUGEPAGE is refused, nothing to see")
    prev = _witness.set_huge_pages(True)
    try:
        assert _witness.huge_pages() is True
        flags = {}
        for on in (True, False, True):
            _witness.set_huge_pages(on)
            assert _reset_run(reset_lib, 2, 8)[0] == 0
            base, _, advised = reset_lib._free[-1].memory()
            assert advised is on
            flags[on] = _vm_flags(base)
            if flags[on] is None:
                pytest.skip("no VmFlags in /proc/self/smaps")
            assert ("hg" in flags[on]) is on, flags[on]
    finally:
        _witness.set_huge_pages(prev)


def test_a_miss_runs_the_kept_library_not_a_recording(built, tmp_path):
    """Round 35: with a compiled library kept, a miss of the replay's guards runs the library before any
    value-dependent verdict: no ~2.3 s recording per new shape (the RSA verifier: two, before the verdict), no
    growth of the .wprog, which is kept after the first request (a later process reads it, where it would try the
    placeholder inputs again). Every witness snarkjs's; the same folder with the library turned off records as
    before."""
    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    calc = NativeCalculator(wasm, cache=False, strict=True)
    sources = []
    for k in range(5):
        raw, source = calc.calculate_bytes(bigint_inputs(k))
        sources.append(source)
        assert bytes(raw) == c.snarkjs_witness(bigint_inputs(k)).read_bytes()[-len(raw):], k
        if k == 0:  # (the program kept: here, as the RSA verifier's, placeholder inputs fail and it holds no path)
            kept, paths = (tmp_path / "w" / "circuit.wasm.wprog").read_bytes(), calc.program.n_paths
    assert sources == ["control"] * 5 and calc.compiled_runs == 5 and calc.stats.recorded == 0
    assert calc.program.n_paths == paths and (tmp_path / "w" / "circuit.wasm.wprog").read_bytes() == kept
    plain = NativeCalculator(wasm, cache=False, strict=True, compiled="off")
    raw, source = plain.calculate_bytes(bigint_inputs(5))
    assert source == "recorded" and bytes(raw) == c.snarkjs_witness(bigint_inputs(5)).read_bytes()[-len(raw):]


def test_a_program_that_cannot_be_kept_is_tried_once(built, tmp_path, monkeypatch):
    """Where no place can keep the program (program_file.save finds none), the first library run tries once and every
    later request runs without trying again (one warning in a daemon's log, not one per request); the witnesses stay
    snarkjs's."""
    from snarkd.witness import native as native_mod

    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    tries = []
    monkeypatch.setattr(native_mod.program_file, "save", lambda *a, **k: tries.append(1))  # None: nowhere to keep it
    calc = NativeCalculator(wasm, cache=False, strict=True)
    for k in range(3):
        raw, source = calc.calculate_bytes(bigint_inputs(k))
        assert source == "control" and bytes(raw) == c.snarkjs_witness(bigint_inputs(k)).read_bytes()[-len(raw):], k
    assert len(tries) == 1 and calc.compiled_runs == 3


def test_compiled_run_writes_into_the_callers_frame(built, tmp_path):
    """A request the library serves writes into the frame the caller passes (a daemon's pooled page-locked frame, as a
    replay does; round 29), every byte of it the witness snarkjs computes, even over a frame full of other bytes."""
    c, folder = built("bigint.circom", N=N_BITS, K=K_LIMBS)
    wasm = _with_library(c, folder, tmp_path)
    calc = NativeCalculator(wasm, cache=False, strict=True)
    i = _value_dependent(calc, bigint_inputs)
    frames = []

    def frame(nbytes):
        frames.append(bytearray(b"\xa5" * (nbytes + 64)))
        return frames[-1]

    runs = calc.compiled_runs
    raw, source = calc.calculate_bytes(bigint_inputs(i), frame=frame)
    assert source == "control" and calc.compiled_runs == runs + 1
    assert raw.obj is frames[-1] and len(raw) == 32 * calc.witness_size
    assert bytes(raw) == c.snarkjs_witness(bigint_inputs(i)).read_bytes()[-len(raw):]


def _instances_inputs(i: int) -> dict:
    return {"a": [(i * 7919 + 13) % 1_000_003, i * i + 5, (1 << (i % 37)) + i]}


def test_units_shared_bodies_and_huge_functions_byte_identical(tmp_path, monkeypatch):
    """Round 30's build: the program cut into translation units compiled at once and linked, functions that differ
    only in constants sharing one body (instances.circom: three instances of one template), huge functions at -O1
    (the threshold lowered until some are); witnesses equal snarkjs's through the library."""
    import hashlib

    from snarkd.witness.compiled import translate as tr

    monkeypatch.setattr(tr, "HUGE_LINES", 150)
    c = compiled("instances.circom", "bn128")
    wasm = _copy(c, tmp_path / "w")
    data = wasm.read_bytes()
    one, _ = tr.translate(data)
    assert one.count("// one body for Scale_") == 1
    assert "SNARKD_WC_HUGE int32_t" in one or "SNARKD_WC_HUGE void" in one
    units, _ = tr.translate_units(data, 3)
    assert len(units) == 3 and sum("exp_getWitness" in u for u in units) == 1
    info = compiled_mod.build(data, hashlib.sha256(data).hexdigest(), "bn128", [str(wasm) + ".wso"], opt=TEST_OPT,
                              units=3)
    assert info["units"] == 3
    # the library run directly (the recorder's replay would serve this circuit, whose branches it if-converts)
    calc = NativeCalculator(wasm, cache=False, strict=True, compiled="off")
    lib = compiled_mod.load([info["path"]], hashlib.sha256(data).hexdigest(), "bn128")
    size = calc.witness_size
    for k in range(3):
        out = bytearray(32 * size)
        status, message, _, _ = lib.run([(q.hash, q.data) for q in calc.prepare(_instances_inputs(k))], out, size)
        assert status == 0, message
        assert bytes(out) == c.snarkjs_witness(_instances_inputs(k)).read_bytes()[-32 * size:], k


def test_only_reached_functions_emitted():
    """ffwasm's 32-bit-limb field code behind the native functions is never called: not emitted (the compiler
    parsed it for nothing); every function the exports or the table reach is."""
    from snarkd.witness.compiled import translate as tr
    from snarkd.witness.compiled.wasm_parse import Module

    data = open(compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS).wasm, "rb").read()
    src, m = tr.translate(data)
    assert Module(data).names == m.names and "Fr_F1m_mul" in m.names.values()
    assert "// Fr_F1m_mul\n" not in src and "// Fr_int_mul\n" not in src
    assert "// getWitness\n" in src and "// setInputSignal\n" in src


def _roll_wat() -> str:
    """A circom-shaped module whose getWitness is unrolled code of the kind circom writes (round 32's rolls): mode 0
    48 stores at stepping addresses and values, then element i's 8 words copied to the shared memory by 8 stepping
    load/store pairs; mode 1 the same stores running off the memory's end (a trap at the 17th); mode 2 48 calls (the
    fuel: one a call) with stepping arguments."""
    fill = "".join("    (i32.store (i32.const %d) (i32.add (i32.mul (local.get 0) (i32.const 1000)) (i32.const %d)))\n"
                   % (1024 + 4 * k, 3 * k + 1) for k in range(48))
    off_end = "".join("    (i32.store (i32.const %d) (i32.const %d))\n" % (65536 - 64 + 4 * k, k) for k in range(48))
    calls = "".join("    (call $t (i32.const %d))\n" % (7 * k - 100) for k in range(48))
    copy = "".join("  (i32.store (i32.const %d) (i32.load (i32.add (local.get $b) (i32.const %d))))\n" % (128 + 4 * w, 4 * w)
                   for w in range(8))
    return """
(module
""" + _RUNTIME_IMPORTS + """  (memory 1)
  (global $mode (mut i32) (i32.const 0))
  (func $getFieldNumLen32 (result i32) (i32.const 8))
  (func $getWitnessSize (result i32) (i32.const 4))
  (func $getSharedRWMemoryStart (result i32) (i32.const 128))
  (func $writeSharedRWMemory (param i32 i32)
    (if (i32.eqz (local.get 0)) (then (global.set $mode (local.get 1))))
    (i32.store (i32.add (i32.const 128) (i32.shl (local.get 0) (i32.const 2))) (local.get 1)))
""" + _READ_INIT_PRIME + """  (func $t (param i32) (i32.store (i32.const 2048) (i32.add (i32.load (i32.const 2048)) (local.get 0))))
  (func $getMessageChar (result i32) (i32.const 0))
  (func $getWitness (param i32)
    (local $b i32)
    (if (i32.eqz (global.get $mode)) (then
""" + fill + """    ))
    (if (i32.eq (global.get $mode) (i32.const 1)) (then
""" + off_end + """    ))
    (if (i32.eq (global.get $mode) (i32.const 2)) (then
""" + calls + """    (i32.store (i32.const 1024) (i32.load (i32.const 2048)))))
  (local.set $b (i32.add (i32.const 1024) (i32.shl (local.get 0) (i32.const 5))))
""" + copy + """  )
""" + _CIRCOM_EXPORTS


def _wasmtime_witness(wasm: bytes, mode: int, size: int) -> bytes:
    import wasmtime

    store = wasmtime.Store()
    module = wasmtime.Module(store.engine, wasm)
    imports = [wasmtime.Func(store, imp.type, lambda *a: None) for imp in module.imports]
    inst = wasmtime.Instance(store, module, imports)
    ex = inst.exports(store)
    ex["writeSharedRWMemory"](store, 0, mode)
    out = b""
    for i in range(size):
        ex["getWitness"](store, i)
        out += b"".join((ex["readSharedRWMemory"](store, w) & 0xFFFFFFFF).to_bytes(4, "little") for w in range(8))
    return out


def test_rolled_runs_equal_unrolled_code(tmp_path, monkeypatch):
    """Round 32: runs of one straight-line sequence with stepping constants become C++ loops. The rolled library's
    witness equals wasmtime's; a rolled run of stores traps where the unrolled one does (out of bounds); at every fuel
    from 1 to past what the run needs, the rolled and the unrolled library give the same result (fuel is charged
    per call and per wasm loop iteration, never per rolled repetition)."""
    import hashlib
    import struct

    import wasmtime

    from snarkd.witness.compiled import translate as tr

    wasm = bytes(wasmtime.wat2wasm(_roll_wat()))
    sha = hashlib.sha256(wasm).hexdigest()
    src, _ = tr.translate(wasm)
    assert src.count("for (uint32_t k") >= 4, src  # the three modes' runs and the copy
    rolled = compiled_mod.build(wasm, sha, "bn128", [str(tmp_path / "r.wasm.wso")], opt="-O0")
    monkeypatch.setattr(tr, "ROLL_MIN_REPS", 10 ** 9)
    assert "for (uint32_t k" not in tr.translate(wasm)[0]
    plain = compiled_mod.build(wasm, sha, "bn128", [str(tmp_path / "p.wasm.wso")], opt="-O0")
    libs = [compiled_mod.load([info["path"]], sha, "bn128") for info in (rolled, plain)]

    def run(lib, mode, fuel=0):
        out = bytearray(32 * 4)
        status, message, _, _ = lib.run([(0, struct.pack("<8I", mode, 0, 0, 0, 0, 0, 0, 0))], out, 4, fuel=fuel)
        return status, message, bytes(out)

    for lib in libs:
        status, message, out = run(lib, 0)
        assert status == 0, message
        assert out == _wasmtime_witness(wasm, 0, 4)
        status, message, _ = run(lib, 1)
        assert status == 1 and "out of bounds" in message, message
        status, message, out = run(lib, 2)
        assert status == 0 and out == _wasmtime_witness(wasm, 2, 4), message
    results = [[run(lib, 2, fuel) for fuel in range(1, 400, 3)] for lib in libs]
    assert results[0] == results[1]
    assert results[0][0][0] == 1 and results[0][-1][0] == 0  # the range spans the fuel the run needs


def test_rolls_stop_where_a_constant_stops_stepping():
    """_rolls: a run's constants must each step by one amount; where one does not, the roll ends; no roll crosses
    control flow or changes the operand stack's height."""
    from snarkd.witness.compiled import translate as tr

    def seq(k, c):  # i32.const (100 + 4k); i32.const c; i32.store
        return [(0x41, 100 + 4 * k), (0x41, c), (0x36, 0)]

    code = [op for k in range(10) for op in seq(k, 5 * k)] + [op for k in range(10, 20) for op in seq(k, 77)]
    rolls = tr._rolls(None, code, {})
    assert rolls == {0: (3, 10, {0: ("i32", 100, 4), 1: ("i32", 0, 5)}), 30: (3, 10, {0: ("i32", 140, 4)})}
    # a block in the run: the parts before and after it roll on their own, none across it
    code = [op for k in range(10) for op in seq(k, 1)] + [(0x02, []), (0x0B, None)] + \
        [op for k in range(10, 20) for op in seq(k, 1)]
    assert sorted(tr._rolls(None, code, {})) == [0, 32]
    # a sequence that leaves a value on the stack each time is no roll
    code = [(0x41, k) for k in range(40)]
    assert tr._rolls(None, code, {}) == {}
