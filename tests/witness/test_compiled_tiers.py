"""The compiled library's tiers and its precompiled runtime header (round 31, snarkd.witness.compiled): the fast tier
(-Og; round 33: its runtime at -O3) and the full one (-O3) both run the circuit exactly and are sealed alike, the
tier recorded under the tag; `snarkd witness --compile` builds the fast tier (round 33), `--compile-tier both` runs
the request on it and builds the full one over it in the same command; the PCH kept in the compiled-module cache is
used only once its tag and identity check (a tampered, stale or linked one is never handed to the compiler, and is
made again)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from snarkd.witness import NativeCalculator
from snarkd.witness import compiled as compiled_mod
from wfixtures import compiled, wasm_cache  # noqa: F401

from test_native_control_flow import K_LIMBS, N_BITS, bigint_inputs

pytestmark = pytest.mark.skipif(compiled_mod.compiler() is None, reason="no C++ compiler")


@pytest.fixture(autouse=True)
def _no_installed_runtime(tmp_path, monkeypatch):
    """These tests follow the cache's runtime object and PCH as on a machine whose install built no runtime object
    (setup.py's, round 36: its own test below points INSTALLED_DIR at one it makes)."""
    monkeypatch.setattr(compiled_mod, "INSTALLED_DIR", str(tmp_path / "no-installed-runtime"))


def _copy(c, folder):
    folder.mkdir(parents=True, exist_ok=True)
    wasm = folder / "circuit.wasm"
    shutil.copyfile(c.wasm, wasm)
    return wasm


def _meta(path) -> dict:
    from snarkd.formats.checked_header import PREFIX, unpack

    with open(path, "rb") as fh:
        lead = fh.read(PREFIX.size)
        buf = lead + fh.read(PREFIX.unpack(lead)[2] + 4)
    return unpack(buf, compiled_mod.MAGIC, compiled_mod.VERSION, "library", ValueError)[0]


def _runs_exactly(c, wasm, tmp_path, start: int = 0) -> NativeCalculator:
    """The library beside `wasm` runs the bigint circuit: every witness snarkjs's."""
    calc = NativeCalculator(wasm, cache=False, strict=True)
    lib = calc._compiled_program()
    assert lib is not None
    for k in range(start, start + 2):
        inputs = bigint_inputs(k)
        raw = bytearray(32 * calc.witness_size)
        status, message, _, _ = lib.run([(p.hash, p.data) for p in calc.prepare(inputs)], raw, calc.witness_size)
        assert status == 0, message
        want = c.snarkjs_witness(inputs).read_bytes()
        assert bytes(raw) == want[-32 * calc.witness_size:], k
    return calc


def test_pch_kept_checked_and_remade(tmp_path):
    """The full tier's build makes the fast tier's PCH in the cache; the next fast build uses it (its identity lists
    the runtime's headers all the same) and runs exactly; a PCH altered by one byte, one made from other headers
    (stale), or a link to a good one is not used (the build parses the header itself) and the next full build
    seals a new one."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)

    def build(tier, name):
        wasm = _copy(c, tmp_path / name)
        info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier=tier, cache_dir=str(cache))
        return wasm, info

    _, full = build("full", "a")
    assert full["tier"] == "full" and not full["pch"]
    kept = list(cache.glob("wc-runtime-*.pch"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1 << 20
    assert len(list(cache.glob("wc-runtime-*.o"))) == 1  # (round 33: the fast tier's runtime object as well)
    wasm, fast = build("fast", "b")
    assert fast["tier"] == "fast" and fast["pch"] and "-Og" in fast["flags"] and fast["runtime_object"] == "kept"
    header = _meta(fast["path"])
    assert header["meta"]["tier"] == "fast" and "witness/compiled_runtime.hpp" in header["identity"]["headers"]
    assert "witness/circom_field.hpp" in header["identity"]["headers"]
    _runs_exactly(c, wasm, tmp_path)

    good = kept[0].read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 1  # a byte of the compiler's own data
    kept[0].write_bytes(bytes(bad))
    wasm, fast = build("fast", "c")
    assert not fast["pch"]
    _runs_exactly(c, wasm, tmp_path, 2)

    build("full", "d")  # sealed again
    assert kept[0].read_bytes() != bytes(bad)
    assert build("fast", "e")[1]["pch"]

    # stale: the headers it was made from differ from today's (their digest is in the tag's context)
    real = compiled_mod._digest_sources
    compiled_mod._digest_sources = lambda deps: real(deps) if deps and "compiled_runtime" not in str(deps) else "0" * 64
    try:
        assert not build("fast", "f")[1]["pch"]
    finally:
        compiled_mod._digest_sources = real

    # a link is never followed, even to a good file
    target = tmp_path / "elsewhere.pch"
    shutil.copyfile(kept[0], target)
    kept[0].unlink()
    os.symlink(target, kept[0])
    assert not build("fast", "g")[1]["pch"]


def test_fast_build_makes_the_pch_where_a_core_is_idle(tmp_path, monkeypatch):
    """Round 33: `snarkd witness --compile` builds the fast tier only, so no full build may ever make the PCH: a fast
    build where none is kept and two cores or more are idle (jobs()) keeps one of them for it, beside the library's
    units; never on a busy machine (one idle core or none); the next fast build uses it (the runtime at -O3:
    SNARKD_WC_RUNTIME_O3 in its flags, so in the PCH's key) and runs exactly. Round 35: where no runtime object is
    kept either, the one idle core makes the object first (linked into this library), the PCH next; a busy machine's
    build compiles the runtime inline and makes neither."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)

    def build(name):
        wasm = _copy(c, tmp_path / name)
        return wasm, compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast", cache_dir=str(cache))

    monkeypatch.setattr(compiled_mod, "jobs", lambda: 1)
    _, busy = build("a")
    assert not busy["pch"] and busy["units"] == 1 and not list(cache.glob("wc-runtime-*.pch"))
    assert busy["runtime_object"] == "inline" and not list(cache.glob("wc-runtime-*.o"))  # (round 35)
    monkeypatch.setattr(compiled_mod, "jobs", lambda: 2)
    wasm, idle = build("b")  # one idle core beside the unit: the runtime object first (linked)
    assert not idle["pch"] and idle["units"] == 1 and idle["runtime_object"] == "built"
    assert len(list(cache.glob("wc-runtime-*.o"))) == 1 and not list(cache.glob("wc-runtime-*.pch"))
    _runs_exactly(c, wasm, tmp_path)
    wasm, idle = build("b2")  # the object kept: the idle core makes the PCH
    assert not idle["pch"] and idle["runtime_object"] == "kept"
    assert len(list(cache.glob("wc-runtime-*.pch"))) == 1
    wasm, fast = build("c")
    assert fast["pch"] and "-Og" in fast["flags"] and "-DSNARKD_WC_RUNTIME_O3" in fast["flags"]
    _runs_exactly(c, wasm, tmp_path, 2)
    # a kept PCH that no longer checks (here one byte altered; a header changed by an upgrade is the same case) is
    # not used, and an idle core makes it again: the build after that uses it
    (pch,) = cache.glob("wc-runtime-*.pch")
    raw = bytearray(pch.read_bytes())
    raw[len(raw) // 2] ^= 1
    pch.write_bytes(bytes(raw))
    _, stale = build("d")
    assert not stale["pch"] and pch.read_bytes() != bytes(raw)
    wasm, again = build("e")
    assert again["pch"]
    _runs_exactly(c, wasm, tmp_path, 3)


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_fast_tier_runtime_at_o3_exact_on_edge_values(curve, tmp_path):
    """Round 33: the fast tier compiles the runtime (both fields' native functions) at -O3 and the generated code at
    -Og: every operator of ops.circom on edge values still gives snarkjs's witness, on both fields."""
    from test_compiled import edge_values_exact

    c = compiled("ops.circom", curve)
    wasm = _copy(c, tmp_path / "w")
    calc = NativeCalculator(wasm, cache=False, strict=True)
    info = calc.compile(tier="fast")
    assert info["built"] and info["tier"] == "fast" and "-DSNARKD_WC_RUNTIME_O3" in info["flags"]
    edge_values_exact(c, calc, curve)


def test_runtime_object_kept_checked_and_remade(tmp_path, monkeypatch):
    """Round 33: the fast tier's native field functions come from a runtime object compiled at -O3, kept sealed in
    the cache as the PCH is: made beside the first fast build where a core is idle ("built", linked; on a busy
    machine the build compiles the runtime inline instead: "inline", round 35), used by the next ("kept"; its
    headers in the library's identity); one altered by one byte, one made from other headers (stale) or a link to
    a good one is never linked in (the build compiles and seals its own); without a cache every build compiles the
    runtime inline.
    Every library runs the bigint circuit exactly."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)

    def build(name, cache_dir=str(cache)):
        wasm = _copy(c, tmp_path / name)
        info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast", cache_dir=cache_dir)
        return wasm, info

    # round 35: where none is kept and no core is idle the unit compiles the runtime inline (one parse of the
    # header, nothing kept); where one is idle (jobs() >= 2) the object is compiled beside it, linked and kept
    monkeypatch.setattr(compiled_mod, "jobs", lambda: 1)
    wasm, busy = build("busy")
    assert busy["runtime_object"] == "inline" and "-DSNARKD_WC_RUNTIME_EXTERN" not in busy["flags"]
    assert "-DSNARKD_WC_RUNTIME_O3" in busy["flags"] and not list(cache.glob("wc-runtime-*.o"))
    _runs_exactly(c, wasm, tmp_path)
    monkeypatch.setattr(compiled_mod, "jobs", lambda: 2)
    wasm, first = build("a")
    assert first["runtime_object"] == "built" and "-DSNARKD_WC_RUNTIME_EXTERN" in first["flags"]
    (kept,) = cache.glob("wc-runtime-*.o")
    _runs_exactly(c, wasm, tmp_path, 2)
    wasm, second = build("b")
    assert second["runtime_object"] == "kept" and "-DSNARKD_WC_RUNTIME_EXTERN" in second["flags"]
    assert "witness/compiled_runtime.hpp" in _meta(second["path"])["identity"]["headers"]
    _runs_exactly(c, wasm, tmp_path, 3)

    good = kept.read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 1  # a byte of the object's code or data
    kept.write_bytes(bytes(bad))
    wasm, third = build("c")
    assert third["runtime_object"] == "built" and kept.read_bytes() != bytes(bad)  # made and sealed again
    _runs_exactly(c, wasm, tmp_path, 4)
    assert build("d")[1]["runtime_object"] == "kept"

    # stale: the headers it was made from differ from today's (their digest is in the tag's context)
    real = compiled_mod._digest_sources
    compiled_mod._digest_sources = lambda deps: real(deps) if deps and "compiled_runtime" not in str(deps) else "0" * 64
    try:
        assert build("e")[1]["runtime_object"] == "built"
    finally:
        compiled_mod._digest_sources = real

    # a link is never followed, even to a good file
    target = tmp_path / "elsewhere.o"
    shutil.copyfile(kept, target)
    kept.unlink()
    os.symlink(target, kept)
    wasm, linked = build("f")
    assert linked["runtime_object"] == "built"
    _runs_exactly(c, wasm, tmp_path, 6)

    wasm, alone = build("g", None)
    assert alone["runtime_object"] == "inline"
    _runs_exactly(c, wasm, tmp_path, 8)


def test_tier_is_under_the_tag(tmp_path):
    """The tier is part of the sealed header: a fast library relabelled as full is refused, not loaded."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    wasm = _copy(c, tmp_path / "w")
    info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast")
    from snarkd.formats.checked_header import CRC, PREFIX, crc32c

    raw = bytearray(open(info["path"], "rb").read())
    at = raw.index(b'"tier": "fast"')
    raw[at + 9: at + 13] = b"full"
    hlen = PREFIX.unpack_from(raw, 0)[2]  # the header's checksum made right: only the tag can tell
    CRC.pack_into(raw, PREFIX.size + hlen, crc32c(bytes(raw[PREFIX.size: PREFIX.size + hlen])))
    open(info["path"], "wb").write(bytes(raw))
    with pytest.raises(compiled_mod.LibraryError, match="tag does not match"):
        compiled_mod.load([info["path"]], sha, "bn128")
    with pytest.raises(compiled_mod.CompileError, match="no compiled library tier"):
        compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="quick")


def test_cli_both_tiers_in_one_command(tmp_path):
    """`snarkd witness --compile-tier both` on a value-dependent circuit: the fast tier built and said, then the full
    tier built over it and said (the file's tier is full at the end, nothing else left beside it; the .wtns written
    before the full tier's file); `--compile` (round 33: the fast tier, the default) builds only the fast one, a
    later `--compile` keeps it, and `--compile-tier both` then builds the full one over it. Every .wtns is
    snarkjs's."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    for folder, extra, tiers in (("both", ["--compile-tier", "both"], ["fast", "full"]), ("fast", [], ["fast"])):
        wasm = _copy(c, tmp_path / folder)
        inp, out = tmp_path / f"{folder}.json", tmp_path / f"{folder}.wtns"
        inp.write_text(json.dumps(bigint_inputs(5)))
        proc = subprocess.run([sys.executable, "-m", "snarkd", "witness", "--compile", *extra, "--quiet",
                               "--timings", str(wasm), str(inp), str(out)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        said = [t for t in ("fast", "full") if f"compiled witness library ({t} tier) built in" in proc.stderr]
        assert said == tiers, proc.stderr
        assert "-Og, runtime -O3" in proc.stderr, proc.stderr  # (round 33: the fast tier says its runtime's level)
        if tiers == ["fast", "full"]:
            assert proc.stderr.index("(fast tier)") < proc.stderr.index("(full tier)")
            assert "compile (full tier)" in proc.stderr and "-O3" in proc.stderr
            # the witness is written as soon as the fast tier has run it, not held back by the full tier's build
            assert out.stat().st_mtime_ns <= (wasm.parent / "circuit.wasm.wso").stat().st_mtime_ns
        assert out.read_bytes() == c.snarkjs_witness(bigint_inputs(5)).read_bytes()
        assert _meta(str(wasm) + ".wso")["meta"]["tier"] == tiers[-1]
        assert sorted(p.name for p in wasm.parent.iterdir()) == ["circuit.wasm", "circuit.wasm.wprog",
                                                                 "circuit.wasm.wso"]
    again = subprocess.run([sys.executable, "-m", "snarkd", "witness", "--compile", "--quiet", str(wasm), str(inp),
                            str(out)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "(fast tier) already built" in again.stderr and "(full tier)" not in again.stderr, again.stderr
    assert _meta(str(wasm) + ".wso")["meta"]["tier"] == "fast"
    again = subprocess.run([sys.executable, "-m", "snarkd", "witness", "--compile-tier", "both", "--quiet", str(wasm),
                            str(inp), str(out)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "(fast tier) already built" in again.stderr and "(full tier) built in" in again.stderr, again.stderr
    assert _meta(str(wasm) + ".wso")["meta"]["tier"] == "full"
    _runs_exactly(c, wasm, tmp_path, 7)


def test_compile_keeps_a_full_library_over_a_fast_request(tmp_path):
    """calc.compile(tier="fast") where a full library is kept: the full one serves (no build); tier="full" over a
    kept fast one builds, and the calculator's next request runs the new library."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    wasm = _copy(c, tmp_path / "w")
    calc = NativeCalculator(wasm, cache=False, strict=True)
    first = calc.compile(tier="fast")
    assert first["built"] and first["tier"] == "fast"
    assert calc._compiled_program().meta["tier"] == "fast"
    second = calc.compile(tier="full")
    assert second["built"] and second["tier"] == "full"
    assert calc._compiled_program().meta["tier"] == "full"
    third = calc.compile(tier="fast")
    assert not third["built"] and third["tier"] == "full"
    _runs_exactly(c, wasm, tmp_path, 3)


def test_a_library_without_a_tier_is_a_full_one(tmp_path):
    """A library sealed before round 31 records no tier: loaded, it reads as the full tier, so --compile's full
    build keeps it (no build) and the request runs it exactly."""
    from snarkd.formats.checked_header import PREFIX, unpack
    from snarkd.formats.file_trust import TAG_BYTES

    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    wasm = _copy(c, tmp_path / "w")
    assert NativeCalculator(wasm, cache=False, strict=True).compile(tier="full")["built"]
    path = str(wasm) + ".wso"
    with open(path, "rb") as fh:
        data = fh.read()
    obj, body = unpack(data[:PREFIX.size + PREFIX.unpack(data[:PREFIX.size])[2] + 4], compiled_mod.MAGIC,
                       compiled_mod.VERSION, "library", ValueError)
    meta = {k: v for k, v in obj["meta"].items() if k != "tier"}
    assert compiled_mod._save([path], obj["identity"], meta, data[body:-TAG_BYTES]) == path
    assert "tier" not in _meta(path)["meta"]
    calc = NativeCalculator(wasm, cache=False, strict=True)
    info = calc.compile(tier="full")
    assert not info["built"] and info["tier"] == "full"
    assert calc._compiled_program().meta["tier"] == "full"
    _runs_exactly(c, wasm, tmp_path, 5)


def test_cli_prepare_compile_witness_tiers(tmp_path):
    """`snarkd prepare --compile-tier fast` builds the fast tier only; `--compile-witness` then keeps it and builds
    the full one over it, each said with its tier."""
    from cases import build_case

    chain_circuit = build_case("chain", "bn128")
    zkey, wasm = tmp_path / "chain.zkey", tmp_path / "circuit.wasm"
    shutil.copy(chain_circuit.zkey, zkey)
    shutil.copy(chain_circuit.circuit.wasm, wasm)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "snarkd", "prepare", str(zkey), "--wasm", str(wasm), *args],
                              capture_output=True, text=True)

    res = run("--compile-tier", "fast")
    assert res.returncode == 0 and "compiled witness library (fast tier) built in" in res.stderr, res.stderr
    assert "(full tier)" not in res.stderr and _meta(str(wasm) + ".wso")["meta"]["tier"] == "fast"
    res = run("--compile-witness")
    assert res.returncode == 0, res.stderr
    assert "(fast tier) already built" in res.stderr and "compiled witness library (full tier) built in" in res.stderr
    assert _meta(str(wasm) + ".wso")["meta"]["tier"] == "full"


def test_installed_runtime_object_used_once_checked(tmp_path, monkeypatch):
    """Round 36: the runtime object setup.py builds beside the extensions (make_installed_runtime_objects: one per
    field, with a manifest) is what a first fast build links where the cache keeps none ("installed": the unit alone
    is compiled, nothing compiled beside it or inline, whatever the idle cores); its checked bytes only: one altered
    by a byte, one whose manifest names another compiler version, one made from other headers (stale), or a link to
    a good one is never linked in (the build goes on as before: inline on a busy machine). Every library runs the
    bigint circuit exactly."""
    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    inst = tmp_path / "installed"
    written = compiled_mod.make_installed_runtime_objects(str(inst))
    assert sorted(os.path.basename(p) for p in written) == sorted(
        f"witness_runtime-{f}.{e}" for f in compiled_mod.CURVE_MACROS for e in ("o", "json"))
    monkeypatch.setattr(compiled_mod, "INSTALLED_DIR", str(inst))
    obj = inst / "witness_runtime-bn128.o"
    man = inst / "witness_runtime-bn128.json"

    def build(name, cache_dir=None):
        wasm = _copy(c, tmp_path / name)
        info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast", cache_dir=cache_dir)
        return wasm, info

    monkeypatch.setattr(compiled_mod, "jobs", lambda: 1)
    for k, cache_dir in enumerate((None, str(tmp_path / "cache"))):
        wasm, info = build(f"a{k}", cache_dir)
        assert info["runtime_object"] == "installed" and "-DSNARKD_WC_RUNTIME_EXTERN" in info["flags"]
        assert "(installed object)" in compiled_mod.describe({**info, "built": True})
        assert "witness/compiled_runtime.hpp" in _meta(info["path"])["identity"]["headers"]
        _runs_exactly(c, wasm, tmp_path, 2 * k)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("wc-runtime-*"))

    good, manifest = obj.read_bytes(), json.loads(man.read_text())
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 1
    obj.write_bytes(bytes(bad))
    wasm, info = build("b")
    assert info["runtime_object"] == "inline"
    _runs_exactly(c, wasm, tmp_path, 4)
    obj.write_bytes(good)
    man.write_text(json.dumps({**manifest, "what": {**manifest["what"], "version": "another compiler 1.0"}}))
    assert build("c")[1]["runtime_object"] == "inline"
    man.write_text(json.dumps({**manifest, "sources": "0" * 64}))  # made from other headers
    assert build("d")[1]["runtime_object"] == "inline"
    man.write_text(json.dumps(manifest))
    assert build("e")[1]["runtime_object"] == "installed"
    target = tmp_path / "elsewhere.o"
    shutil.copyfile(obj, target)
    obj.unlink()
    os.symlink(target, obj)
    wasm, info = build("f")
    assert info["runtime_object"] == "inline"
    _runs_exactly(c, wasm, tmp_path, 6)


def test_runtime_cache_bounded_least_recently_used_first(tmp_path, monkeypatch):
    """Round 36 (issue 37: cache files bounded): after a runtime file is kept, the cache's wc-runtime-*.pch|.o beyond
    RUNTIME_CACHE_FILES or RUNTIME_CACHE_BYTES go, the least recently used first (a checked use sets the time);
    the one just kept, links and other files stay. A build that keeps its object prunes an older one and runs
    exactly."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    names = [f"wc-runtime-{k:032x}.{'pch' if k % 2 else 'o'}" for k in range(6)]
    for k, nm in enumerate(names):
        (cache / nm).write_bytes(b"x" * (100 + k))
        os.utime(cache / nm, ns=(10**18 + k * 10**9, 10**18 + k * 10**9))
    (cache / "circuit.wso").write_bytes(b"other")  # not a runtime file
    os.utime(cache / "circuit.wso", ns=(10**18, 10**18))
    os.symlink(cache / names[5], cache / "wc-runtime-link.o")
    removed = compiled_mod.prune_runtime_cache(str(cache), keep=str(cache / names[0]), max_files=3)
    assert sorted(os.path.basename(p) for p in removed) == sorted(names[1:4])  # the oldest but the kept one
    left = sorted(p.name for p in cache.iterdir())
    assert left == sorted([names[0], names[4], names[5], "circuit.wso", "wc-runtime-link.o"])
    assert compiled_mod.prune_runtime_cache(str(cache), max_bytes=105 + 104) == [str(cache / names[0])]
    assert compiled_mod.prune_runtime_cache(str(cache)) == []  # within the defaults

    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    data = c.wasm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    monkeypatch.setattr(compiled_mod, "jobs", lambda: 2)
    monkeypatch.setattr(compiled_mod, "RUNTIME_CACHE_FILES", 2)
    wasm = _copy(c, tmp_path / "a")
    info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast", cache_dir=str(cache))
    assert info["runtime_object"] == "built"
    kept = [p.name for p in cache.glob("wc-runtime-*") if not p.is_symlink()]
    assert len(kept) == 2 and names[5] in kept and names[4] not in kept  # the object just kept and the newest
    _runs_exactly(c, wasm, tmp_path)
    older = cache / names[5]
    os.utime(older, ns=(10**18, 10**18))
    (obj,) = [p for p in cache.glob("wc-runtime-*.o") if not p.is_symlink() and p.name not in names]
    before = obj.stat().st_mtime_ns
    wasm = _copy(c, tmp_path / "b")
    info = compiled_mod.build(data, sha, "bn128", [str(wasm) + ".wso"], tier="fast", cache_dir=str(cache))
    assert info["runtime_object"] == "kept" and obj.stat().st_mtime_ns > before  # its use is its time
