"""The witness seam: what every witness engine offers its callers, and the native engine's one safety net.

    make_calculator(wasm, "auto")      a WitnessEngine: NativeCalculator (witness/native.py) or the wasm
                                       engine's WitnessCalculator (witness/calculator.py)

Callers (the CLI, the engine's synthesis, the key store) use only what `WitnessEngine` declares; none probes
an engine with hasattr/getattr. Where a proof made from a native witness fails its self-check (never expected:
the native engine's bug), `wasm_safety_net` is the one place that recomputes the witness on the wasm engine
for another attempt; `snarkd fullprove` and the daemon's engine both go through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ContextManager, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from snarkd.formats.wtns import Witness

# How a witness was made: "native" (the program replayed), "recorded" (recorded on a guard's miss), "control"
# (the wasm's control flow run natively, value-dependent circuits), "wasm" (wasmtime).
NATIVE_SOURCES = ("native", "recorded", "control")
SOURCES = NATIVE_SOURCES + ("wasm",)

R = TypeVar("R")

# Where a native replay writes the witness: given the byte count, a writable buffer of that size, or None for the
# engine's own memory. The daemon's engine gives page-locked memory where a GPU proves, so that the witness's
# upload is one transfer rather than a staging copy on CPUs the synthesis workers keep busy. Only a replay uses
# it: a recording, a control-flow run and wasmtime make their witness in memory of their own.
FrameAllocator = Callable[[int], object]


@runtime_checkable
class WitnessEngine(Protocol):
    """A witness calculator for one circom 2 circuit .wasm (thread-safe; reusable)."""

    name: str  # the circuit's name in messages (its path)
    prime: int  # the field's modulus
    n8: int  # bytes per value in a .wtns
    n32: int
    witness_size: int
    input_size: int
    native: bool  # witnesses come from the native engine's program (False: wasmtime's run of the .wasm)

    def calculate(self, inputs: dict, *, log: Callable[[str], None] | None = None) -> "Witness":
        """The witness (values: (witness_size, 4) uint64, plain form); log gets each line the circuit logs."""

    def calculate_with_source(self, inputs: dict, *, log: Callable[[str], None] | None = None,
                              frame: FrameAllocator | None = None) -> tuple["Witness", str]:
        """(the witness, how it was made: one of SOURCES). frame: where a replay writes (FrameAllocator)."""

    def calculate_bytes(self, inputs: dict, *, log: Callable[[str], None] | None = None,
                        frame: FrameAllocator | None = None) -> tuple[object, str]:
        """(the witness's values as a buffer `formats.wtns.write_wtns` takes, how it was made): the CLI's path
        (no numpy needed on the native engine)."""

    def calculate_on_wasm(self, inputs: dict, *, log: Callable[[str], None] | None = None) -> "Witness":
        """The witness from the wasm engine, whatever a native program says (the safety net's)."""

    def calculate_to_file(self, inputs: dict, out, *, log: Callable[[str], None] | None = None) -> object:
        """Calculate and write a .wtns (byte-identical to `snarkjs wtns calculate`)."""

    def describe(self) -> dict:
        """How this engine makes witnesses ({"engine": "native" | "wasm", ...}: status, logs, the bench)."""

    def close(self) -> None:
        """Drop what is held for speed (instances, memory); the engine stays usable."""


def wasm_safety_net(calc: WitnessEngine, inputs: dict | None, source: str, attempt: Callable[["Witness"], R], *,
                    report: Callable[[], None] | None = None,
                    timed: Callable[[], ContextManager] | None = None) -> R | None:
    """The native engine's safety net, for every caller. A proof made from a witness of `source` failed its
    self-check: where the native engine made that witness (source in NATIVE_SOURCES) and the request's inputs
    are still at hand, report() says so (it should never happen: the caller counts and logs it as the bug it
    would be), the witness is recomputed on the wasm engine (inside timed(), where given) and attempt(witness)
    proves and checks it again; its result is returned. None: nothing to fall back on (a wasm witness, or no
    inputs), the caller's failure stands."""
    if source not in NATIVE_SOURCES or inputs is None:
        return None
    if report is not None:
        report()
    if timed is None:
        witness = calc.calculate_on_wasm(inputs)
    else:
        with timed():
            witness = calc.calculate_on_wasm(inputs)
    return attempt(witness)
