"""Witness calculation from circom's .wasm, in-process: natively (NativeCalculator, a program
recorded from the wasm and replayed) or on wasmtime (WitnessCalculator). `make_calculator` picks
by the `[witness] engine` setting. Both implement `WitnessEngine` (witness/protocol.py), the interface callers
use; `wasm_safety_net` there is the native engine's one fallback after a failed self-check. Both calculators load
lazily: a process that only replays never imports wasmtime."""

from __future__ import annotations

from snarkd.witness.errors import (
    CircuitAssertError,
    CircuitFormatError,
    InputSignalError,
    InputValueError,
    MissingInputError,
    SignalSizeError,
    UnknownSignalError,
    WitnessError,
)
from snarkd.witness.inputs import fnv_hash, load_input_json

# protocol's names (it imports typing) and the calculators load on first use (__getattr__ below): `snarkd
# witness` on a cached program imports neither typing nor logging.
_PROTOCOL = ("NATIVE_SOURCES", "SOURCES", "WitnessEngine", "wasm_safety_net")

ENGINES = ("auto", "native", "wasm")

__all__ = [
    "ENGINES",
    "NATIVE_SOURCES",
    "SOURCES",
    "WitnessEngine",
    "wasm_safety_net",
    "calculate_with_source",
    "make_calculator",
    "NativeCalculator",
    "NativeUnavailable",
    "WitnessCalculator",
    "calculate_witness",
    "load_input_json",
    "fnv_hash",
    "WitnessError",
    "InputSignalError",
    "UnknownSignalError",
    "SignalSizeError",
    "MissingInputError",
    "InputValueError",
    "CircuitAssertError",
    "CircuitFormatError",
]


def make_calculator(wasm, engine: str = "auto", *, on_fallback=None, **kwargs) -> WitnessEngine:
    """A witness calculator for `wasm` on the named engine:

    native  the native program (built or loaded now); NativeUnavailable (exit 3) where none can be
            built; requests the wasm engine serves are reported through on_fallback(message)
    wasm    wasmtime
    auto    native where a program can be built, else wasm (said once in the log)

    kwargs: WitnessCalculator's (sym, sanity_check, name, cache, max_instances, max_memory, fuel);
    program= (a program file path) for the native engine.
    """
    if engine not in ENGINES:
        raise ValueError(f"witness engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine != "wasm":
        from snarkd.witness.native import NativeCalculator, NativeUnavailable

        try:
            return NativeCalculator(wasm, strict=engine == "native", on_fallback=on_fallback, **kwargs)
        except NativeUnavailable as exc:
            if engine == "native":
                raise
            import logging

            logging.getLogger("snarkd.witness").info("%s; using the wasm engine", exc)
    kwargs.pop("program", None)
    kwargs.pop("compiled", None)
    from snarkd.witness.calculator import WitnessCalculator

    return WitnessCalculator(wasm, **kwargs)


def calculate_with_source(calc: WitnessEngine, inputs: dict, *, log=None, frame=None):
    """(Witness, how it was made: "native" | "recorded" | "control" | "wasm") from any engine; frame: where a
    native replay writes (protocol.FrameAllocator)."""
    return calc.calculate_with_source(inputs, log=log, frame=frame)


def __getattr__(name: str):  # PEP 562: the calculators and their dependencies load on first use
    if name in _PROTOCOL:
        from snarkd.witness import protocol

        return getattr(protocol, name)
    if name in ("WitnessCalculator", "calculate_witness"):
        from snarkd.witness import calculator

        return getattr(calculator, name)
    if name in ("NativeCalculator", "NativeUnavailable"):
        from snarkd.witness import native

        return getattr(native, name)
    raise AttributeError(f"module 'snarkd.witness' has no attribute {name!r}")
