"""`NativeCalculator`: circuit inputs -> witness at native speed, from the circuit's own .wasm.

    calc = NativeCalculator("circuit_js/circuit.wasm")   # loads or builds circuit.wasm.wprog
    witness = calc.calculate({"a": "3"})                  # snarkd.formats.wtns.Witness

How. The .wasm is run once in the native core's own interpreter (native/witness/record.hpp), with
circom's field functions done natively, and what it computed from the inputs is kept as a
straight-line program (a "path"); later requests replay the path (native/witness/program.hpp),
with no wasm at all. The replay is exact, not an approximation: every place where the wasm's
control flow or an address depended on an input value is a guard in the path, checked on every
replay; where an input takes the wasm another way the guard misses and the request is recorded
anew (its witness comes from that recording) and the new path is kept. Ternaries on signals
(`in != 0 ? 1/in : 0`) are not guards: both arms are recorded and the replay selects.

A circuit whose course depends on its values (bigint long division, as zk-email's RSA: every signature
another way) is not recorded again and again: once the program holds CONTROL_FLOW_AFTER paths it is
value-dependent (unless its paths keep serving replays), and a request no kept path fits runs the wasm's own
control flow natively (`_witness.run`:
the module's loops, branches, calls and value-dependent addresses, decided by this request's values, with
circom's field functions on the native core; no trace, no guard): one program for every input, no file
growth with traffic, the same cost for every input. Straight-line paths stay where they serve (a
value-independent circuit never leaves them).

The first path is built from placeholder inputs (zeros; an assert they fail is recorded as the
check it is), so building needs no real input. Programs are kept beside the .wasm (or in the
compiled-module cache), bound to its hash (program_file.py).

Fallbacks, each counted in `stats`: a guard miss records the request natively ("recorded"), or in a
value-dependent program, or wherever a compiled library is kept, runs its control flow natively ("control"); a
circuit the recorder cannot follow, or a request that fails in the circuit (an assert, a division
by zero), goes to the wasm engine ("wasm"), whose result or error is the answer. With
`strict=True` (`--engine native`) the constructor refuses circuits it cannot build, and every
request served by the wasm engine is reported through `on_fallback`.
"""

from __future__ import annotations

import _thread  # the locks threading.Lock is; the threading module (~1 ms of imports) is not needed here
import itertools
import os
import sys
import time

from snarkd.errors import InputError
from snarkd.formats.file_trust import HUGE_MIN, fresh_pages, sha256
from snarkd.witness import inputs as inp
from snarkd.witness import program_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Callable

    from snarkd.formats.wtns import Witness

# No logging, dataclasses, typing, pathlib or formats.wtns at import: `snarkd witness` on a cached program never
# needs them (~25 ms of its whole-process time); they load where used (program paths are strings here).


def _log():
    import logging

    return logging.getLogger("snarkd.witness")


CURVES = {"bn128": 0, "bls12381": 1}
# The program's bounds (a circuit whose wasm takes many ways: bigint loops bounded by values). A request that
# misses every kept path is recorded natively and its path kept; to stay within both bounds the paths replayed
# least often are dropped first (on a tie, the oldest), never the new one. A miss costs a partial replay of
# each kept path before the recording: the count bounds that too.
MAX_PATHS = 16
MAX_PROGRAM_BYTES = 256 << 20  # the paths together, as in the .wprog
# A circuit whose course depends on its values (bigint long division: every signature another way) would be
# recorded anew for every request. A program that holds at least this many paths (the placeholder one and those
# recorded since) and whose paths have served fewer replays than there are paths (traffic keeps missing them) is
# value-dependent: a request no kept path fits runs the wasm's own control flow natively (_witness.run: its loops,
# branches and calls decided by this request's values, circom's field functions on the native core), nothing
# recorded and nothing kept: one program for every input, a file that does not grow with traffic, the same time
# for the Nth input as for the first. The kept paths are still replayed first where they have served requests
# (hits); where none ever has, the control-flow run comes at once but for every PROBE_EVERY-th request, which
# tries them first (a partial replay of each, paid once in that many requests). A circuit with a few shapes that
# recur (its paths replayed as often as there are paths) goes on learning them within MAX_PATHS.
# The verdict, when a recording makes it (`_keep`), also bounds the file: it is written with the paths that have
# served replays and the smallest of the others (on a tie the newest), not the rest, and with the verdict in its
# header ("value_dependent"): a program loaded from it is value-dependent until its paths have served
# CONTROL_FLOW_AFTER replays (the evidence that clears the verdict in the process that made it). Where no path has
# served (every input another way: RSA signatures) the file is then no larger than after its first request,
# for any traffic (it held CONTROL_FLOW_AFTER paths: 3.45x on the bigint bench). The process that made the verdict
# keeps its paths (a circuit whose shapes recur goes on finding them there).
CONTROL_FLOW_AFTER = 3
PROBE_EVERY = 8


class NativeUnavailable(InputError):
    """No native program can be built for this circuit (another field, a wasm feature the native
    interpreter does not follow). `--engine native` exits 3 with this message; `auto` uses the wasm."""


class WitnessStats:
    """Witnesses by how they were made (the engine's metrics and the bench report read these)."""

    def __init__(self):
        self.native = 0    # replayed
        self.recorded = 0  # a guard missed: recorded natively (a new path)
        self.wasm = 0      # the wasm engine served it (the circuit failed, or the recorder cannot follow it)
        self.control = 0   # no path fits a value-dependent program: the wasm's control flow run natively
        self._lock = _thread.allocate_lock()

    def __repr__(self) -> str:
        return f"WitnessStats({self.as_dict()})"

    def add(self, kind: str) -> None:
        with self._lock:
            setattr(self, kind, getattr(self, kind) + 1)

    def as_dict(self) -> dict:
        return {"native": self.native, "recorded": self.recorded, "wasm": self.wasm, "control": self.control}


def render_log(events, sink: Callable[[str], None]) -> None:
    """circom's log() output as its witness_calculator.js prints it: texts and values joined by
    spaces, a line per "\\n" (the same assembly as snarkd.witness.wasm_runtime)."""
    line = ""
    for is_value, text in events:
        if not is_value and text == "\n":
            sink(line)
            line = ""
        else:
            line = f"{line} {text}" if line else text
    if line:
        sink(line)


class NativeCalculator:
    """Native witness calculation for one circom 2 circuit .wasm (BN254 or BLS12-381 scalar field).

    The native engine's `WitnessEngine` (witness/protocol.py), as `WitnessCalculator` is the wasm engine's;
    also calculate_words and version. cache: where programs may be kept besides beside
    the .wasm (True: [keys] wasm_cache; a directory; False/"off": nowhere else). program: an
    explicit program file path (tried first, written first). strict: refuse what cannot be built
    natively and report wasm fallbacks through on_fallback(message). max_memory, fuel: the wasm
    engine's limits, applied to the native recording too (memory bytes; fuel bounds loop
    iterations and calls there). compiled: whether a compiled library (CIRCUIT.wasm.wso, built by `compile()`) runs
    the control-flow requests where one is kept (True/"auto"; False/"off": never; or a callable giving one of those,
    read when first needed; None: [witness] compiled's declared default, auto: entry points pass the setting).
    """

    native = True  # WitnessEngine: witnesses from the program (a request it cannot serve says "wasm" as its source)

    def __init__(self, wasm, *, sym=None, sanity_check: bool = False, name: str | None = None,
                 cache: bool | str | os.PathLike | Callable[[], str] = True, program: str | os.PathLike | None = None,
                 strict: bool = False, on_fallback: Callable[[str], None] | None = None,
                 max_instances: int | None = None, max_memory: int | None = None, fuel: int = 0,
                 compiled: bool | str | Callable[[], str] | None = None):
        from snarkd.native import _witness  # lazy: only native witness work loads it

        self._native = _witness
        self._bytes, self._path, self.name, self._sym = inp.read_wasm(wasm, name, sym)
        self.sanity_check = bool(sanity_check)
        self.strict = strict
        self.on_fallback = on_fallback
        self.max_memory, self.fuel = max_memory, int(fuel or 0)
        self._wasm_kwargs = dict(sym=self._sym, sanity_check=sanity_check, name=self.name, cache=cache,
                                 max_instances=max_instances, max_memory=max_memory, fuel=fuel)
        self._wasm_calc = None
        self._cache = cache
        self._compiled_setting = compiled
        self._compiled = None  # the compiled library (witness/compiled): False once looked for and none is used
        self.compiled_runs = 0
        self._wasm_lock = _thread.allocate_lock()
        self._save_lock = _thread.allocate_lock()
        self._keep_lock = _thread.allocate_lock()  # adding and dropping paths: indices must not move underneath
        self.dropped_paths = 0
        self._said_control_flow = False
        self._hits = None  # replays the kept paths have served (their hits summed), once known
        self._probe = itertools.count(1)  # value-dependent requests while no path has served one
        self._parsed = None
        self._program = self._body = None
        self._program_lock = _thread.allocate_lock()
        self.stats = WitnessStats()
        self.build_ms = 0.0
        self._loaded_from: str | None = None
        self._keep_tried = False  # a program built here kept after the first library run: tried once
        self._sha = sha = sha256(self._bytes).hexdigest()
        self._ident = program_file.identity(sha, self.sanity_check)
        self._paths = [os.fspath(program)] if program is not None else []
        self._paths += program_file.candidates(self._path, sha, None)
        if not self._load(self._paths):  # beside the wasm first: the cache setting is read only when needed
            more = program_file.candidates(None, sha, inp.cache_folder(cache))
            self._paths += more
            if not self._load(more):
                self._build()
        self._input_names = None

    # -- facts (WitnessCalculator's interface) ----------------------------------------------------

    def _set_facts(self, meta: dict) -> None:
        self.meta = meta
        self.curve = meta["curve"]
        self.prime = int(meta["prime"])
        self.n32 = int(meta["n32"])
        self.n8 = 4 * self.n32
        self.witness_size = int(meta["witness_size"])
        self.input_size = int(meta["input_size"])
        self.version = tuple(meta.get("version", (2, 0, 0)))
        self.input_base = int(meta["input_base"])
        self._signals = {int(h): (int(pos), int(size)) for h, pos, size in meta["signals"]}
        # hash halves -> size, for the input checks
        self._sizes = {(h >> 32, h & 0xFFFFFFFF): size for h, (pos, size) in self._signals.items()}

    # -- the program: load, build, save -------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The circuit .wasm's path (None: given as bytes)."""
        from pathlib import Path

        return None if self._path is None else Path(self._path)

    @property
    def sym(self) -> Path | None:
        """The circuit's .sym file, where known (it names missing inputs in errors)."""
        from pathlib import Path

        return None if self._sym is None else Path(self._sym)

    @property
    def loaded_from(self) -> Path | None:
        """The program file this calculator's program was loaded from or last saved to (None: this process only)."""
        from pathlib import Path

        return None if self._loaded_from is None else Path(self._loaded_from)

    def _load(self, paths: list[str]) -> bool:
        for path in paths:
            try:
                # its paths are loaded when a replay is tried (see `program`): the body is read then
                meta, body = program_file.read(path, self._ident, defer_below=CONTROL_FLOW_AFTER)
                self._set_facts(meta)
                if program_file.unserved(meta, CONTROL_FLOW_AFTER):
                    self._program, self._body = None, body
                else:
                    self._program = self._load_body(body)
            except program_file.ProgramFileError as exc:
                if str(exc) != "not found":
                    _log().warning("ignoring native witness program %s: %s; rebuilding it", path, exc)
                continue
            except (ValueError, KeyError, TypeError) as exc:  # the native checks of the body, a bad header
                _log().warning("ignoring native witness program %s: %s; rebuilding it", path, exc)
                continue
            self._loaded_from = path
            return True
        return False

    def _load_body(self, body):
        program = self._native.Program.load(CURVES[self.curve], body)
        if program.witness_size != self.witness_size or program.n_inputs != self.input_size:
            raise program_file.ProgramFileError("sizes disagree with its header (corrupt)")
        return program

    @property
    def program(self):
        """The native Program (its paths). A value-dependent file whose paths have served no replays (an RSA
        verifier's: every signature runs the control flow) is loaded only when a replay is tried (every
        PROBE_EVERY-th request) or the paths are asked for: a one-shot `snarkd witness` never decodes them
        (1.6 M instructions, 6.8 MB, ~30 ms of its whole-process time)."""
        if self._program is None:
            with self._program_lock:  # a daemon's requests: one load
                if self._program is None:
                    try:
                        body = self._body
                        if isinstance(body, program_file.DeferredBody):
                            body = body.load()
                        self._program = self._load_body(body)
                    except (program_file.ProgramFileError, ValueError, KeyError, TypeError) as exc:
                        # a body read now that fails its tag, or a native check of the body: no path then
                        _log().warning("ignoring the paths of native witness program %s: %s", self._loaded_from, exc)
                        self.meta.pop("value_dependent", None)
                        self.meta.pop("hits", None)
                        self._program = self._native.Program(CURVES[self.curve], self.witness_size, self.input_size)
                    self._body = None
        return self._program

    @program.setter
    def program(self, value) -> None:
        self._program, self._body = value, None

    def _module(self):
        if self._parsed is None:
            if self._loaded_from is None:
                from snarkd.witness.wasm_runtime import validate_module

                validate_module(self._bytes, self.name)  # an invalid module is bad input (exit 3), whichever engine
            # else these bytes were validated already: a program file is written only after they were (_build and
            # _keep parse them here first), and one is loaded only under this user's HMAC tag bound to their SHA-256
            # (program_file). Not importing wasm_runtime keeps numpy and wasmtime (~100 ms) out of a value-dependent
            # circuit's control-flow run in a fresh process.
            try:
                self._parsed = self._native.Wasm(self._bytes)
            except self._native.Unsupported as exc:
                raise NativeUnavailable(f"{self.name}: no native witness program: {exc}") from None
        return self._parsed

    def _build(self) -> None:
        t0 = time.perf_counter()
        try:
            facts = self._module().inspect()
        except self._native.Unsupported as exc:
            raise NativeUnavailable(f"{self.name}: no native witness program: {exc}") from None
        if facts["version"] != 2:
            raise NativeUnavailable(f"{self.name}: circom version {facts['version']} witness generator; "
                                    "only circom 2 is supported")
        if facts["curve"] is None:
            raise NativeUnavailable(f"{self.name}: no native witness program for this field "
                                    f"(prime {facts['prime']}; BN254 and BLS12-381 scalar fields are native)")
        signals = facts["signals"]
        limit = self.max_memory or _declared_wasm_memory()  # the recording's own bound
        if 32 * (facts["input_size"] + facts["witness_size"]) > limit:
            raise NativeUnavailable(f"{self.name}: {facts['input_size']} inputs and {facts['witness_size']} witness "
                                    f"values pass the memory limit ({limit} bytes)")
        positions = sorted((pos, size) for _, pos, size in signals if size > 0)
        base = positions[0][0] if positions else 0
        covered = sum(size for _, size in positions)
        contiguous = all(a[0] + a[1] == b[0] for a, b in zip(positions, positions[1:]))
        if covered != facts["input_size"] or not contiguous:
            raise NativeUnavailable(f"{self.name}: its input signals do not form one block "
                                    f"({covered} values for input size {facts['input_size']})")
        self._set_facts({"curve": facts["curve"], "prime": str(facts["prime"]), "n32": facts["n32"],
                         "witness_size": facts["witness_size"], "input_size": facts["input_size"],
                         "version": [2, facts["minor"], facts["patch"]], "input_base": base,
                         "signals": [[int(h), int(p), int(s)] for h, p, s in signals]})
        self.program = self._native.Program(CURVES[self.curve], self.witness_size, self.input_size)
        # the first path, from placeholder inputs: zeros (an assert they fail stays a guard)
        zeros = [(h, bytes(32 * size)) for h, (pos, size) in self._signals.items() if size > 0]
        res = self._record(zeros, force=True)
        self.build_ms = (time.perf_counter() - t0) * 1e3
        if res.ok:
            self.program.add_path(res.path)
            stats = res.stats
            _log().info("native witness program for %s built in %.0f ms: %d instructions, %d registers, %d guards, "
                     "%d ternaries on signals converted", self.name, self.build_ms, stats["instructions"],
                     stats["registers"], stats["guards"], stats["converted_ifs"])
            self._save()
        elif res.error_kind == "unsupported":
            raise NativeUnavailable(f"{self.name}: no native witness program: {res.message}")
        else:  # placeholder inputs made the circuit itself fail: the first real request records the path
            _log().info("native witness program for %s: placeholder inputs do not run through (%s); the first request "
                     "records it", self.name, res.message.strip().splitlines()[0] if res.message.strip() else res.code)

    def _record(self, inputs: list, force: bool):
        max_steps = self.fuel if self.fuel else 0
        return self._native.record(self._module(), CURVES[self.curve], inputs, sanity_check=self.sanity_check,
                                   force_asserts=force, max_memory=int(self.max_memory or 0), max_steps=max_steps,
                                   input_base=self.input_base, n_inputs=self.input_size)

    def _run(self, inputs: list):
        max_steps = self.fuel if self.fuel else 0
        return self._native.run(self._module(), CURVES[self.curve], inputs, sanity_check=self.sanity_check,
                                max_memory=int(self.max_memory or 0), max_steps=max_steps,
                                input_base=self.input_base, n_inputs=self.input_size)

    def _paths_hits(self) -> int:
        if self._hits is None and self._program is None:  # not loaded: the file's count (program_file.unserved)
            return int(self.meta.get("hits", 0))
        if self._hits is None:  # path_stats sizes every path: asked once, then kept up to date
            self._hits = sum(p["hits"] for p in self.program.path_stats())
        return self._hits

    @property
    def value_dependent(self) -> bool:
        """Misses run the wasm's control flow natively instead of being recorded (CONTROL_FLOW_AFTER)."""
        if self.meta.get("value_dependent"):  # the verdict (in the file: fewer paths there): until they serve
            return self._paths_hits() < CONTROL_FLOW_AFTER
        n = self.program.n_paths
        return n >= CONTROL_FLOW_AFTER and self._paths_hits() < n

    def _keep(self, path) -> None:
        """Add a newly recorded path within MAX_PATHS and MAX_PROGRAM_BYTES (the paths replayed least often
        dropped), then save: all its paths, or (the recording made it value-dependent) those that have served and
        this one (the rules above)."""
        with self._keep_lock:
            self.program.add_path(path)
            stats = self.program.path_stats()
            total = sum(p["bytes"] for p in stats)
            kept = len(stats)
            drop = []
            for i in sorted(range(len(stats) - 1), key=lambda i: (stats[i]["hits"], i)):
                if kept <= MAX_PATHS and total <= MAX_PROGRAM_BYTES:
                    break
                drop.append(i)
                kept -= 1
                total -= stats[i]["bytes"]
            for i in sorted(drop, reverse=True):
                self.program.remove_path(i)
                del stats[i]
            self._hits = None
            if drop:
                self.dropped_paths += len(drop)
                _log().info("native witness program for %s: %d paths kept (%.1f MB), %d replayed least often dropped",
                            self.name, kept, total / 1e6, len(drop))
            # a recording runs only where the program is not value-dependent: a verdict of the file's is over
            self.meta.pop("value_dependent", None)
            self.meta.pop("hits", None)
            file_paths = None
            if len(stats) >= CONTROL_FLOW_AFTER and sum(p["hits"] for p in stats) < len(stats):
                self.meta["value_dependent"] = True
                unserved = [i for i, p in enumerate(stats) if not p["hits"]]
                smallest = min(unserved, key=lambda i: (stats[i]["bytes"], -i))
                file_paths = [i for i, p in enumerate(stats) if p["hits"] or i == smallest]
                self.meta["hits"] = sum(stats[i]["hits"] for i in file_paths)  # the loaded program's, lazily
                _log().info("native witness program for %s: value-dependent; its file keeps %d of %d paths (those "
                            "that served replays, and the smallest other)", self.name, len(file_paths), len(stats))
            self._save(file_paths)  # under the lock: the indices are of these paths

    def _save(self, file_paths: list[int] | None = None) -> None:
        with self._save_lock:
            saved = program_file.save(self._paths, self._ident, self.meta, self.program, file_paths)
        if saved is None:
            _log().warning("native witness program for %s: no writable place to keep it (%s); it lives in this "
                        "process only", self.name, ", ".join(map(str, self._paths)))
        else:
            self._loaded_from = os.fspath(saved)

    # -- the compiled library (witness/compiled) ----------------------------------------------------

    def _compiled_wanted(self) -> bool:
        setting = self._compiled_setting
        if callable(setting):
            setting = setting()
        return setting not in (False, "off")

    def _compiled_paths(self, with_cache: bool) -> list[str]:
        from snarkd.witness import compiled

        paths = compiled.candidates(self._path, self._sha, None)
        if with_cache:
            paths += compiled.candidates(None, self._sha, inp.cache_folder(self._cache))
        return paths

    def _compiled_program(self):
        """The loaded compiled library, or None (none kept, turned off, refused: said once, then the interpreter)."""
        if self._compiled is None:
            with self._program_lock:
                if self._compiled is None:
                    self._compiled = self._load_compiled() or False
        return self._compiled or None

    def _load_compiled(self):
        if self.curve not in ("bn128", "bls12381") or not self._compiled_wanted():
            return None
        from snarkd.witness import compiled

        # beside the .wasm; in the compiled-module cache too only where the program is not beside it (resolving the
        # cache's setting loads the config layer: a one-shot run whose .wprog lies beside the .wasm never needs it)
        beside = self._path is not None and self._loaded_from == program_file.candidates(self._path, self._sha, None)[0]
        try:
            lib = compiled.load(self._compiled_paths(not beside), self._sha, self.curve)
        except compiled.LibraryError as exc:
            message = f"{self.name}: compiled witness library refused: {exc}; the interpreter runs instead"
            if self.strict and self.on_fallback is not None:
                self.on_fallback(message)
            else:
                _log().warning("%s", message)
            return None
        return lib

    @property
    def compiled_library(self) -> str | None:
        """The path of the compiled library in use (loaded when first asked), or None."""
        lib = self._compiled_program()
        return lib.path if lib is not None else None

    def compile(self, opt: str | None = None, force: bool = False, tier: str = "full") -> dict:
        """Build the compiled library for this wasm (translate, the system's C++ compiler, the file beside the .wasm
        or in the compiled-module cache) unless a usable one of this tier or a better one is kept (force: build
        anyway). tier: compiled.TIERS' key ("fast": sooner, slower runs; "full": the -O3 library, replacing a fast
        one); opt: one level instead (an experiment's). The library built is loaded for this calculator's next
        requests. {"path", "built", "build_s", "bytes", "tier", ...}; compiled.CompileError where none can be built
        (no compiler: a clear message)."""
        from snarkd.witness import compiled

        if not force:
            try:
                lib = compiled.load(self._compiled_paths(True), self._sha, self.curve)
            except compiled.LibraryError:
                lib = None  # rebuilt below (over the refused file where that is the first place)
            # a kept library serves unless it is the fast tier and the full one is asked for
            if lib is not None and (tier == "fast" or lib.meta["tier"] != "fast"):
                self._compiled = lib
                return {"path": lib.path, "built": False, **lib.meta}
        info = compiled.build(self._bytes, self._sha, self.curve, self._compiled_paths(True), opt=opt,
                              name=self.name, tier=tier, cache_dir=inp.cache_folder(self._cache))
        # swapped in: the file was renamed over the old one; this calculator's next request runs the new library
        # (a run in progress keeps the copy it took)
        self._compiled = compiled.load([info["path"]], self._sha, self.curve)
        return {**info, "built": True}

    # -- inputs ---------------------------------------------------------------------------------

    def input_signals(self) -> list[tuple[str, int]] | None:
        if self._input_names is None and self._sym is not None and os.path.exists(self._sym):
            self._input_names = inp.sized_input_names(self._sym, self._sizes.get)
        return self._input_names

    def missing_inputs(self, given: set) -> list[str]:
        names = self.input_signals()
        return [n for n, size in names if n not in given and size > 0] if names else []

    def prepare(self, inputs: dict) -> list[inp.PreparedInput]:
        return inp.prepare_inputs(inputs, self._sizes.get, self.prime, self.n32, self.input_size,
                                  self.missing_inputs, self.name)

    # -- calculation ------------------------------------------------------------------------------

    def calculate(self, inputs: dict, *, log: Callable[[str], None] | None = None) -> Witness:
        """The witness as a `snarkd.formats.wtns.Witness` (values: (n, 4) uint64, plain form)."""
        return self.calculate_with_source(inputs, log=log)[0]

    def calculate_with_source(self, inputs: dict, *, log: Callable[[str], None] | None = None, frame=None):
        """(Witness, "native" | "recorded" | "control" | "wasm"): the witness and how it was made. frame: where a
        replay writes (protocol.FrameAllocator)."""
        import numpy as np

        from snarkd.formats.wtns import Witness

        raw, source = self.calculate_bytes(inputs, log=log, frame=frame)
        values = np.frombuffer(raw, dtype="<u8").reshape(self.witness_size, 4)
        return Witness(self.prime, values), source

    def calculate_bytes(self, inputs: dict, *, log: Callable[[str], None] | None = None, frame=None):
        """(the witness as witness_size * 32 bytes of plain little-endian values, how it was made): a view of the
        block the native engine wrote, never copied (a replay's frame; a control-flow run's or recording's own block,
        read-only), or the wasm engine's bytes. No numpy on this path (the whole-process `snarkd witness` runs without it). frame: where a replay
        writes (protocol.FrameAllocator; None: memory of its own)."""
        prepared = self.prepare(inputs)
        values = bytearray(32 * self.input_size)
        recorded_inputs = []
        for p in prepared:
            pos, size = self._signals[p.hash]
            at = 32 * (pos - self.input_base)
            values[at: at + len(p.data)] = p.data
            recorded_inputs.append((p.hash, p.data))
        control_flow = self.value_dependent
        if control_flow and not self._paths_hits() and next(self._probe) % PROBE_EVERY:
            status = 1  # value-dependent, and no kept path has served a request: no replay to try
        else:
            nbytes = 32 * self.program.frame_rows
            buffer = frame(nbytes) if frame is not None else None
            if buffer is None:
                buffer = _uninitialized(nbytes)
            status, _, _, events = self.program.evaluate(values, buffer, log is not None)
            if status == 0:
                if self._hits is not None:  # else path_stats counts this replay when first asked (it sizes every path)
                    self._hits += 1
                self.stats.add("native")
                if log is not None:
                    render_log(events, log)
                return memoryview(buffer)[: 32 * self.witness_size], "native"
        # a miss where a compiled library is kept, value-dependent or not (round 35: before the verdict a miss was
        # recorded, ~2.3 s and a larger .wprog per new shape on the RSA verifier, two before the verdict, where the
        # library answers in ~40 ms; a straight-line circuit's inputs all fit its path from placeholder inputs and
        # never get here): the same control flow, compiled
        if status == 1 and self._compiled_program() is not None:
            # It writes every byte of the witness, so the caller's frame serves as a replay's does (a daemon's pooled
            # page-locked memory where a GPU proves: round 29, a fresh 6 MB mapping per request was 1,500 faults
            # and its unmapping a TLB shootdown across the synthesis workers' cores); else fresh pages
            nbytes = 32 * self.witness_size
            out = frame(nbytes) if frame is not None else None
            if out is None:
                out = _zero_pages(nbytes)
            st, message, code, logs = self._compiled.run(recorded_inputs, out, self.witness_size,
                                                         self.max_memory or 0, self.fuel, self.sanity_check)
            if st == 0:
                self.stats.add("control")
                self.compiled_runs += 1
                if self._loaded_from is None and not self._keep_tried:
                    # a program built here and never kept (placeholder inputs failed, as the RSA verifier's do, and
                    # no miss records now): kept once, so that the next process reads it instead of trying the
                    # placeholder inputs again (~0.3 s); tried once only, so a place where nothing can be written
                    # costs one warning, not one per request
                    self._keep_tried = True
                    self._save()
                if log is not None and logs:
                    _render_text(logs, log)
                return memoryview(out)[:nbytes], "control"
            why = (message.strip().splitlines() or [f"code {code}"])[0]  # its error: from the wasm engine below
        elif status == 1 and control_flow:  # value-dependent: the wasm's control flow, run natively
            if not self._said_control_flow:
                self._said_control_flow = True
                # only where logging is loaded: else nothing has configured a handler, and an INFO record would go
                # nowhere (importing logging for it was ~6 ms of a one-shot `snarkd witness`)
                if "logging" in sys.modules:
                    _log().info(  # (`log` is the request's log sink here)
                        "native witness program for %s: %s paths and still a miss: value-dependent; requests no "
                        "path fits run the wasm's control flow natively (nothing more recorded)", self.name,
                        "its" if self._program is None else self._program.n_paths)  # (not loaded for a message)
            res = self._run(recorded_inputs)
            if res.ok:
                self.stats.add("control")
                if log is not None:
                    render_log(res.logs, log)
                return memoryview(res.witness), "control"  # the native block itself (_witness.WitnessBytes)
            why = res.message.strip().splitlines()[0] if res.message.strip() else f"code {res.code}"
        elif status == 1:  # a guard missed: this input takes the wasm another way
            res = self._record(recorded_inputs, force=False)
            if res.ok:
                self.stats.add("recorded")
                self._keep(res.path)
                if log is not None:
                    render_log(res.logs, log)
                return memoryview(res.witness), "recorded"
            why = res.message.strip().splitlines()[0] if res.message.strip() else f"code {res.code}"
        else:
            why = "the circuit divides by zero"
        self.stats.add("wasm")
        if self.strict and self.on_fallback is not None:
            self.on_fallback(f"{self.name}: this request ran on the wasm engine ({why})")
        return self.calculate_on_wasm(inputs, log=log).values.tobytes(), "wasm"

    def calculate_on_wasm(self, inputs: dict, *, log: Callable[[str], None] | None = None) -> Witness:
        """The witness from the wasm engine (wasmtime), whatever the native program says."""
        with self._wasm_lock:
            if self._wasm_calc is None:
                from snarkd.witness.calculator import WitnessCalculator

                self._wasm_calc = WitnessCalculator(self._bytes, **self._wasm_kwargs)
        return self._wasm_calc.calculate(inputs, log=log)

    def calculate_words(self, inputs: dict, *, log: Callable[[str], None] | None = None):
        """The witness as (witness_size, n32) little-endian uint32 words (wtns layout)."""
        import numpy as np

        raw, _ = self.calculate_bytes(inputs, log=log)
        return np.frombuffer(raw, dtype="<u4").reshape(self.witness_size, -1)[:, : self.n32]

    def calculate_to_file(self, inputs: dict, out, *, log: Callable[[str], None] | None = None) -> None:
        """Calculate and write a .wtns (byte-identical to `snarkjs wtns calculate`)."""
        from snarkd.formats.wtns import write_wtns

        raw, _ = self.calculate_bytes(inputs, log=log)
        write_wtns(out, self.prime, raw)

    def close(self) -> None:
        if self._wasm_calc is not None:
            self._wasm_calc.close()

    def describe(self) -> dict:
        """The program's paths and where it lives (status, logs, the bench)."""
        return {"engine": "native", "program": str(self.loaded_from) if self.loaded_from else None,
                "build_ms": round(self.build_ms, 1), "paths": self.program.path_stats(),
                "dropped_paths": self.dropped_paths, "value_dependent": self.value_dependent,
                "compiled_library": self.compiled_library, "compiled_runs": self.compiled_runs,
                **self.stats.as_dict()}


def _render_text(text: str, sink: Callable[[str], None]) -> None:
    """A compiled run's log() text (lines ended by newlines, the last perhaps unfinished) as render_log prints it."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        sink(line)


def _zero_pages(nbytes: int):
    """A writable buffer of fresh pages (an anonymous mapping, never filled here; the run writes every byte once).
    bytearray(n) would zero 6 MB first (RSA's witness: ~2-4 ms of a one-shot run). Its pages are populated in one
    call rather than faulted in one by one as the run writes them: RSA's 1,500 faults were ~1.5 ms more of the whole
    process (round 28, paired). Written densely, it takes transparent huge pages as the native core's witness blocks
    do (native/witness/big_vec.hpp) unless [cpu] huge_pages is off (file_trust.fresh_pages: RSA's 6.1 MB populated
    in 0.16 ms in huge pages, 1.6 ms in 4 KiB ones; round 34). Only where numpy is not loaded (the one-shot CLI, as
    _uninitialized decides): Python's mmap.madvise holds the GIL while the kernel populates, where the mapping's own
    MAP_POPULATE runs without it, and a daemon's other threads (numpy loaded) keep that."""
    return fresh_pages(nbytes, program_file.one_shot_huge_pages())


def _uninitialized(nbytes: int):
    """A writable buffer the replay fills whole. Not bytearray(n), which zero-fills it holding the GIL (a 2^20
    witness: 32 MiB, milliseconds in which a daemon's device workers cannot launch a kernel): numpy's
    empty, where numpy is loaded already (the daemon), else (the one-shot CLI, which has no other thread and does
    not load numpy) fresh huge pages for a large frame, a bytearray for a small one."""
    import sys

    np = sys.modules.get("numpy")
    if np is not None:
        return np.empty(nbytes, dtype=np.uint8)
    if nbytes >= HUGE_MIN and program_file.one_shot_huge_pages():
        # a fresh mapping in huge pages, populated at once: bytearray(n)'s zero-fill faulted it in 4 KiB at a time
        # (SHA-256's 3 MB frame, round 34)
        return fresh_pages(nbytes)
    return bytearray(nbytes)


def _declared_wasm_memory() -> int:
    """[limits] wasm_memory's declared default: a recording's bound when the caller gives none (entry points pass
    the configured one)."""
    from snarkd.config.sections import ENGINE_DEFAULTS

    return int(ENGINE_DEFAULTS["wasm_memory"])
