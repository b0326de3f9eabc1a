"""Witness calculation from circom's .wasm, in-process (wasmtime)."""

from snarkd.witness.calculator import WitnessCalculator, calculate_witness
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

__all__ = [
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
