"""The compiled witness program: a circom .wasm translated to C++ (translate.py) and built by the system's C++
compiler into a shared library (CIRCUIT.wasm.wso), which the native engine runs where it would otherwise run the
wasm's control flow in its interpreter (value-dependent circuits: bigint long division, RSA).

    info = build(wasm_bytes, sha, "bn128", paths)       # explicit: `snarkd witness --compile`, `snarkd prepare
                                                          # --compile-witness`; seconds of the compiler per circuit
    lib = load(paths, sha, "bn128")                      # None where no library is kept; LibraryError if refused
    status, message, code, logs = lib.run(inputs, out, witness_size, max_memory, fuel, sanity)

The file: magic "snarkdWL" | u32 version | u32 H | H bytes of JSON header | u32 CRC-32C of the header | the
shared library's bytes | 32-byte HMAC-SHA256 tag of all that and of the identity (formats/file_trust.py, this
user's key, as the .wprog). The identity binds it to the wasm's SHA-256, the field, this file layout, the runtime's
version and the digest of every source it was built from (the translator, compiled_runtime.hpp and every header it
includes, as the compiler listed them); the header records the compiler, its version and the flags. A library runs
code when it is loaded, so nothing is loaded before the whole file's tag and identity are checked: the checked bytes
are copied into an anonymous memory file (memfd) and that is what is loaded, never the path (a file replaced after
its check is never the one loaded). A library that is refused (tampered, stale, another user's) is not loaded and
the engine says why and runs the interpreter.

Where: beside the .wasm when that directory is writable, else in the compiled-module cache ([keys] wasm_cache),
as the .wprog (program_file.candidates).
"""

from __future__ import annotations

import contextlib
import os

from snarkd.formats.file_trust import sha256  # hashlib's SHA-256 without hashlib's imports (round 34)

MAGIC = b"snarkdWL"
VERSION = 1
SUFFIX = ".wso"
MAX_BYTES = 512 << 20  # a library read before its tag is checked: bounded (RSA's is ~3 MB)
ABI = 2  # compiled_entry.hpp ENTRY_ABI
RUNTIME_VERSION = 2  # compiled_runtime.hpp RUNTIME_VERSION
OPT = "-O3"  # round 28: the RSA run 42.1 ms CPU against -O2's 45.1, for about the same compiler time
# Round 31: two tiers. "fast" (-Og, every function at that level: SNARKD_WC_HUGE empty, translate.py's head) is
# ready sooner and already runs faster than the interpreter; "full" (-O3, huge functions at -O1) is the library to
# keep. The RSA verifier at load ~11: -Og 5.7 s compiler CPU, 48 ms a witness in process; -O3 ~12 s, 39-40 ms (-O0
# costs as much as -Og and runs 133 ms; -O1 costs as much as -O3). `--compile` builds the fast one, then the full one
# over it in the same command; the tier is recorded in the file's header (under its tag): docs/witnesses.md round 31.
# Round 33: the fast tier's generated code at -Og, the runtime at -O3 (SNARKD_WC_RUNTIME_O3): a witness's time is
# mostly in the native field functions, so the RSA verifier's fast library runs as the -O3 one (37.3 ms a witness
# against 36.8; plain -Og 46.9); a static hot set of generated functions at -O3 as well bought nothing more
# (docs/witnesses.md). The native field functions come from a runtime object (SNARKD_WC_RUNTIME_EXTERN: the units
# declare them only), compiled once at -O3 and kept sealed in the compiled-module cache as the PCH is, so a build
# compiles the generated code alone: RSA's fast build 2.06 s CPU against the old fast tier's 2.29 (inline at -O3:
# 2.87); the first build, which makes the object, ~4.5 s.
RUNTIME_EXTERN = "-DSNARKD_WC_RUNTIME_EXTERN"  # the fast tier's units declare the field functions only (the object's)
TIERS = {"fast": ["-Og", "-DSNARKD_WC_HUGE=", "-DSNARKD_WC_RUNTIME_O3", RUNTIME_EXTERN], "full": [OPT]}
RTO_LEVELS = ["-O3", "-DSNARKD_WC_RUNTIME_OBJECT"]  # the runtime object's (one translation unit: the header alone)
RTO_MAGIC = b"snarkdWO"
PCH_MAGIC = b"snarkdWP"
PCH_VERSION = 1
PCH_MAX = 256 << 20  # a precompiled runtime header read before its tag is checked: bounded (g++ 12's is ~43 MB)
PCH_HEADER = "witness/compiled_runtime.hpp"  # the generated code's first include: the one a PCH can stand for
FLAGS = ["-std=c++17", "-fPIC", "-shared", "-fno-strict-aliasing", "-fvisibility=hidden", "-pthread"]
MAX_JOBS = 8  # compilers at once, at most (one per core this process may use): ~0.3-0.4 GB each on the RSA verifier
MIN_UNIT_LINES = 4000  # a program below twice this many lines is one unit: another unit costs a parse of the runtime
CURVE_MACROS = {"bn128": [], "bls12381": ["-DSNARKD_WC_BLS12_381"]}
_HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE_DIR = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "native")
_TRANSLATOR = ("translate.py", "wasm_parse.py")


class LibraryError(Exception):
    """A compiled witness library that cannot be used (refused, stale, or it failed to load)."""


class CompileError(Exception):
    """No compiled witness library could be built (no compiler, a module the translator refuses, a failed build)."""


def compiler() -> list[str] | None:
    """The C++ compiler: $CXX (split as a shell would not: one program and its words), else c++, else g++."""
    import shlex
    import shutil

    cxx = os.environ.get("CXX", "").strip()
    if cxx:
        words = shlex.split(cxx)
        return words if shutil.which(words[0]) else None
    for name in ("c++", "g++", "clang++"):
        if shutil.which(name):
            return [name]
    return None


def _digest_sources(deps: list[str], translator: bool = True) -> str:
    """The SHA-256 over the translator's sources (translator False: not them: the installed runtime object is made
    from the headers alone) and the listed headers (relative to the native directory), each file's name and bytes;
    a missing file gives a digest no library was built with."""
    h = sha256()
    for name in _TRANSLATOR if translator else ():
        h.update(b"py:" + name.encode() + b"\0")
        with open(os.path.join(_HERE, name), "rb") as fh:
            h.update(fh.read())
    for rel in deps:
        h.update(b"h:" + rel.encode() + b"\0")
        try:
            with open(os.path.join(NATIVE_DIR, rel), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"\0missing\0")
    return h.hexdigest()


def identity(wasm_sha256: str, curve: str, deps: list[str]) -> dict:
    return {"wasm_sha256": wasm_sha256, "curve": curve, "layout": VERSION, "abi": ABI, "runtime": RUNTIME_VERSION,
            "headers": list(deps), "sources": _digest_sources(deps)}


def _context(ident: dict) -> bytes:
    from snarkd.formats.json_text import dumps_sorted

    return b"wso\0" + dumps_sorted(ident).encode()


def candidates(wasm_path, wasm_sha256: str, cache_dir) -> list[str]:
    from snarkd.witness.program_file import candidates as where

    return [p[: -len(".wprog")] + SUFFIX for p in where(wasm_path, wasm_sha256, cache_dir)]


def jobs() -> int:
    """Compilers run at once: the cores this process may run on that are idle (the 1-minute load average taken off),
    at most MAX_JOBS, at least one. Another unit costs ~1.5-3 s more compiler CPU (the runtime parsed and its field
    functions compiled again, calls across units): it pays in wall time only where a core would otherwise wait
    (round 30, the RSA verifier on 2 busy vCPUs at load 3.4-4.9: 2 units 18.7 s wall against one unit's 13.8)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    n = max(1, min(MAX_JOBS, n))
    try:
        idle = n - os.getloadavg()[0]
    except (AttributeError, OSError):
        idle = n
    return max(1, min(n, int(idle + 0.5)))


def build(wasm_bytes: bytes, wasm_sha256: str, curve: str, paths: list[str], *, opt: str | None = None,
          name: str = "circuit.wasm", log=None, units: int | None = None, tier: str = "full",
          cache_dir: str | None = None) -> dict:
    """Translate, compile and write the library to the first of `paths` that takes it (atomically: a temporary
    file renamed; nothing half-written is left). The program is cut into `units` translation units (default: one
    per core, see jobs(); one for a small program) compiled at once, then linked. tier: TIERS' key (the levels);
    opt: one level instead (an experiment's). cache_dir: where the precompiled runtime header is kept: used when
    there and its tag and identity check; the full tier's build makes the fast tier's after its library is kept
    (the fast tier, on the way to a usable library, never waits for one; None: no PCH), and the fast tier's runtime
    object (its native field functions at -O3, linked in: kept there once checked, else compiled beside the units
    and kept after the library). {"path", "build_s", "bytes", "compiler", "flags", "units", "tier", "pch",
    "runtime_object" (fast: "kept" or "built")}; CompileError where none can be built."""
    import contextlib
    import subprocess
    import tempfile
    import time

    from snarkd.witness.compiled.translate import Refused, translate_units

    if curve not in CURVE_MACROS:
        raise CompileError(f"{name}: no compiled witness program for the field {curve}")
    if opt is None and tier not in TIERS:
        raise CompileError(f"{name}: no compiled library tier {tier!r} (one of {', '.join(TIERS)})")
    cxx = compiler()
    if cxx is None:
        raise CompileError("no C++ compiler found ($CXX, c++, g++ or clang++ on PATH): the compiled witness program "
                           "needs one (install g++ or set CXX); witnesses are computed as before")
    t0 = time.perf_counter()
    cpu0 = _children_cpu()
    from snarkd.witness.errors import CircuitFormatError
    from snarkd.witness.wasm_runtime import validate_module

    try:
        validate_module(bytes(wasm_bytes), name)  # the translator follows valid modules only
    except CircuitFormatError as exc:
        raise CompileError(f"no compiled witness program: {exc}") from None
    want = jobs() if units is None else max(1, int(units))
    levels = opt.split() if opt is not None else TIERS[tier]  # (an experiment's opt: its words)
    with tempfile.TemporaryDirectory(prefix="snarkd-wso-") as tmp, contextlib.ExitStack() as running:
        try:
            version = subprocess.run([*cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
            # the fast tier links the kept runtime object once its tag and identity check (its checked bytes copied
            # here, what the link reads). Where none usable is kept (a machine's first build): with a core idle
            # beside the unit (two or more idle, jobs(); a cache to keep it in) the object is compiled there at once
            # and linked (wall: the longer of the two); else (round 35) the unit compiles the runtime inline at -O3:
            # one parse of the runtime header, not the object's and the unit's one after the other on a busy
            # machine (RSA's first build, units=1, load 2.8: 4.9-5.2 s -> 4.0 s wall, 4.5 -> 3.6 s compiler CPU)
            spare = want - 1 if (opt is None and tier == "fast" and units is None and cache_dir) else 0
            rto, rto_deps, okey, make_rto, installed = None, None, None, False, False
            if opt is None and RUNTIME_EXTERN in levels:
                rto = os.path.join(tmp, "runtime.o")
                okey = _pch_key(cxx, version, _rto_flags(curve), cache_dir or tmp, "obj")
                if cache_dir:
                    rto_deps = _pch_use(okey, tmp, rto)
                if rto_deps is None:  # round 36: the one setup.py built beside the extensions, once checked
                    rto_deps = _installed_use(curve, okey["what"], rto)
                    installed = rto_deps is not None
                if rto_deps is None and spare >= 1:
                    make_rto, spare = True, spare - 1
                elif rto_deps is None:
                    rto, levels = None, [f for f in levels if f != RUNTIME_EXTERN]
            # the kept PCH checked once, before the units are cut: its checked copy is what the units read
            pch = _pch_key(cxx, version, _unit_flags(levels, curve), cache_dir) if cache_dir else None
            pch_deps = _pch_use(pch, tmp) if pch else None
        except OSError as exc:
            raise CompileError(f"{name}: the C++ compiler could not be run ({' '.join(cxx)}): {exc}") from None
        flags = [*FLAGS, *levels, *CURVE_MACROS[curve], "-I" + NATIVE_DIR]
        compile_flags = [*_unit_flags(levels, curve), "-I" + NATIVE_DIR]
        # round 33: `--compile` builds the fast tier only, so no full build may ever make the PCH: where none usable
        # is kept and a core is still idle beside the units (and the object's compiler), it makes it there, for the
        # next build (the header parsed once: RSA 3.0 s of compiler CPU against 2.0); never on a busy machine (its
        # ~1.9 s of CPU would delay the library)
        make_pch = spare >= 1 and rto is not None and pch is not None and pch_deps is None
        want -= int(make_rto) + int(make_pch)
        try:
            sources, _ = translate_units(wasm_bytes, want)
            if units is None and len(sources) > 1 and sum(src.count("\n") for src in sources) < 2 * MIN_UNIT_LINES:
                sources, _ = translate_units(wasm_bytes, 1)
        except Refused as exc:
            raise CompileError(f"{name}: no compiled witness program: {exc}") from None
        except RecursionError:
            raise CompileError(f"{name}: no compiled witness program: the module nests too deeply") from None
        so = os.path.join(tmp, "program.so")
        objs, procs, pch_job, rto_job = [], [], None, None
        try:
            if pch_deps is not None:  # its folder searched first: the compiler finds the .gch before the header
                for fl in (flags, compile_flags):
                    fl.insert(len(fl) - 1, "-I" + os.path.join(tmp, "pch"))
            # each on a core kept for it above; a failed build does not leave either running
            if make_rto:
                rto_job = _pch_start(okey, cxx, _rto_flags(curve), tmp)
                if rto_job is None:
                    raise OSError("the runtime object's compiler could not be started")
                running.callback(_pch_stop, rto_job)
                rto = rto_job[2]
            if make_pch:
                pch_job = _pch_start(pch, cxx, _unit_flags(levels, curve), tmp)
                if pch_job is not None:
                    running.callback(_pch_stop, pch_job)
            # every unit's compiler at once (the units were cut to the cores); each writes the headers it read
            # (-MMD: the identity's list, without a preprocessing pass of its own), then one link
            for k, source in enumerate(sources):
                cpp = os.path.join(tmp, f"program{k}.cpp")
                with open(cpp, "w") as fh:
                    fh.write(source)
                objs.append(os.path.join(tmp, f"program{k}.o"))
                cmd = [*cxx, *compile_flags, "-MMD", "-MF", cpp + ".d", "-c", cpp, "-o", objs[-1]]
                if len(sources) == 1 and rto is None:  # one unit: compiled and linked by one command, as before
                    cmd = [*cxx, *flags, "-MMD", "-MF", cpp + ".d", cpp, "-o", so]
                procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            failed = None
            for p in procs:
                err = p.communicate()[1]
                if p.returncode and failed is None:
                    failed = subprocess.CalledProcessError(p.returncode, p.args, stderr=err)
            procs = []
            if failed is not None:
                raise failed
            if rto_job is not None:
                got = _pch_wait(rto_job)
                if got is None:
                    raise subprocess.CalledProcessError(1, rto_job[1].args, stderr="the runtime object failed")
                rto_deps, rto_body = got
            if len(sources) > 1 or rto is not None:  # (the runtime object first: its -O3 helpers are the ones kept)
                subprocess.run([*cxx, *flags, *([rto] if rto else []), *objs, "-o", so], capture_output=True,
                               text=True, check=True)
        except subprocess.CalledProcessError as exc:
            tail = "\n".join((exc.stderr or "").strip().splitlines()[-5:])
            raise CompileError(f"{name}: the C++ compiler failed ({' '.join(cxx)}): {tail}") from None
        except OSError as exc:
            raise CompileError(f"{name}: the C++ compiler could not be run ({' '.join(cxx)}): {exc}") from None
        finally:
            for p in procs:  # an error starting a later unit: the ones started are not left running
                p.kill()
                p.wait()
        # a unit that read the PCH lists the .gch (outside the native folder) where it read the headers: the headers
        # the PCH was made from are the library's sources as well
        deps = sorted({d for k in range(len(sources)) for d in _deps(_read(os.path.join(tmp, f"program{k}.cpp.d")))}
                      | set(pch_deps or ()) | set(rto_deps or ()))
        with open(so, "rb") as fh:
            lib = fh.read()
        if len(lib) > MAX_BYTES:
            raise CompileError(f"{name}: the compiled library is {len(lib)} bytes, more than {MAX_BYTES}")
        ident = identity(wasm_sha256, curve, deps)
        build_s = time.perf_counter() - t0
        meta = {"compiler": " ".join(cxx), "compiler_version": version[0] if version else "",
                "flags": [f for f in flags[:-1] if not f.startswith("-I")], "build_s": round(build_s, 2),
                "build_cpu_s": round(_children_cpu() - cpu0, 2), "bytes": len(lib), "units": len(sources),
                "tier": tier if opt is None else "custom", "pch": pch_deps is not None}
        if opt is None and RUNTIME_EXTERN in TIERS[tier]:
            meta["runtime_object"] = ("inline" if rto is None else "built" if rto_job is not None
                                      else "installed" if installed else "kept")
        path = _save(paths, ident, meta, lib)
        if pch_job is not None:  # for the next build: kept once the library is
            _pch_finish(pch_job)
        if rto_job is not None:
            _pch_save(okey, rto_deps, rto_body)
        if path is None:
            raise CompileError(f"{name}: no writable place to keep the compiled library ({', '.join(paths)})")
        if cache_dir and opt is None and tier == "full":  # the next circuit's fast tier: its runtime parsed once
            fast = _unit_flags(TIERS["fast"], curve)
            kept = _pch_key(cxx, version, fast, cache_dir)
            if _pch_use(kept, None) is None:
                _pch_make(kept, cxx, fast, tmp)
            kept = _pch_key(cxx, version, _rto_flags(curve), cache_dir, "obj")  # and its field functions compiled
            if _pch_use(kept, None) is None:
                _pch_make(kept, cxx, _rto_flags(curve), tmp)
    return {"path": path, **meta}


def describe(info: dict) -> str:
    """What `snarkd witness` and `snarkd prepare` say of a library (one wording for both): "PATH: compiled witness
    library (TIER tier) built in ..." with the compiler, its levels and where the fast tier's runtime came from, or
    "... already built"."""
    head = f"{info['path']}: compiled witness library ({info['tier']} tier)"
    if not info.get("built"):
        return f"{head} already built"
    runtime = {"kept": ", runtime -O3 (kept object)", "built": ", runtime -O3 (object built)",
               "inline": ", runtime -O3 (inline)", "installed": ", runtime -O3 (installed object)"}.get(
        info.get("runtime_object"), ", runtime -O3" if "-DSNARKD_WC_RUNTIME_O3" in info["flags"] else "")
    return (f"{head} built in {info['build_s']:.1f} s ({info['build_cpu_s']:.1f} s compiler CPU, "
            f"{info['bytes'] / 2**20:.1f} MiB, {info['compiler']} "
            f"{' '.join(f for f in info['flags'] if f.startswith('-O'))}{runtime}"
            f"{', precompiled runtime header' if info.get('pch') else ''})")


def _rto_flags(curve: str) -> list[str]:
    """The runtime object's compile flags (its key's as well)."""
    return [f for f in [*FLAGS, *RTO_LEVELS, *CURVE_MACROS[curve]] if f != "-shared"]


# Round 36: the fast tier's runtime object built once at install time (setup.py, beside the extensions), so that a
# machine's first build compiles the circuit's unit only: RSA's first build 3.5 s of compiler CPU (the runtime inline
# at -O3) -> 2.3 s. One object per field, with a manifest: the key it was made for (compiler, its version line, the
# flags: the cache's key), the headers it was made from and their digest, and the object's SHA-256. It is the
# package's own file (as trusted as the extensions beside it, which no user key can seal at install time), so it is
# checked, not sealed: a regular file (no link), bounded, its bytes' digest the manifest's, its key this build's, its
# headers' digest today's (the headers only: the translator does not make it); the checked bytes are copied where
# the link reads them. Anything else: not used (the build goes on as before: the cache's object, or one compiled
# beside, or the runtime inline).
INSTALLED_DIR = NATIVE_DIR  # where setup.py puts them (tests point it elsewhere)
INSTALLED_NAME = "witness_runtime-{curve}"


def make_installed_runtime_objects(dest: str) -> list[str]:
    """setup.py's: compile the runtime object of each field (at once, one compiler each) into dest with its manifest
    (INSTALLED_NAME .o and .json); the paths written. Nothing where no compiler runs or one fails (a build then
    falls back at run time); a key the run-time compiler does not match is never used."""
    import json
    import subprocess
    import tempfile

    cxx = compiler()
    if cxx is None:
        return []
    try:
        version = subprocess.run([*cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    except OSError:
        return []
    written = []
    with tempfile.TemporaryDirectory(prefix="snarkd-rto-") as tmp:
        jobs_ = []
        for curve in CURVE_MACROS:
            os.makedirs(os.path.join(tmp, curve))
            key = _pch_key(cxx, version, _rto_flags(curve), dest, "obj")
            jobs_.append((curve, _pch_start(key, cxx, _rto_flags(curve), os.path.join(tmp, curve))))
        for curve, job in jobs_:
            got = _pch_wait(job)
            if got is None:
                continue
            deps, body = got
            base = os.path.join(dest, INSTALLED_NAME.format(curve=curve))
            manifest = {"what": job[0]["what"], "headers": deps, "sources": _digest_sources(deps, False),
                        "sha256": sha256(body).hexdigest(), "bytes": len(body)}
            os.makedirs(dest, exist_ok=True)
            with open(base + ".o", "wb") as fh:
                fh.write(body)
            with open(base + ".json", "w") as fh:
                json.dump(manifest, fh, sort_keys=True)
            written += [base + ".o", base + ".json"]
    return written


def _installed_use(curve: str, what: dict, dest: str) -> list[str] | None:
    """The headers the installed runtime object of this field was made from, once checked (see INSTALLED_DIR; what:
    this build's runtime-object key, _pch_key's "what") and its checked bytes written to dest; None where there is
    none or it does not check."""
    import json
    import stat

    base = os.path.join(INSTALLED_DIR, INSTALLED_NAME.format(curve=curve))
    try:
        with open(base + ".json", "rb") as fh:
            manifest = json.loads(fh.read(1 << 20))
        st = os.lstat(base + ".o")
        if not stat.S_ISREG(st.st_mode) or st.st_size > PCH_MAX:
            return None
        with open(base + ".o", "rb", opener=lambda p, f: os.open(p, f | getattr(os, "O_NOFOLLOW", 0))) as fh:
            body = fh.read(PCH_MAX + 1)
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("what") != what:
        return None
    deps = manifest.get("headers")
    if not (isinstance(deps, list) and PCH_HEADER in deps
            and all(isinstance(d, str) and ".." not in d and not d.startswith("/") for d in deps)):
        return None
    if (len(body) != manifest.get("bytes") or sha256(body).hexdigest() != manifest.get("sha256")
            or manifest.get("sources") != _digest_sources(deps, False)):
        return None
    with open(dest, "wb") as fh:
        fh.write(body)
    return deps


def _unit_flags(levels: list[str], curve: str) -> list[str]:
    """A translation unit's compile flags without the include folders: one list for a unit's compile, the PCH's key
    the build asks for, and the PCH a full build makes for the fast tier (so that the key made is the key asked)."""
    return [f for f in [*FLAGS, *levels, *CURVE_MACROS[curve]] if f != "-shared"]


def _pch_key(cxx: list[str], version: list[str], flags: list[str], cache_dir: str, kind: str = "pch") -> dict:
    """Where the precompiled runtime header for this compiler and these flags is kept, and what it is: one file per
    compiler, version line and flag set (a PCH is valid only for the options it was made with), named by their
    digest; the headers it was made from are in its identity (a changed header: stale, made again)."""
    from snarkd.formats.json_text import dumps_sorted

    what = {"compiler": list(cxx), "version": version[0] if version else "", "flags": list(flags), "pch": PCH_VERSION,
            "kind": kind}
    key = sha256(dumps_sorted(what).encode()).hexdigest()[:32]
    return {"path": os.path.join(os.fspath(cache_dir), f"wc-runtime-{key}.{'pch' if kind == 'pch' else 'o'}"),
            "what": what, "magic": PCH_MAGIC if kind == "pch" else RTO_MAGIC}


def _pch_context(pch: dict, deps: list[str]) -> bytes:
    from snarkd.formats.json_text import dumps_sorted

    ident = {**pch["what"], "headers": list(deps), "sources": _digest_sources(deps)}
    return b"wso-pch\0" + dumps_sorted(ident).encode()


def _pch_use(pch: dict, tmp: str | None, dest: str | None = None) -> list[str] | None:
    """The headers the kept PCH (or runtime object: key kind "obj", its bytes written to dest) was made from, once
    its tag and identity are checked and the checked bytes are
    written under tmp/pch (the compiler reads that copy, never the cache's file; tmp None: checked only); None where
    there is none or it is refused (stale, tampered, another user's): the build then reads the header itself, and
    the next full-tier build makes a new PCH over it."""
    from snarkd.formats.checked_header import unpack
    from snarkd.formats.file_trust import UntrustedCache, read_cache

    path = pch["path"]
    if not os.path.lexists(path):
        return None
    deps = _header_deps(path, pch["magic"], PCH_VERSION)
    if deps is None:
        return None
    try:
        data = read_cache(path, _pch_context(pch, deps), PCH_MAX)
        obj, body = unpack(data, pch["magic"], PCH_VERSION, "precompiled runtime header", ValueError)
    except (UntrustedCache, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("what") != pch["what"] or obj.get("headers") != deps:
        return None
    with contextlib.suppress(OSError):  # its last use, for the cache's bound (the oldest used go first)
        os.utime(path)
    if tmp is None:
        return deps
    if dest is not None:  # the runtime object: the checked bytes where the link reads them
        with open(dest, "wb") as fh:
            fh.write(data[body:])
        return deps
    out = os.path.join(tmp, "pch", os.path.dirname(PCH_HEADER))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(tmp, "pch", PCH_HEADER + ".gch"), "wb") as fh:
        fh.write(data[body:])
    return deps


def _pch_make(pch: dict, cxx: list[str], flags: list[str], tmp: str) -> bool:
    """Make the runtime header's PCH with the build's own flags and keep it, sealed, at pch["path"] (atomically);
    False where it cannot be made or kept (the builds go on without one)."""
    return _pch_finish(_pch_start(pch, cxx, flags, tmp))


def _pch_start(pch: dict, cxx: list[str], flags: list[str], tmp: str):
    """The PCH's compiler started (its output in tmp; key kind "obj": the runtime object's, the header compiled as
    one unit); _pch_finish waits for it and keeps it. None where it could not be started."""
    import subprocess

    gch = os.path.join(tmp, "runtime.hpp.gch")
    cmd = [*cxx, *flags, "-I" + NATIVE_DIR, "-x", "c++-header", os.path.join(NATIVE_DIR, PCH_HEADER),
           "-MMD", "-MF", gch + ".d", "-o", gch]
    if pch["what"]["kind"] == "obj":  # the runtime object: the header as one translation unit
        gch = os.path.join(tmp, "runtime-new.o")
        src = os.path.join(tmp, "runtime.cpp")
        with open(src, "w") as fh:
            fh.write(f'#include "{PCH_HEADER}"\n')
        cmd = [*cxx, *flags, "-I" + NATIVE_DIR, src, "-MMD", "-MF", gch + ".d", "-c", "-o", gch]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    return pch, proc, gch


def _pch_stop(job) -> None:
    if job[1].poll() is None:
        job[1].kill()
    job[1].wait()


def _pch_finish(job) -> bool:
    got = _pch_wait(job)
    return got is not None and _pch_save(job[0], *got)


def _pch_wait(job) -> tuple[list[str], bytes] | None:
    """(the headers it was made from, its bytes) once the job's compiler ended well; None otherwise."""
    if job is None:
        return None
    pch, proc, gch = job
    if proc.wait():
        return None
    try:
        deps = _deps(_read(gch + ".d"))
        with open(gch, "rb") as fh:
            body = fh.read()
    except OSError:
        return None
    if len(body) > PCH_MAX or PCH_HEADER not in deps:
        return None
    return deps, body


def _pch_save(pch: dict, deps: list[str], body: bytes) -> bool:
    """Kept, sealed, at pch["path"] (atomically): its header (what and the headers), its bytes and its tag."""
    from snarkd.atomic import atomic_open
    from snarkd.formats.checked_header import pack
    from snarkd.formats.file_trust import tag
    from snarkd.formats.json_text import dumps_sorted
    from snarkd.witness.program_file import save_first

    data = pack(pch["magic"], PCH_VERSION, dumps_sorted({"what": pch["what"], "headers": deps}).encode()) + body
    sealed_tag = tag(data, _pch_context(pch, deps))

    def write_to(path):
        with atomic_open(path, "wb", durable=False) as fh:
            fh.write(data)
            fh.write(sealed_tag)

    if save_first([pch["path"]], write_to) is None:
        return False
    prune_runtime_cache(os.path.dirname(pch["path"]), keep=pch["path"])
    return True


# Round 36 (issue 37: cache files bounded): the compiled-module cache's runtime files (wc-runtime-*.pch, ~44 MB each,
# and wc-runtime-*.o, ~150 KB: one per compiler, its version line and flags) are pruned after each one kept, the
# least recently used first (a use sets its modification time), until at most RUNTIME_CACHE_FILES of them and
# RUNTIME_CACHE_BYTES in all remain; the one just kept is never removed, links and other files are never touched.
# One compiler's two tiers on both fields make 4-6 such files; a machine that switches compilers or flags keeps the
# newest sets. (Constants: a [witness] setting for them needs config/, not this round's files.)
RUNTIME_CACHE_FILES = 16
RUNTIME_CACHE_BYTES = 512 << 20


def prune_runtime_cache(cache_dir: str, keep: str | None = None, max_files: int | None = None,
                        max_bytes: int | None = None) -> list[str]:
    """Remove the least recently used runtime files of cache_dir beyond the bounds (see RUNTIME_CACHE_FILES); the
    paths removed."""
    import stat

    max_files = RUNTIME_CACHE_FILES if max_files is None else max_files
    max_bytes = RUNTIME_CACHE_BYTES if max_bytes is None else max_bytes
    found = []
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return []
    for nm in names:
        if not (nm.startswith("wc-runtime-") and nm.endswith((".pch", ".o"))):
            continue
        path = os.path.join(cache_dir, nm)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((st.st_mtime_ns, nm, path, st.st_size))
    found.sort()
    count, total = len(found), sum(f[3] for f in found)
    removed = []
    for _, _, path, size in found:
        if count <= max_files and total <= max_bytes:
            break
        if keep is not None and os.path.abspath(path) == os.path.abspath(keep):
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
        count, total = count - 1, total - size
    return removed


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _deps(make_rule: str) -> list[str]:
    """The headers under the native directory a `-MM` rule lists, relative to it (sorted)."""
    words = make_rule.replace("\\\n", " ").split()
    root = os.path.realpath(NATIVE_DIR) + os.sep
    out = set()
    for w in words[1:]:
        if w.endswith(":"):
            continue
        real = os.path.realpath(w)
        if real.startswith(root):
            out.add(os.path.relpath(real, root).replace(os.sep, "/"))
    return sorted(out)


def _save(paths: list[str], ident: dict, meta: dict, lib: bytes):
    from snarkd.atomic import atomic_open
    from snarkd.formats.checked_header import pack
    from snarkd.formats.file_trust import tag
    from snarkd.formats.json_text import dumps_sorted
    from snarkd.witness.program_file import save_first

    data = pack(MAGIC, VERSION, dumps_sorted({"identity": ident, "meta": meta}).encode()) + lib
    sealed = data + tag(data, _context(ident))

    def write_to(path):
        with atomic_open(path, "wb", durable=False) as fh:
            fh.write(sealed)

    return save_first(paths, write_to)


def _header_deps(path: str, magic: bytes = MAGIC, version: int = VERSION) -> list[str] | None:
    """The header list of a library file's identity (or a PCH's), read (untrusted) to recompute the identity it
    must carry."""
    from snarkd.formats.checked_header import PREFIX, unpack

    try:
        with open(path, "rb") as fh:
            lead = fh.read(PREFIX.size)
            if len(lead) < PREFIX.size:
                return None
            hlen = PREFIX.unpack(lead)[2]
            if hlen > 1 << 20:
                return None
            buf = lead + fh.read(hlen + 4)
        obj, _ = unpack(buf, magic, version, "compiled witness library", ValueError)
        deps = obj["identity"]["headers"] if magic == MAGIC else obj["headers"]
        if isinstance(deps, list) and all(isinstance(d, str) and ".." not in d and not d.startswith("/") for d in deps):
            return deps
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def load(paths: list[str], wasm_sha256: str, curve: str):
    """The CompiledProgram of the first of `paths` that holds a library; None where none does; LibraryError where
    one is there but refused (the message says why: it is not loaded)."""
    from snarkd.formats.checked_header import unpack
    from snarkd.formats.file_trust import UntrustedCache, read_cache

    for path in paths:
        if not os.path.lexists(path):
            continue
        deps = _header_deps(path)
        if deps is None:
            raise LibraryError(f"{path}: not a compiled witness library of this snarkd (corrupt or another "
                               "version): not loaded; rebuild it with `snarkd witness --compile`")
        ident = identity(wasm_sha256, curve, deps)
        try:
            data = read_cache(path, _context(ident), MAX_BYTES)
        except UntrustedCache as exc:
            why = str(exc).removeprefix(f"{path}: ")
            raise LibraryError(f"{path}: {why}; a stale library (another .wasm, or built from another snarkd's "
                               "runtime) or a tampered one: not loaded; rebuild it with `snarkd witness --compile`"
                               ) from None
        obj, body = unpack(data, MAGIC, VERSION, "compiled witness library", LibraryError)
        if not isinstance(obj, dict) or obj.get("identity") != ident:
            raise LibraryError(f"{path}: stale (another .wasm or runtime): not loaded")
        # keyed by the header (the identity and the build's own record, covered by the tag just checked): a
        # digest of the ~1 MB body was ~0.6 ms of a one-shot `snarkd witness`; two files of one header are builds of
        # one wasm from one set of sources with the same flags, so either library serves
        key = bytes(data[:body])
        with _LOADED_LOCK:  # one load per library and process: its state (and the lock that guards it) is one
            lib = _LOADED.get(key)
            if lib is None:
                # libraries from before round 31 record no tier: they are full ones (-O3), said so once here
                meta = {"tier": "full", **(obj.get("meta") or {})}
                lib = _LOADED[key] = CompiledProgram(path, data[body:], meta)
        return lib
    return None


_LOADED: dict = {}  # the libraries loaded in this process, by their file's header (never unloaded)
_LOADED_LOCK = __import__("_thread").allocate_lock()


class CompiledProgram:
    """A loaded library (from the checked bytes, through a memfd). The module's state (its memory, globals) is the
    loaded copy's own, so one copy runs one computation at a time: concurrent callers (a daemon's synthesis workers)
    each take a free copy, and another copy of the same checked bytes is loaded when none is free (one per caller
    running at once, ~2 ms and ~1.3 MB of mappings each; never unloaded). A copy keeps its linear memory between runs
    (round 29: the memory a run wrote, at most 16 MiB; the RSA verifier's 9.3 MB), so the free list is a stack: the
    copy that ran last, its memory warm, runs next."""

    MAX_COPIES = 256

    def __init__(self, path: str, lib, meta: dict):
        import _thread

        self.path, self.meta = path, meta
        self._bytes = lib  # a read-only view of the checked file (immutable bytes): not copied
        self._lock = _thread.allocate_lock()  # the free list
        self._free = [self._load_copy()]
        self.copies = 1

    def _load_copy(self):
        """The checked bytes as a new memfd, loaded (_witness.CompiledLib: dlopen in the native module, no ctypes)."""
        from snarkd.native import _witness

        path = self.path
        try:
            lib = _witness.CompiledLib(self._bytes)
        except (OSError, ValueError) as exc:
            raise LibraryError(f"{path}: {exc}: not used; rebuild it with `snarkd witness --compile`") from None
        if lib.abi != ABI * 1000 + RUNTIME_VERSION:
            raise LibraryError(f"{path}: another ABI: not used")
        return lib

    def _take(self):
        with self._lock:
            if self._free:
                return self._free.pop()
            if self.copies >= self.MAX_COPIES:
                raise LibraryError(f"{self.path}: more than {self.MAX_COPIES} runs at once")
            self.copies += 1
        try:
            return self._load_copy()
        except BaseException:
            with self._lock:
                self.copies -= 1
            raise

    def run(self, inputs, out, witness_size: int, max_memory: int = 0, fuel: int = 0, sanity: bool = False):
        """(status, message, circom's code or None, log text): status 0 wrote witness_size * 32 bytes into `out` (a
        writable buffer at least that long). inputs: [(fnv hash, plain little-endian values, 32 bytes each)],
        encoded natively. The GIL is released during the run."""
        if len(out) < 32 * witness_size:
            raise ValueError("buffer sizes")
        copy = self._take()
        try:
            return copy.run(inputs, out, witness_size, int(max_memory or 0), int(fuel or 0), bool(sanity))
        finally:
            with self._lock:
                self._free.append(copy)
