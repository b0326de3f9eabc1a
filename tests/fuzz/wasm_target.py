"""The `wasm` fuzz target: the native witness engine (record, compile, replay) on mutated circom .wasm
files, seeded with torture.circom compiled by circom 2.0.8 and the current circom2 (tests/oracle.COMPILERS).

Contract: a mutated module ends in a refusal naming the file (NativeUnavailable: `auto` serves it on the
wasm engine), the circuit's own error, or a witness; never a crash, a hang (bounded: the recording's steps
and memory are capped), or another exception. A witness the native engine computed (replayed or recorded)
must equal the wasm engine's (wasmtime) on the same file and inputs, except where the mutation landed in
what the native engine does not take from the file by design: the bodies of ffwasm's field functions
(Fr_mul, Fr_int_copy, ...) and of the shared-memory helpers the host calls (it does the field's arithmetic
and puts inputs in place itself), setInputSignal (whose Fr_eqR it answers: the arm for small values never
runs), the name section that names them, and ffwasm's constants (the prime, Montgomery constants: memory
below the shared memory); those cases count as "trusted_runtime"."""

from __future__ import annotations

import random
from pathlib import Path

import mutate_wasm
import targets as T

from snarkd.errors import SnarkdError

SEEDS = [("circom-2.0.8", "bn128"), ("circom2", "bn128"), ("circom-2.0.8", "bls12381")]
INPUTS = [
    {"a": 27, "b": 4, "s": 3, "v": [1, 20, 3, 40]},
    {"a": 0, "b": 0, "s": 0, "v": [0, 0, 0, 0]},
    {"a": str(2**64 + 7), "b": 97, "s": 2**32 - 1, "v": [5, 11, 99, 1]},
]
MEMORY = 256 << 20
# the native engine moves values in and out itself; in setInputSignal it decides Fr_eqR (circom's short or long
# copy of the input: it always takes the long one), so the arm it never runs is not read
HELPERS = {"readSharedRWMemory", "writeSharedRWMemory", "setInputSignal"}


def shared_memory_start(wasm: bytes) -> int:
    """getSharedRWMemoryStart of a module (wasmtime, the runtime's callbacks stubbed)."""
    import wasmtime

    store = wasmtime.Store()
    module = wasmtime.Module(store.engine, wasm)
    stub = {(i.module, i.name): wasmtime.Func(store, i.type, lambda *a: None) for i in module.imports}
    inst = wasmtime.Instance(store, module, [stub[(i.module, i.name)] for i in module.imports])
    return inst.exports(store)["getSharedRWMemoryStart"](store)


def seed_wasm(compiler: str, curve: str) -> bytes:
    import oracle

    source = (Path(oracle.__file__).parent / "witness" / "circuits" / "torture.circom").read_text()
    name = "w_torture" + ("" if compiler == "circom2" else "-" + compiler)
    return (oracle.compile_circuit(source, name, curve, False, compiler) / "circuit_js" / "circuit.wasm").read_bytes()


class WasmTarget:
    def __init__(self, workdir: Path):
        self.seeds = [seed_wasm(c, k) for c, k in SEEDS]
        self.runtime_fns = [{i for i, n in mutate_wasm.function_names(s).items() if n.startswith("Fr_") or n in HELPERS}
                            for s in self.seeds]
        self.shared = [shared_memory_start(s) for s in self.seeds]
        self.path = workdir / "circuit.wasm"
        self.program = workdir / "circuit.wasm.wprog"
        self.steps = T.env_int("SNARKD_FUZZ_WASM_STEPS", 1 << 18)  # loop iterations and calls of one recording (~1 s)

    def make(self, i: int, rng: random.Random) -> T.Case:
        k = rng.randrange(len(self.seeds))
        others = [s for j, s in enumerate(self.seeds) if j != k]
        data, what, regions = self.seeds[k], "", []
        for _ in range(rng.choice([1, 1, 2])):
            data, w, region = mutate_wasm.mutate_wasm(data, rng, others)
            what = f"{what}+{w}" if what else w
            regions += region.split(",")
        return T.Case(i, data, what, {"seed": k, "regions": regions, "input": rng.randrange(len(INPUTS))})

    def trusted(self, case: T.Case) -> bool:
        k = case.meta["seed"]

        def runtime(region: str) -> bool:
            kind, _, at = region.partition(":")
            return (kind == "names" or (kind == "code" and int(at) in self.runtime_fns[k])
                    or (kind == "data" and int(at) < self.shared[k]))

        return any(runtime(r) for r in case.meta["regions"])

    def run(self, case: T.Case) -> str:
        from snarkd.witness import NativeCalculator, WitnessCalculator
        from snarkd.witness.native import NativeUnavailable

        self.path.write_bytes(case.data)
        self.program.unlink(missing_ok=True)
        inputs = INPUTS[case.meta["input"]]
        try:
            native = NativeCalculator(self.path, cache=False, max_memory=MEMORY, fuel=self.steps)
        except NativeUnavailable as exc:
            T._expect_named(exc, str(self.path), self.path.stem)
            return "refused"
        except SnarkdError as exc:
            return T._expect_named(exc, str(self.path), self.path.stem)
        try:
            raw, source = native.calculate_bytes(inputs)
            # the control-flow run (what a value-dependent program runs for a request no path fits) on the same
            # module and inputs: a witness it gives must be the wasm engine's too
            control = native._run([(p.hash, p.data) for p in native.prepare(inputs)]) if source != "wasm" else None
        except SnarkdError:
            return "circuit_error"  # the wasm engine's answer (the native engine fell back)
        finally:
            native.close()
        if source == "wasm":
            return "wasm_engine"
        wasm = None
        try:
            # fuel: wasmtime's own loops are bounded too (a getMessageChar that never ends its message)
            wasm = WitnessCalculator(self.path, cache=False, max_memory=MEMORY, fuel=2 * 10**8)
            expect = wasm.calculate(inputs).values.tobytes()
        except SnarkdError as exc:
            if self.trusted(case):
                return "trusted_runtime"
            raise T.Finding(f"native {source} witness, the wasm engine fails: {exc}") from None
        finally:
            if wasm is not None:
                wasm.close()
        if bytes(raw) != expect:
            if self.trusted(case):
                return "trusted_runtime"
            raise T.Finding(f"native {source} witness differs from the wasm engine's")
        if control is not None and control.ok and bytes(control.witness) != expect and not self.trusted(case):
            raise T.Finding("the native control-flow run's witness differs from the wasm engine's")
        return source
