"""`WitnessCalculator`: circuit inputs -> witness, in-process, reusable, thread-safe.

    calc = WitnessCalculator("circuit_js/circuit.wasm")   # compiles once
    witness = calc.calculate({"a": "3", "b": [[1, 2], [3, 4]]})  # snarkd.formats.wtns.Witness
    calc.calculate_to_file(inputs, "witness.wtns")

The calculator compiles the module once and keeps a pool of instances (each in
its own wasmtime Store); `calculate` may be called from many threads at once, each
call taking an idle instance or making a new one (bounded by `max_instances`).
An instance whose run failed is dropped, never reused.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import numpy as np

from snarkd.errors import InputError
from snarkd.formats.wtns import Witness, write_wtns
from snarkd.witness import inputs as inp
from snarkd.witness.errors import CircuitAssertError, CircuitFormatError
from snarkd.witness.wasm_runtime import CircuitInstance, WasmCircuitError, compile_module

__all__ = ["WitnessCalculator", "calculate_witness"]

def words_to_u64(words: np.ndarray) -> np.ndarray:
    """(n, n32) little-endian uint32 words -> (n, ceil(n32/2)) uint64 limbs."""
    n, n32 = words.shape
    if n32 % 2:
        words = np.concatenate([words, np.zeros((n, 1), dtype=words.dtype)], axis=1)
    return np.ascontiguousarray(words, dtype="<u4").view("<u8").reshape(n, (n32 + 1) // 2)  # n may be 0


class WitnessCalculator:
    """Witness calculation for one circom 2 circuit .wasm, on wasmtime (the wasm engine's `WitnessEngine`).

    wasm: path to the .wasm, or its bytes. sym: the circuit's .sym file (used only
    to name missing inputs in errors); by default `<dir>/../<stem>.sym` or
    `<dir>/<stem>.sym` when one exists. sanity_check: circom's init(1) (extra
    checks; snarkjs uses 0). max_instances: cap on concurrent instances (None =
    one per concurrent caller). cache: keep/load the compiled module in the on-disk
    cache: True = [keys] wasm_cache's declared default (`snarkd.witness.wasm_runtime.cache_dir`), a
    directory, False / "off", or a callable giving one of those when first needed (an entry point's resolution).
    """

    def __init__(
        self,
        wasm: str | os.PathLike | bytes,
        *,
        sym: str | os.PathLike | None = None,
        sanity_check: bool = False,
        max_instances: int | None = None,
        name: str | None = None,
        cache=True,
        max_memory: int | None = None,
        fuel: int = 0,
    ):
        data, path, self.name, sym_path = inp.read_wasm(wasm, name, sym)
        self.path = None if path is None else Path(path)
        self.sym = None if sym_path is None else Path(sym_path)
        self.sanity_check = sanity_check
        self.max_memory, self.fuel = max_memory, int(fuel or 0)
        self.module = compile_module(data, self.name, cache=cache, fuel=self.fuel > 0)
        self._lock = threading.Lock()
        self._idle: list[CircuitInstance] = []
        self._sem = threading.BoundedSemaphore(max_instances) if max_instances else None
        self._input_names: list[tuple[str, int]] | None = None
        first = self._new_instance()
        if first.version != 2:
            raise CircuitFormatError(self.name, f"circom version {first.version} witness generator; only circom 2 is supported")
        self.version = (first.version, first.minor, first.patch)
        self.prime: int = first.prime
        self.n32: int = first.n32
        self.n8: int = 4 * first.n32
        self.witness_size: int = first.witness_size
        self.input_size: int = first.input_size
        self._idle.append(first)

    # -- instance pool -----------------------------------------------------------

    def _new_instance(self) -> CircuitInstance:
        try:
            return CircuitInstance(self.module, self.max_memory, self.fuel)
        except WasmCircuitError as exc:
            raise CircuitFormatError(self.name, f"cannot instantiate: {exc.message.strip()}") from None
        except Exception as exc:  # wasmtime errors (link/instantiation traps)
            if self.max_memory and "exceeds memory limits" in str(exc):
                raise InputError(f"{self.name}: the circuit's initial memory is larger than its limit "
                                 f"({self.max_memory} bytes, [limits] wasm_memory)") from None
            raise CircuitFormatError(self.name, f"cannot instantiate: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}") from None

    @contextmanager
    def _instance(self):
        if self._sem is not None:
            self._sem.acquire()
        try:
            with self._lock:
                inst = self._idle.pop() if self._idle else None
            if inst is None:
                inst = self._new_instance()
            try:
                yield inst
            finally:
                if not inst.poisoned:
                    with self._lock:
                        self._idle.append(inst)
        finally:
            if self._sem is not None:
                self._sem.release()

    def close(self) -> None:
        """Drop idle instances (their memory). The calculator stays usable."""
        with self._lock:
            self._idle.clear()

    # -- inputs ------------------------------------------------------------------

    def prepare(self, inputs: dict, inst: CircuitInstance | None = None) -> list[inp.PreparedInput]:
        """Validate and encode inputs (names, sizes, values); raises the input errors."""
        if inst is None:
            with self._instance() as i:
                return self.prepare(inputs, i)
        return inp.prepare_inputs(inputs, inst.input_signal_size, self.prime, self.n32, self.input_size,
                                  lambda given: self.missing_inputs(given, inst), self.name)

    def input_signals(self, inst: CircuitInstance | None = None) -> list[tuple[str, int]] | None:
        """(name, size) of the main component's input signals, from the .sym file; None without one."""
        if self._input_names is not None:
            return self._input_names
        if self.sym is None or not os.path.exists(self.sym):
            return None
        if inst is None:
            with self._instance() as i:
                return self.input_signals(i)
        self._input_names = inp.sized_input_names(self.sym, inst.input_signal_size)
        return self._input_names

    def missing_inputs(self, given: set[str], inst: CircuitInstance | None = None) -> list[str]:
        names = self.input_signals(inst)
        if not names:
            return []
        return [n for n, size in names if n not in given and size > 0]

    # -- calculation ---------------------------------------------------------------

    def calculate_words(self, inputs: dict, *, log: Callable[[str], None] | None = None) -> np.ndarray:
        """The witness as (witness_size, n32) little-endian uint32 words (wtns layout)."""
        with self._instance() as inst:
            prepared = self.prepare(inputs, inst)
            try:
                inst.begin(self.sanity_check, log)
                for p in prepared:
                    inst.set_input(p.hash_msb, p.hash_lsb, p.words)
                words = inst.read_witness()
            except WasmCircuitError as exc:
                inst.poisoned = True
                self._check_limits(exc.message, inst)
                raise CircuitAssertError(self.name, exc.code, exc.message) from None
            finally:
                inst.finish()
        return words

    def _check_limits(self, message: str, inst: CircuitInstance) -> None:
        """A trap that is one of our limits, not the circuit's fault: say which."""
        low = message.lower()
        if self.fuel and inst.store.get_fuel() == 0:
            raise InputError(f"{self.name}: the witness calculation spent all its fuel ({self.fuel} units, "
                             f"[limits] wasm_fuel)")
        if self.max_memory and ("memory" in low or "out of bounds" in low):
            raise InputError(f"{self.name}: the witness calculation failed near its memory limit "
                             f"({self.max_memory} bytes, [limits] wasm_memory): {message.strip()}")

    def calculate(self, inputs: dict, *, log: Callable[[str], None] | None = None):
        """The witness as a `snarkd.formats.wtns.Witness` (values: (n, 4) uint64, plain form).

        log: called with each line the circuit's `log()` prints.
        """
        return Witness(self.prime, words_to_u64(self.calculate_words(inputs, log=log)))

    calculate_on_wasm = calculate  # what NativeCalculator falls back on; here it is the calculation itself
    native = False  # WitnessEngine: wasmtime runs the .wasm

    def calculate_with_source(self, inputs: dict, *, log: Callable[[str], None] | None = None, frame=None):
        """(the witness, "wasm"). frame: not used (wasmtime's memory holds the witness)."""
        return self.calculate(inputs, log=log), "wasm"

    def calculate_bytes(self, inputs: dict, *, log: Callable[[str], None] | None = None, frame=None):
        """(the witness's values, (witness_size, limbs) uint64, as write_wtns takes them, "wasm"); frame: not used."""
        return self.calculate(inputs, log=log).values, "wasm"

    def describe(self) -> dict:
        return {"engine": "wasm"}

    def calculate_to_file(self, inputs: dict, out: str | os.PathLike, *, log: Callable[[str], None] | None = None):
        """Calculate and write a .wtns file (byte-identical to `snarkjs wtns calculate`)."""
        witness = self.calculate(inputs, log=log)
        write_wtns(out, self.prime, witness.values)
        return witness


def calculate_witness(wasm: str | os.PathLike | bytes, inputs: dict | str | os.PathLike, **kwargs: Any):
    """One-shot: compile, calculate, return the Witness. inputs: a dict or an input.json path."""
    if not isinstance(inputs, dict):
        inputs = inp.load_input_json(inputs)
    log = kwargs.pop("log", None)
    return WitnessCalculator(wasm, **kwargs).calculate(inputs, log=log)
