"""`snarkd witness` and `snarkd fullprove`: witness calculation from circom's .wasm in-process, with
snarkjs's argument order: natively (a program recorded from the .wasm, kept beside it as .wprog) or on
wasmtime, by --engine / [witness] engine."""

from __future__ import annotations

import sys
import time

# the attributes argparse's Namespace would have (quick_args), without argparse; and without the types module
# (~0.2 ms of a one-shot `snarkd witness`, round 34): sys.implementation is documented to be a SimpleNamespace
SimpleNamespace = type(sys.implementation)

from snarkd.cli.quick import TEXT, read_options

ORDER = 30
LARGE_WASM = 1 << 20  # a circuit .wasm this large takes seconds to compile and run: show its progress


def _common(p) -> None:
    p.add_argument("--sym", help="the circuit's .sym file, to name missing inputs in errors (default: found beside the .wasm's folder)")
    p.add_argument("--sanity-check", action="store_true", help="run circom's extra runtime checks (init(1)); snarkjs runs without")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the circuit's log() output, no progress bar")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show the progress bar (default: on a terminal, for a .wasm of 1 MiB and up)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    p.add_argument("--timings", action="store_true", help="print per-phase milliseconds to stderr")
    p.add_argument("--engine", choices=("auto", "native", "wasm"), default=None,
                   help="native: replay a program recorded from the .wasm (built on first use, kept beside it as "
                        ".wprog; exit 3 where none can be built; a request the wasm engine serves is said on "
                        "stderr); wasm: wasmtime; auto: native where it can be built (default: [witness] engine)")
    p.add_argument("--compile", action="store_true",
                   help="build the circuit's compiled witness library first (CIRCUIT.wasm.wso: the .wasm translated "
                        "to C++ and built by $CXX, else c++/g++; seconds per circuit, once) unless one is kept; the "
                        "native engine runs it for value-dependent circuits ([witness] compiled)")
    p.add_argument("--compile-tier", choices=("both", "fast", "full"), default=None,
                   help="with --compile (implied): which library to build. fast (default): the generated code at "
                        "-Og, the field runtime at -O3 (within ~2%% of the full tier's run for under half its build); "
                        "full: all at -O3; both: the fast one, used for this request while the full one is built over "
                        "it in the same command")


def register(sub) -> None:
    from snarkd.cli.parsing import add_epilog

    p = add_epilog(
        sub.add_parser(
            "witness",
            help="witness: CIRCUIT.wasm INPUT.json OUT.wtns (as `snarkjs wtns calculate`)",
            description="Calculate a witness from circuit inputs with circom's .wasm, in-process. "
            "The .wtns is byte-identical to `snarkjs wtns calculate`. The circuit's log() output goes to stdout.",
        )
    )
    p.add_argument("wasm", metavar="CIRCUIT.wasm")
    p.add_argument("input", metavar="INPUT.json")
    p.add_argument("out", metavar="OUT.wtns")
    _common(p)
    p.set_defaults(func=run_witness)

    p = add_epilog(
        sub.add_parser(
            "fullprove",
            help="fullprove: INPUT.json CIRCUIT.wasm KEY.zkey PROOF.json PUBLIC.json (as `snarkjs groth16 fullprove`)",
            description="Calculate the witness from inputs and prove, in one process.",
        )
    )
    p.add_argument("input", metavar="INPUT.json")
    p.add_argument("wasm", metavar="CIRCUIT.wasm")
    p.add_argument("zkey", metavar="KEY.zkey")
    p.add_argument("proof", metavar="PROOF.json")
    p.add_argument("public", metavar="PUBLIC.json")
    p.add_argument("--threads", type=int, default=0, help="native prover threads (default: all cores)")
    p.add_argument("--check-points", action="store_true", help="check every key point is on its curve (slow on big keys)")
    p.add_argument("--wtns", metavar="OUT.wtns", help="also write the witness here")
    _common(p)
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the self-check of the proof against the key (as in snarkd prove)")
    p.set_defaults(func=run_fullprove)


_FLAGS = {"--sanity-check": ("sanity_check", True), "--quiet": ("quiet", True), "-q": ("quiet", True),
          "--progress": ("progress", True), "--no-progress": ("progress", False), "--timings": ("timings", True),
          "--compile": ("compile", True)}
_VALUED = {"--engine": ("engine", ("auto", "native", "wasm")), "--sym": ("sym", TEXT),
           "--compile-tier": ("compile_tier", ("both", "fast", "full"))}


def quick_args(argv: list[str]) -> SimpleNamespace | None:
    """`snarkd witness`'s arguments in their usual forms (three positionals; whole option names, each at most once;
    --engine and --sym followed by their value), as argparse reads them, without importing or building argparse's
    parser (~7 ms of a ~65 ms whole process, snarkd.cli.main); None for anything else (help, an abbreviation,
    `--opt=value`, `--`, an argument starting with "-", a wrong count or choice), which argparse then parses, with
    its own messages and exit code. tests/cli/test_witness_cli.py holds it to argparse's Namespace."""
    got = dict(sym=None, sanity_check=False, quiet=False, progress=None, timings=False, engine=None, compile=False,
               compile_tier=None)
    runs = read_options(argv, got, _FLAGS, _VALUED)
    positional = [a for run in runs or () for a in run]
    if runs is None or len(positional) != 3:
        return None
    return SimpleNamespace(command="witness", wasm=positional[0], input=positional[1], out=positional[2], func=run_witness,
                           **got)


def _log_sink(args):
    if args.quiet:
        return None
    return lambda line: print(line, flush=True)


def _print_timings(timings: dict[str, float], total_ms: float) -> None:
    width = max(len(k) for k in [*timings, "total"])
    for name, ms in timings.items():
        print(f"{name:<{width}} {ms:10.1f} ms", file=sys.stderr)
    print(f"{'total':<{width}} {total_ms:10.1f} ms", file=sys.stderr)


class _NoSteps:
    """The step bar where none can show (--quiet or --no-progress, and no --progress): what StepBar does then, without
    importing prover.progress and contextlib (functools, collections: ~2.5 ms of a one-shot `snarkd witness`)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def step(self, name: str):
        return self


def _progress(args, steps: int):
    """The step bar of a witness calculation: on a terminal, for a large circuit .wasm."""
    import os

    if args.progress is False or (args.progress is None and args.quiet):  # prover.progress.wanted's "no" at once
        return _NoSteps()
    from snarkd.prover.progress import StepBar, wanted

    try:
        large = os.path.getsize(args.wasm) >= LARGE_WASM
    except OSError:
        large = False  # the calculator names the missing file
    return StepBar("witness", steps, wanted(args.progress, args.quiet, large))


def _engine(args) -> str:
    if args.engine is not None:
        return args.engine
    from snarkd.config import default

    return default("witness.engine")


def compiled_setting() -> str:
    """[witness] compiled: from the environment without the config layer (config/witness.py), else the config
    layer's resolution (its error for a value that is no choice)."""
    from snarkd.config.witness import compiled_from_env

    value = compiled_from_env()
    if value is None:
        from snarkd.config import default

        value = default("witness.compiled")
    return value


def _fell_back(message: str) -> None:  # also the warnings about input.json
    print(f"snarkd: {message}", file=sys.stderr, flush=True)


def _calculate(args, timings: dict[str, float], bar, values_only: bool = False):
    """(calculator, witness, inputs, how the witness was made); values_only: the witness's values as .wtns wants
    them (on the native engine, bytes: no numpy in the process)."""
    from snarkd.config import deferred  # [keys] wasm_cache, read only when no program lies beside the .wasm
    from snarkd.witness import load_input_json, make_calculator

    t = time.perf_counter()
    with bar.step("compile"):
        inputs = load_input_json(args.input, warn=_fell_back)
        # ([witness] compiled: resolved when a value-dependent request first needs it, without the config layer)
        calc = make_calculator(args.wasm, _engine(args), sym=args.sym, sanity_check=args.sanity_check,
                               on_fallback=_fell_back, cache=deferred("keys.wasm_cache"), compiled=compiled_setting)
        finish = None
        if getattr(args, "compile", False) or getattr(args, "compile_tier", None):
            finish = _compile(calc, getattr(args, "compile_tier", None) or "fast")  # (round 33: one library)
    timings["load" if calc.native else "compile"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    with bar.step("calculate"):
        if values_only:
            witness, source = calc.calculate_bytes(inputs, log=_log_sink(args))
        else:
            witness, source = calc.calculate_with_source(inputs, log=_log_sink(args))
    # (the key says where a compiled library ran the request: value-dependent circuits, witness/compiled)
    timings["witness (compiled)" if getattr(calc, "compiled_runs", 0) else "witness"] = (time.perf_counter() - t) * 1e3
    return calc, witness, inputs, source, finish


def _await_full_tier(finish, timings: dict[str, float]) -> None:
    """The full tier, built in a thread while the request ran on the fast one and its files were written (so they
    are not held back by it): waited for before the command ends (nothing outlives it), its wait in --timings."""
    if finish is not None:
        t = time.perf_counter()
        finish()
        timings["compile (full tier)"] = (time.perf_counter() - t) * 1e3


def _compile(calc, tier: str = "fast"):
    """--compile: the compiled library built (or found), said on stderr; a failure is said and changes nothing else.
    tier "both": the fast tier now, then the full tier built in a thread of this process while the request runs on
    the fast one (nothing outlives the command: the caller waits for it with the returned function); None otherwise."""
    if not calc.native:
        print("snarkd: --compile: the wasm engine runs no compiled library (use --engine native or auto)",
              file=sys.stderr)
        return None
    first = _compile_tier(calc, "full" if tier == "full" else "fast")
    if first is None or tier != "both" or first["tier"] != "fast":  # a kept full library serves
        return None
    import threading

    worker = threading.Thread(target=_compile_tier, args=(calc, "full"), kwargs={"quiet_errors": True},
                              name="snarkd-compile-full", daemon=False)
    worker.start()
    return worker.join


def _compile_tier(calc, tier: str, quiet_errors: bool = False) -> dict | None:
    """One tier built (or a kept library that serves), said on stderr: calc.compile's dict; None where none could
    be built."""
    from snarkd.witness.compiled import CompileError

    try:
        info = calc.compile(tier=tier)
    except CompileError as exc:
        print(f"snarkd: no compiled witness library{f' ({tier} tier)' if quiet_errors else ''}: {exc}",
              file=sys.stderr, flush=True)
        return None
    from snarkd.witness.compiled import describe

    print(f"snarkd: {describe(info)}", file=sys.stderr, flush=True)
    return info


def run_witness(args) -> int:
    from snarkd.formats.wtns import write_wtns

    start = time.perf_counter()
    timings: dict[str, float] = {}
    with _progress(args, 3) as bar:
        calc, values, _, _, finish = _calculate(args, timings, bar, values_only=True)
        t = time.perf_counter()
        with bar.step("write"):
            # not fsynced, as snarkjs and circom's C++ generator write it (still atomic: the old file or the new)
            write_wtns(args.out, calc.prime, values, durable=False)
    timings["write"] = (time.perf_counter() - t) * 1e3
    _await_full_tier(finish, timings)
    if args.timings:
        _print_timings(timings, (time.perf_counter() - start) * 1e3)
    return 0


run_witness.exit_at_once = True  # snarkd.cli.main: no interpreter teardown after the .wtns is written


def _verified(args, key, calc, inputs, source, result, timer):
    """The proof, self-verified. A native witness whose proof fails is recomputed on the wasm engine
    and proved again (the native engine's safety net, witness.wasm_safety_net: never expected, said on stderr)."""
    from snarkd.errors import SnarkdError
    from snarkd.prover import prove
    from snarkd.verifier.self_check import verify_against_key
    from snarkd.witness import wasm_safety_net

    name = f"witness from {args.input}"
    try:
        with timer.phase("verify"):
            verify_against_key(key.zkey, result.proof, result.public, witness_name=name, threads=args.threads)
        return result
    except SnarkdError as exc:
        failure = exc

    def report() -> None:
        print("snarkd: the proof of the native witness failed self-verification; recomputing the witness on the "
              "wasm engine (please report this with the circuit)", file=sys.stderr, flush=True)

    def attempt(witness):
        again = prove(key, witness, threads=args.threads, witness_name=name, timer=timer)
        with timer.phase("verify"):
            verify_against_key(key.zkey, again.proof, again.public, witness_name=name, threads=args.threads)
        if args.wtns:
            from snarkd.formats.wtns import write_wtns

            write_wtns(args.wtns, calc.prime, witness.values)
        return again

    retried = wasm_safety_net(calc, inputs, source, attempt, report=report)
    if retried is None:
        raise failure
    return retried


def run_fullprove(args) -> int:
    from snarkd.formats.wtns import write_wtns
    from snarkd.prover import ProvingKey, prove, write_proof
    from snarkd.prover.timing import PhaseTimer

    start = time.perf_counter()
    timings: dict[str, float] = {}
    timer = PhaseTimer()
    with timer.phase("load"):
        key = ProvingKey.load(args.zkey, check_points=args.check_points)
    with key, _progress(args, 2) as bar:
        calc, witness, inputs, source, finish = _calculate(args, timings, bar)
        if args.wtns:
            write_wtns(args.wtns, calc.prime, witness.values)
        result = prove(key, witness, threads=args.threads, witness_name=f"witness from {args.input}", timer=timer)
        if args.verify:  # no proof that fails its own key is ever written (exit 4)
            result = _verified(args, key, calc, inputs, source, result, timer)
    with timer.phase("write"):
        write_proof(result, args.proof, args.public)
    _await_full_tier(finish, timings)
    if args.timings:
        _print_timings({**timings, **timer.ms}, (time.perf_counter() - start) * 1e3)
    return 0
