"""circom 2 witness-generator .wasm under wasmtime: the runtime imports of circom's
generated witness_calculator.js, and bulk input/witness transfer.

One `CircuitInstance` = one wasmtime Store + the circuit instance + a small helper
instance (see `_HELPER_WAT`) in the same store. The helper calls the circuit's
exports in native loops -- `writeSharedRWMemory`/`setInputSignal` for every value of
an input signal, and `getWitness`/`readSharedRWMemory` for every witness element --
so the per-element cost is a wasm-to-wasm call instead of a Python-to-wasm call;
Python only copies the helper's linear memory in and out with numpy.

A Store is not thread-safe: a `CircuitInstance` must be used by one thread at a
time (`snarkd.witness.calculator.WitnessCalculator` keeps a pool of them).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
import weakref
from importlib.metadata import version
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import wasmtime

from snarkd.atomic import atomic_write_bytes
from snarkd.witness.errors import CircuitFormatError

# circom's generated witness_calculator.js (circom 2.2.x), exceptionHandler.
EXCEPTION_MESSAGES = {
    1: "Signal not found.\n",
    2: "Too many signals set.\n",
    3: "Signal already set.\n",
    4: "Assert Failed.\n",
    5: "Not enough memory.\n",
    6: "Input signal array access exceeds the size.\n",
    7: "Out of bounds array access.\n",
}

REQUIRED_EXPORTS = (
    "memory",
    "getVersion",
    "readSharedRWMemory",
    "writeSharedRWMemory",
    "init",
    "setInputSignal",
    "getInputSignalSize",
    "getRawPrime",
    "getFieldNumLen32",
    "getWitnessSize",
    "getInputSize",
    "getWitness",
    "getMessageChar",
)

_HELPER_WAT = r"""
(module
  (import "c" "getWitness" (func $getWitness (param i32)))
  (import "c" "readSharedRWMemory" (func $read (param i32) (result i32)))
  (import "c" "writeSharedRWMemory" (func $write (param i32 i32)))
  (import "c" "setInputSignal" (func $set (param i32 i32 i32)))
  (memory (export "mem") 1)
  ;; witness elements [start, start+count) -> mem[0..], n32 little-endian words each
  (func (export "readWitness") (param $start i32) (param $count i32) (param $n32 i32)
    (local $i i32) (local $end i32) (local $j i32) (local $p i32)
    (local.set $i (local.get $start))
    (local.set $end (i32.add (local.get $start) (local.get $count)))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (call $getWitness (local.get $i))
        (local.set $j (i32.const 0))
        (block $d2
          (loop $inner
            (br_if $d2 (i32.ge_u (local.get $j) (local.get $n32)))
            (i32.store (local.get $p) (call $read (local.get $j)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $inner)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer))))
  ;; set values [start, start+count) of signal (msb, lsb) from mem[0..]
  (func (export "setInputs") (param $msb i32) (param $lsb i32) (param $start i32) (param $count i32) (param $n32 i32)
    (local $i i32) (local $end i32) (local $j i32) (local $p i32)
    (local.set $i (local.get $start))
    (local.set $end (i32.add (local.get $start) (local.get $count)))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $j (i32.const 0))
        (block $d2
          (loop $inner
            (br_if $d2 (i32.ge_u (local.get $j) (local.get $n32)))
            (call $write (local.get $j) (i32.load (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $inner)))
        (call $set (local.get $msb) (local.get $lsb) (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer))))
)
"""

MAX_MESSAGE = 1 << 16  # characters of one circom message (log, error) read through getMessageChar (as the native engine)

# Elements moved per helper call: bounds the helper's memory (CHUNK * n32 * 4 bytes).
CHUNK = 1 << 16

_ENGINE_TAG = b"cranelift-speed-v1"  # change with the engine Config below

_engine_lock = threading.Lock()
# Two engines: plain, and one that counts fuel ([limits] wasm_fuel), whose compiled code
# carries the counting (so a module compiled for one cannot run in the other).
_engines: dict[bool, tuple[wasmtime.Engine, wasmtime.Module]] = {}


def engine(fuel: bool = False) -> wasmtime.Engine:
    """The process-wide wasmtime Engine (thread-safe; shared by all modules)."""
    with _engine_lock:
        if fuel not in _engines:
            cfg = wasmtime.Config()
            cfg.cranelift_opt_level = "speed"
            cfg.parallel_compilation = True
            cfg.consume_fuel = fuel
            eng = wasmtime.Engine(cfg)
            _engines[fuel] = (eng, wasmtime.Module(eng, wasmtime.wat2wasm(_HELPER_WAT)))
        return _engines[fuel][0]


def helper_module(fuel: bool = False) -> wasmtime.Module:
    engine(fuel)
    return _engines[fuel][1]


def _i32(x: int) -> int:
    """Unsigned 32-bit -> the signed value wasmtime-py wants for an i32."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _wasmtime_version() -> str:
    try:
        return version("wasmtime")
    except Exception:  # pragma: no cover - not installed as a distribution
        return getattr(wasmtime, "__version__", "unknown")


def cache_dir() -> Path | None:
    """Where compiled modules are kept by default: [keys] wasm_cache's declared default
    ($XDG_CACHE_HOME/snarkd/wasm; entry points pass the configured one, $SNARKD_WASM_CACHE included)."""
    from snarkd.witness.inputs import cache_folder

    d = cache_folder(True)
    return None if d is None else Path(d)


def _cache_entry(data: bytes, d: Path | None, fuel: bool) -> tuple[Path | None, bytes]:
    """(the entry's path, its context: what its tag binds it to: the wasm, the wasmtime version, the engine)."""
    tag = _ENGINE_TAG + (b"-fuel" if fuel else b"")
    context = hashlib.sha256(data).digest() + b"\0wasmtime-" + _wasmtime_version().encode() + b"\0" + tag
    key = hashlib.sha256(data + b"\0wasmtime-" + _wasmtime_version().encode() + b"\0" + tag).hexdigest()[:40]
    return (d / f"{key}.cwasm" if d is not None else None), b"cwasm\0" + context


def _max_entry_bytes(wasm_bytes: int) -> int:
    return 64 * wasm_bytes + (64 << 20)  # compiled code is a few times the wasm; more is not an entry of ours


def _load_cached(data: bytes, d: Path | None, fuel: bool = False) -> tuple[wasmtime.Module | None, Path | None]:
    """The cached module, or None. Deserializing trusts its bytes (one flipped bit crashed the process), so
    an entry is deserialized only as formats/file_trust.read_cache hands it out: this user's, in a directory
    only it can write, not a link, bounded, and under this user's HMAC tag; anything else is rebuilt."""
    from snarkd.formats.file_trust import UntrustedCache, read_cache

    path, context = _cache_entry(data, d, fuel)
    if path is None or not os.path.lexists(path):
        return None, path
    try:
        # Read, don't map: deserialize_file mmaps the entry and registers its unwind
        # tables, so a cache file truncated or rewritten in place by anyone later
        # would make the next C++ exception in the process die with SIGBUS.
        body = read_cache(path, context, _max_entry_bytes(len(data)))
    except UntrustedCache as exc:
        _log().warning("compiled-module cache entry ignored and rebuilt: %s", exc)
        return None, path
    try:
        return wasmtime.Module.deserialize(engine(fuel), bytes(body)), path
    except Exception:  # our own entry of another wasmtime build: recompile and overwrite
        return None, path


def _log():
    import logging

    return logging.getLogger("snarkd")


def _store_cached(module: wasmtime.Module, path: Path | None, data: bytes = b"", fuel: bool = False) -> None:
    from snarkd.formats.file_trust import UntrustedCache, dir_problem, seal

    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        why = dir_problem(path.parent)
        if why:  # an entry there could not be trusted when read back
            _log().warning("compiled module not cached at %s: %s", path, why)
            return
        atomic_write_bytes(path, seal(module.serialize(), _cache_entry(data, path.parent, fuel)[1]), durable=False)
    except UntrustedCache as exc:
        _log().warning("compiled module not cached: %s", exc)
    except Exception:  # the cache is an optimisation only (read-only home, full disk...)
        pass


def compile_module(wasm: bytes, name: str, cache=True, fuel: bool = False) -> wasmtime.Module:
    """Compile (or load from the on-disk cache, see `cache_dir`) and check a circom 2
    witness generator. Cranelift takes seconds on big circuits; a cached module
    loads in milliseconds. Entries are keyed by the wasm's SHA-256 and the
    wasmtime version, and wasmtime refuses entries from another engine setup."""
    from snarkd.witness.inputs import cache_folder

    folder = cache_folder(cache)  # True, a folder, "off", or an entry point's deferred resolution
    d = None if folder is None else Path(folder)
    module, path = _load_cached(wasm, d, fuel)
    if module is None:
        try:
            module = wasmtime.Module(engine(fuel), wasm)
        except wasmtime.WasmtimeError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid module"
            raise CircuitFormatError(name, f"not a valid WebAssembly module: {first}") from None
        check_module(module, name)
        _store_cached(module, path, wasm, fuel)
    else:
        check_module(module, name)
    return module


def validate_module(wasm: bytes, name: str) -> None:
    """The WebAssembly validation wasmtime does before compiling (types, stack shapes, indices), without
    compiling: the native engine runs only modules the wasm engine would run (it does not type-check)."""
    try:
        wasmtime.Module.validate(engine(), wasm)
    except wasmtime.WasmtimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid module"
        raise CircuitFormatError(name, f"not a valid WebAssembly module: {first}") from None


def check_module(module: wasmtime.Module, name: str) -> None:
    exports = {e.name for e in module.exports}
    missing = [e for e in REQUIRED_EXPORTS if e not in exports]
    if missing:
        raise CircuitFormatError(
            name,
            "not a circom 2 witness generator (compile with circom >= 2.0 --wasm); missing export(s): " + ", ".join(missing),
        )
    for imp in module.imports:
        if imp.module != "runtime" or imp.name not in _IMPORT_NAMES:
            raise CircuitFormatError(name, f"unsupported import {imp.module}.{imp.name} (not a circom 2 witness generator?)")


_IMPORT_NAMES = {
    "exceptionHandler",
    "printErrorMessage",
    "writeBufferMessage",
    "showSharedRWMemory",
    # circom 2.0.x before 2.0.7 / circom_runtime extras; harmless to provide.
    "error",
    "log",
    "printDebug",
    "logGetSignal",
    "logSetSignal",
    "logStartComponent",
    "logFinishComponent",
}


class WasmCircuitError(Exception):
    """Raised (inside a host import) to unwind the wasm; carries circom's code/message."""

    def __init__(self, code: int | None, message: str):
        self.code = code
        self.message = message
        super().__init__(message)


@dataclass
class _RunState:
    err_str: str = ""  # printErrorMessage accumulates here (circom's errStr)
    msg_str: str = ""  # writeBufferMessage/showSharedRWMemory buffer (circom's msgStr)
    error: WasmCircuitError | None = None
    log: Callable[[str], None] | None = None
    logs: list = field(default_factory=list)


class CircuitInstance:
    """A circuit instance in its own Store. Not thread-safe: one thread at a time."""

    def __init__(self, module: wasmtime.Module, memory_limit: int | None = None, fuel: int = 0):
        """memory_limit: bytes each linear memory may grow to; fuel: wasm instructions per run
        (0 = uncounted; the module must come from compile_module(..., fuel=True))."""
        self.store = wasmtime.Store(engine(fuel > 0))
        self.fuel = fuel
        if fuel:
            self.store.set_fuel(fuel)
        if memory_limit:
            self.store.set_limits(memory_size=int(memory_limit))
        self.state = _RunState()
        self.poisoned = False
        store = self.store
        imports = []
        for imp in module.imports:
            imports.append(self._host_func(imp.name, imp.type))
        self.instance = wasmtime.Instance(store, module, imports)
        ex = self.instance.exports(store)
        self._ex = ex
        self.memory: wasmtime.Memory = ex["memory"]
        self._getMessageChar = ex["getMessageChar"]
        self._read = ex["readSharedRWMemory"]
        self._init = ex["init"]
        self._getInputSignalSize = ex["getInputSignalSize"]
        self._getInputSize = ex["getInputSize"]
        self.version = ex["getVersion"](store)
        self.minor = ex["getMinorVersion"](store) if "getMinorVersion" in ex else 0
        self.patch = ex["getPatchVersion"](store) if "getPatchVersion" in ex else 0
        self.n32 = ex["getFieldNumLen32"](store)
        ex["getRawPrime"](store)
        self.prime = self.read_shared_int()
        self.witness_size = ex["getWitnessSize"](store)
        self.input_size = ex["getInputSize"](store)
        self.helper = wasmtime.Instance(
            store,
            helper_module(fuel > 0),
            [ex["getWitness"], ex["readSharedRWMemory"], ex["writeSharedRWMemory"], ex["setInputSignal"]],
        )
        hex_ = self.helper.exports(store)
        self.hmem: wasmtime.Memory = hex_["mem"]
        self._readWitness = hex_["readWitness"]
        self._setInputs = hex_["setInputs"]

    # -- host imports --------------------------------------------------------

    def _host_func(self, name: str, ty: wasmtime.FuncType) -> wasmtime.Func:
        # The callbacks reach this instance through a weak reference only: wasmtime-py keeps every host
        # callable in a process-wide table until its Store is deleted, so a callable holding the instance (and
        # through it the Store) kept both alive for ever, with the module's memory image, a memfd: one file
        # descriptor leaked per calculator (tests/witness/test_wasm_fds.py).
        ref = weakref.ref(self)
        state = self.state
        n_results = len(ty.results)

        def message() -> str:
            me = ref()
            chars = []
            c = me._getMessageChar(me.store)
            while c != 0 and len(chars) < MAX_MESSAGE:  # a message that never ends is cut, as the native engine cuts it
                chars.append(chr(c & 0xFFFF))
                c = me._getMessageChar(me.store)
            return "".join(chars)

        if name == "exceptionHandler":

            def f(code):
                err = EXCEPTION_MESSAGES.get(code, "Unknown error.\n")
                state.error = WasmCircuitError(code, err + state.err_str)
                raise state.error

        elif name == "printErrorMessage":

            def f():
                state.err_str += message() + "\n"

        elif name == "writeBufferMessage":

            def f():
                msg = message()
                if msg == "\n":
                    ref()._emit(state.msg_str)
                    state.msg_str = ""
                else:
                    if state.msg_str != "":
                        state.msg_str += " "
                    state.msg_str += msg

        elif name == "showSharedRWMemory":

            def f():
                value = str(ref().read_shared_int())
                if state.msg_str != "":
                    state.msg_str += " "
                state.msg_str += value

        elif name == "error":

            def f(code, pstr, a, b, c, d):
                state.error = WasmCircuitError(code, f"{ref()._cstr(pstr)} {a} {b} {c} {d}")
                raise state.error

        else:  # printDebug, log, logGetSignal... (circom 2.0.0-2.0.6 / circom_runtime): no-ops

            def f(*args):
                return 0 if n_results else None

        return wasmtime.Func(self.store, ty, f)

    def _emit(self, line: str) -> None:
        self.state.logs.append(line)
        if self.state.log is not None:
            self.state.log(line)

    def _cstr(self, p: int) -> str:
        data = self.memory.read(self.store, p, min(p + 4096, self.memory.data_len(self.store)))
        return data.split(b"\0", 1)[0].decode("latin-1")

    def read_shared_int(self) -> int:
        words = [self._read(self.store, j) & 0xFFFFFFFF for j in range(self.n32)]
        return sum(w << (32 * j) for j, w in enumerate(words))

    # -- calculation -----------------------------------------------------------

    def input_signal_size(self, name_hash: tuple[int, int]) -> int:
        """Size of the input signal with this name hash (msb, lsb); -1 if the circuit has none.

        circom's getInputSignalSize reads the size at offset 12 of the hash-map
        entry, and for an unknown hash at offset 12 of address 0 (whatever is
        there, usually 0, so circom's own `< 0` check never fires). Poking a -1
        sentinel there for the duration of this pure read tells the cases apart.
        """
        msb, lsb = name_hash
        saved = self.memory.read(self.store, 12, 16)
        self.memory.write(self.store, b"\xff\xff\xff\xff", 12)
        try:
            size = self._getInputSignalSize(self.store, _i32(msb), _i32(lsb))
        finally:
            self.memory.write(self.store, saved, 12)
        return -1 if size < 0 else size

    def _ensure_helper_bytes(self, nbytes: int) -> None:
        have = self.hmem.data_len(self.store)
        if nbytes > have:
            pages = -(-(nbytes - have) // 65536)
            self.hmem.grow(self.store, pages)

    def _helper_view(self, nbytes: int) -> np.ndarray:
        ptr = self.hmem.data_ptr(self.store)
        buf = (ctypes.c_ubyte * nbytes).from_address(ctypes.addressof(ptr.contents))
        return np.frombuffer(buf, dtype=np.uint8)

    def _call(self, func, *args):
        """Call into wasm; turn any trap into WasmCircuitError (state decides the message)."""
        try:
            return func(self.store, *args)
        except BaseException as exc:
            self.poisoned = True
            if isinstance(exc, KeyboardInterrupt):
                raise
            if self.state.error is not None:
                # taken out of the state, without the traceback it was raised with: the state is reachable from
                # wasmtime-py's table of host callables (a process-wide root), and that traceback's frames hold
                # this instance, so the instance, its Store and its memory would never be freed
                error, self.state.error = self.state.error, None
                raise error.with_traceback(None) from None
            if isinstance(exc, WasmCircuitError):  # another thread's host error surfaced here (wasmtime-py global)
                raise WasmCircuitError(None, "wasm trap (see other thread)") from None
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise WasmCircuitError(None, f"wasm trap: {text}\n" + self.state.err_str) from None

    def begin(self, sanity_check: bool, log: Callable[[str], None] | None) -> None:
        st = self.state
        st.err_str = ""
        st.msg_str = ""
        st.error = None
        st.log = log
        st.logs = []
        if self.fuel:
            self.store.set_fuel(self.fuel)
        self._call(self._init, 1 if sanity_check else 0)

    def set_input(self, msb: int, lsb: int, words: np.ndarray) -> None:
        """Set all values of one input signal; words: (k, n32) uint32."""
        k = words.shape[0]
        n32 = self.n32
        for start in range(0, k, CHUNK):
            chunk = words[start : start + CHUNK]
            nbytes = chunk.size * 4
            self._ensure_helper_bytes(nbytes)
            self._helper_view(nbytes)[:] = np.ascontiguousarray(chunk, dtype="<u4").view(np.uint8).ravel()
            self._call(self._setInputs, _i32(msb), _i32(lsb), start, chunk.shape[0], n32)

    def input_count_expected(self) -> int:
        return self._getInputSize(self.store)

    def read_witness(self) -> np.ndarray:
        """The whole witness as (witness_size, n32) little-endian uint32 words."""
        n, n32 = self.witness_size, self.n32
        out = np.empty((n, n32), dtype="<u4")
        flat = out.view(np.uint8).reshape(n, n32 * 4)
        for start in range(0, n, CHUNK):
            count = min(CHUNK, n - start)
            nbytes = count * n32 * 4
            self._ensure_helper_bytes(nbytes)
            self._call(self._readWitness, start, count, n32)
            flat[start : start + count] = self._helper_view(nbytes).reshape(count, n32 * 4)
        return out

    def finish(self) -> None:
        """After a run: flush a partial log line, drop the per-run callback."""
        if self.state.msg_str:
            self._emit(self.state.msg_str)
            self.state.msg_str = ""
        self.state.log = None
