"""The compiled witness program's translator (snarkd.witness.compiled.translate) on mutated circom .wasm modules, and a
sample of what it translates built with AddressSanitizer + UndefinedBehaviorSanitizer and run.

Contract: every mutant ends in a refusal (translate.Refused) or a translation, never another exception (the
translator runs on wasmtime-validated modules in the product, on every mutant here: stricter). A translation of a
module wasmtime validates (what the product would build) compiles, and its run on the seed's inputs returns a
witness or a trap and never a sanitizer report (out-of-bounds access, use after free, signed overflow, a misaligned
or null access in the runtime or the generated code).

    report = fuzz(n, seed, sanitize=k, workdir=...)   # the seeds: wasm_target's (torture.circom by circom 2.0.8 and
                                                        # the current circom2, BN254 and BLS12-381)

The long run is bench/witness_translator_fuzz.py; tests/fuzz/test_translator_fuzz.py runs a short one."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import traceback
from pathlib import Path

import mutate_wasm
import wasm_target

# a child loads one sanitized library and runs it on each input: a witness or a trap, printed; a sanitizer report
# aborts it (non-zero exit, the report on stderr)
CHILD = r"""
import sys
from snarkd.native import _witness
so, n, ws = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lib = _witness.CompiledLib(open(so, "rb").read())
import json
cases = json.loads(sys.stdin.read())
for inputs in cases:
    out = bytearray(32 * ws)
    status, message, code, _ = lib.run([(h, bytes.fromhex(d)) for h, d in inputs], out, ws, max_memory=64 << 20,
                                       fuel=10**7)
    print(status, code, message.splitlines()[0] if message else "", flush=True)
"""


def sanitizer_env() -> dict:
    """The environment of a sanitized run: the runtimes preloaded into the (uninstrumented) interpreter, leaks not
    looked for (Python's own are many), any report fatal."""
    def lib(name):
        return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()

    env = dict(os.environ)
    env["LD_PRELOAD"] = f"{lib('libasan.so')}:{lib('libubsan.so')}"
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:handle_segv=0:allow_user_segv_handler=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def _seed_inputs(seed_wasm: bytes, workdir: Path, k: int):
    """(witness size, [[(hash, hex of the plain values)] per wasm_target input], curve) from the seed itself."""
    from snarkd.witness.native import NativeCalculator

    path = workdir / f"seed{k}.wasm"
    path.write_bytes(seed_wasm)
    calc = NativeCalculator(path, cache=False, strict=True, compiled="off")
    cases = [[(q.hash, bytes(q.data).hex()) for q in calc.prepare(i)] for i in wasm_target.INPUTS]
    return calc.witness_size, cases, calc.curve


def build_sanitized(source: str, curve: str, workdir: Path, tag: str) -> Path:
    from snarkd.witness import compiled

    cpp = workdir / f"{tag}.cpp"
    so = workdir / f"{tag}.so"
    cpp.write_text(source)
    cmd = [*compiled.compiler(), "-std=c++17", "-fPIC", "-shared", "-fno-strict-aliasing", "-fvisibility=hidden",
           "-pthread", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=undefined", *compiled.CURVE_MACROS[curve], "-I" + compiled.NATIVE_DIR, str(cpp),
           "-o", str(so)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return so


def run_sanitized(so: Path, witness_size: int, cases, env: dict, timeout: int = 300) -> tuple[int, str, str]:
    import json

    proc = subprocess.run([sys.executable, "-c", CHILD, str(so), str(len(cases)), str(witness_size)],
                          input=json.dumps(cases), capture_output=True, text=True, env=env, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def fuzz(n: int, seed: int, sanitize: int = 0, workdir: Path | None = None, log=None) -> dict:
    """n mutants through the translator; `sanitize` of the translated ones that wasmtime validates (spread over
    the run) built with the sanitizers and run on the seed's inputs. The report: counts, findings (each with the
    mutant kept under workdir), the sanitized runs' outcomes and seconds."""
    import tempfile

    from snarkd.witness.compiled.translate import Refused, translate
    from snarkd.witness.errors import CircuitFormatError
    from snarkd.witness.wasm_runtime import validate_module

    workdir = Path(workdir or tempfile.mkdtemp(prefix="translator-fuzz-"))
    workdir.mkdir(parents=True, exist_ok=True)
    seeds = [wasm_target.seed_wasm(c, k) for c, k in wasm_target.SEEDS]
    facts = [_seed_inputs(s, workdir, k) for k, s in enumerate(seeds)]
    rng = random.Random(seed)
    counts = {"translated": 0, "refused": 0, "valid_translated": 0, "valid_refused": 0, "other_exception": 0}
    findings = []
    picked = []  # (index, seed, source) of valid translations to sanitize
    every = max(1, n // (4 * sanitize)) if sanitize else 0
    t0 = time.perf_counter()
    for i in range(n):
        k = rng.randrange(len(seeds))
        others = [s for j, s in enumerate(seeds) if j != k]
        data, what = seeds[k], []
        for _ in range(rng.choice([1, 1, 2])):
            data, w, _ = mutate_wasm.mutate_wasm(data, rng, others)
            what.append(w)
        try:
            source, _ = translate(data)
            ok = True
        except Refused:
            ok = False
        except RecursionError:  # compiled.build's refusal of a module nesting too deeply
            ok = False
        except Exception as exc:  # noqa: BLE001 -- any other exception is what this fuzz looks for
            counts["other_exception"] += 1
            keep = workdir / f"finding-{i}.wasm"
            keep.write_bytes(data)
            findings.append({"i": i, "seed": k, "mutation": "+".join(what), "file": str(keep),
                             "error": f"{type(exc).__name__}: {exc}",
                             "trace": traceback.format_exc(limit=4)[-1500:]})
            continue
        counts["translated" if ok else "refused"] += 1
        try:
            validate_module(data, "mutant.wasm")
            valid = True
        except CircuitFormatError:
            valid = False
        if valid:
            counts["valid_translated" if ok else "valid_refused"] += 1
            if ok and every and len(picked) < sanitize and i % every == 0:
                picked.append((i, k, "+".join(what), source))
        if log and (i + 1) % 1000 == 0:
            log(f"{i + 1} mutants: {counts}")
    translate_s = time.perf_counter() - t0
    if sanitize:  # the seeds themselves first: the sanitized runtime on modules as circom wrote them (witnesses)
        picked[:0] = [(-1 - k, k, "none", translate(s)[0]) for k, s in enumerate(seeds)]
    env = sanitizer_env() if picked else {}
    runs = []
    t1 = time.perf_counter()
    for i, k, what, source in picked:
        ws, cases, curve = facts[k]
        entry = {"i": i, "seed": k, "mutation": what}
        try:
            so = build_sanitized(source, curve, workdir, f"m{i}")
        except subprocess.CalledProcessError as exc:
            entry.update(outcome="compile_failed", detail=(exc.stderr or "")[-1500:])
            runs.append(entry)
            continue
        try:
            rc, out, err = run_sanitized(so, ws, cases, env)
        except subprocess.TimeoutExpired:
            entry.update(outcome="timeout")
            runs.append(entry)
            continue
        report = "AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err
        statuses = [line.split()[0] for line in out.splitlines() if line.strip()]
        entry.update(outcome="sanitizer_report" if report else ("ok" if rc == 0 else f"exit {rc}"),
                     statuses=statuses, detail=err[-3000:] if (report or rc) else "")
        runs.append(entry)
        so.unlink(missing_ok=True)
        if log:
            log(f"sanitized {len(runs)}/{len(picked)}: mutant {i} {entry['outcome']} {statuses}")
    return {"n": n, "seed": seed, "counts": counts, "findings": findings, "translate_s": round(translate_s, 1),
            "sanitized": runs, "sanitize_s": round(time.perf_counter() - t1, 1),
            "sanitized_outcomes": {o: sum(r["outcome"] == o for r in runs) for o in {r["outcome"] for r in runs}}}
