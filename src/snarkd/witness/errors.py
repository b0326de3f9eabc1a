"""Errors from witness calculation. All are `InputError`s (exit code 3): each is
caused by the inputs, or by a circuit .wasm that does not fit them."""

from __future__ import annotations

from snarkd.errors import FormatError, InputError

__all__ = [
    "WitnessError",
    "InputSignalError",
    "UnknownSignalError",
    "SignalSizeError",
    "MissingInputError",
    "InputValueError",
    "CircuitAssertError",
    "CircuitFormatError",
]


class WitnessError(InputError):
    """Base class: witness calculation failed."""


class InputSignalError(WitnessError):
    """A problem with one input signal (or several); `signal` names the first."""

    def __init__(self, message: str, signal: str | None = None):
        self.signal = signal
        super().__init__(message)


class UnknownSignalError(InputSignalError):
    """An input that the circuit has no input signal for (an extra input)."""


class SignalSizeError(InputSignalError):
    """An input array with more or fewer values than the signal has."""

    def __init__(self, message: str, signal: str, given: int, expected: int):
        self.given = given
        self.expected = expected
        super().__init__(message, signal)


class MissingInputError(InputSignalError):
    """Not every input signal was given. `missing` lists the names when known."""

    def __init__(self, message: str, missing: list[str] | None, given: int, expected: int):
        self.missing = missing
        self.given = given
        self.expected = expected
        super().__init__(message, missing[0] if missing else None)


class InputValueError(InputSignalError):
    """A value that is not an integer, or not below the field prime."""


_TEMPLATE_LINE = r"Error in template (\S+) line: (\d+)"  # compiled on a failure only: re is ~3 ms of imports


class CircuitAssertError(WitnessError):
    """The circuit's code failed while computing the witness: a failed `assert`
    or `===` (circom code 4), or another runtime error the wasm reported.

    `code` is circom's exception code (None for a bare wasm trap), `circom_message`
    the text circom's witness_calculator.js would throw, and `template`/`line`
    the first location circom reported, when it gave one.
    """

    def __init__(self, wasm: str, code: int | None, circom_message: str):
        self.wasm = wasm
        self.code = code
        self.circom_message = circom_message
        import re

        m = re.search(_TEMPLATE_LINE, circom_message)
        self.template = m.group(1) if m else None
        self.line = int(m.group(2)) if m else None
        text = " ".join(part.strip() for part in circom_message.strip().splitlines() if part.strip())
        super().__init__(f"{wasm}: witness calculation failed: {text}")


class CircuitFormatError(FormatError):
    """The .wasm is not a circom 2 witness generator this runtime can load."""
