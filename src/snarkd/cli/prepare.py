"""`snarkd prepare KEY.zkey [--out PATH] [--wasm CIRCUIT.wasm]`: build the key's prepared sidecar
(KEY.zkey.prep) and the native witness program of its circuit (CIRCUIT.wasm.wprog)."""

from __future__ import annotations

import os
import sys
import time

from snarkd.cli.parsing import add_epilog

ORDER = 15


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "prepare",
        help="prepare: KEY.zkey -> KEY.zkey.prep, per-key precomputation `snarkd prove` and the daemon use",
        description="Precompute what a proof with this key can reuse (the A/B coefficients laid out for the sparse "
                    "products) into a checksummed sidecar beside the key, KEY.zkey.prep. Provers use it when it "
                    "matches the key, and ignore (and rebuild) it with a warning when it is stale or corrupt.",
    ))
    p.add_argument("zkey", metavar="KEY.zkey")
    p.add_argument("--out", metavar="PATH", help="write the sidecar here instead (provers look for KEY.zkey.prep)")
    p.add_argument("--wasm", metavar="CIRCUIT.wasm",
                   help="the circuit's .wasm, whose native witness program (CIRCUIT.wasm.wprog) is built too "
                        "(default: the .wasm beside the key, as the daemon finds it)")
    p.add_argument("--no-witness", dest="witness", action="store_false",
                   help="do not build the native witness program")
    p.add_argument("--compile-witness", action="store_true",
                   help="also build the circuit's compiled witness library (CIRCUIT.wasm.wso: the .wasm translated to "
                        "C++ and built by $CXX, else c++/g++), which the native engine runs for value-dependent "
                        "circuits ([witness] compiled)")
    p.add_argument("--compile-tier", choices=("both", "fast", "full"), default=None,
                   help="with --compile-witness (implied): both (default): the fast tier (generated code -Og, "
                        "field runtime -O3: ready sooner, ~2%% slower runs), then the full tier (-O3) over it, each "
                        "said with its time; fast or full: that one")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.prover.prepared import build

    start = time.perf_counter()
    out = build(args.zkey, args.out)
    size = os.path.getsize(out)
    print(f"{out}: {size / 2**20:.1f} MiB in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    if args.witness:
        _witness_program(args)
    return 0


def _witness_program(args) -> None:
    """The native witness program of the key's circuit, built now rather than at the first key load."""
    from snarkd.engine.keys import find_wasm
    from snarkd.witness import NativeCalculator, NativeUnavailable

    wasm = args.wasm or find_wasm(args.zkey)
    if wasm is None:
        print(f"no circuit .wasm beside {args.zkey}: no native witness program (give --wasm)", file=sys.stderr)
        return
    start = time.perf_counter()
    try:
        from snarkd.config import default

        from snarkd.cli.witness import compiled_setting

        calc = NativeCalculator(wasm, cache=default("keys.wasm_cache"),  # the entry point resolves the settings
                                compiled=compiled_setting)
    except NativeUnavailable as exc:
        print(f"{exc} (witnesses from inputs use the wasm engine)", file=sys.stderr)
        return
    where = calc.loaded_from or "this process only (no writable place)"
    how = "built" if calc.build_ms else "already there"
    paths = calc.program.path_stats()
    instructions = paths[0]["instructions"] if paths else 0
    print(f"{where}: native witness program {how} in {time.perf_counter() - start:.2f} s "
          f"({instructions} instructions)", file=sys.stderr)
    tier = getattr(args, "compile_tier", None)
    if getattr(args, "compile_witness", False) or tier:
        from snarkd.witness.compiled import CompileError, describe

        # both: the fast tier first (a daemon started meanwhile can load it), then the full one renamed over it (a
        # daemon runs many witnesses: the full tier's ~2% is worth its ~3 s more here, once; `snarkd witness
        # --compile` builds the fast tier only, round 33)
        for one in (("fast", "full") if (tier or "both") == "both" else (tier,)):
            try:
                info = calc.compile(tier=one)
            except CompileError as exc:
                print(f"no compiled witness library: {exc}", file=sys.stderr)
                return
            print(describe(info), file=sys.stderr)
            if info["tier"] != "fast":  # a full library (built or kept) is the last word
                break
