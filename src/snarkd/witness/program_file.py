"""The native witness program on disk (CIRCUIT.wasm.wprog): what `NativeCalculator` built from a
circuit's .wasm, kept so that the next process replays at once instead of recording again.

    magic "snarkdWP" | u32 version | u32 H | H bytes of JSON header | u32 CRC-32C of the header
    (formats/checked_header.py) | the program (the native core's serialization) | u32 CRC-32C of the program

The header binds the file to one .wasm (its SHA-256), one `sanity_check` setting and this layout
version, and carries what Python needs before the native core is involved (the field, the sizes,
the input signal table). A file that is not ours, has another version, belongs to another wasm or
setting, or fails a checksum raises ProgramFileError: the caller ignores it with a warning and
rebuilds. The whole file is read into memory, never mapped: a program file truncated or rewritten
by someone else can make a load fail, never a process crash.

Where: beside the .wasm when that directory is writable, else in the compiled-module cache
([keys] wasm_cache) under the wasm's hash.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from snarkd.atomic import atomic_open
from snarkd.formats.checked_header import CRC, PREFIX, crc32c, pack, unpack

MAGIC = b"snarkdWP"
VERSION = 1
SUFFIX = ".wprog"


class ProgramFileError(Exception):
    """The program file cannot be used: missing, stale (another wasm or setting) or corrupt."""


def identity(wasm_sha256: str, sanity_check: bool) -> dict:
    """What a program is bound to: the wasm's bytes, circom's sanity-check flag (init(1) runs other
    code), and the native core's instruction set (native/witness/program.hpp PROGRAM_FORMAT)."""
    from snarkd.native import _witness

    return {"wasm_sha256": wasm_sha256, "sanity_check": bool(sanity_check), "layout": VERSION,
            "instructions": int(_witness.PROGRAM_FORMAT)}


def candidates(wasm_path: str | os.PathLike | None, wasm_sha256: str, cache_dir: Path | None) -> list[Path]:
    """Where a program for this wasm may be, in the order they are tried."""
    out = []
    if wasm_path is not None:
        out.append(Path(f"{os.fspath(wasm_path)}{SUFFIX}"))
    if cache_dir is not None:
        out.append(cache_dir / f"{wasm_sha256[:40]}{SUFFIX}")
    return out


def write(path: Path, ident: dict, meta: dict, program) -> None:
    """program: the program's bytes, or the native Program itself, which writes them straight to the file
    (`write_to`: a 2^20 circuit's program is 70 MB, never held as one more copy)."""
    header = json.dumps({"identity": ident, "meta": meta}, sort_keys=True).encode()
    with atomic_open(path, "wb", durable=False) as fh:  # a cache: a file lost to a power cut is rebuilt
        fh.write(pack(MAGIC, VERSION, header))
        if hasattr(program, "write_to"):
            fh.flush()
            crc, _ = program.write_to(fh.fileno())
        else:
            fh.write(program)
            crc = crc32c(program)
        fh.write(CRC.pack(crc))


def save(paths: list[Path], ident: dict, meta: dict, program) -> Path | None:
    """Write to the first place that takes it; None when none does (the program then lives in
    this process only)."""
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path, ident, meta, program)
            return path
        except OSError:
            continue
    return None


def read(path: Path, ident: dict) -> tuple[dict, memoryview]:
    """(meta, the program's bytes) of a checked file bound to `ident`; ProgramFileError otherwise."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ProgramFileError("not found") from None
    except OSError as exc:
        raise ProgramFileError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) < PREFIX.size + 2 * CRC.size:
        raise ProgramFileError(f"too short ({len(data)} bytes) to be a witness program")
    obj, body = unpack(data, MAGIC, VERSION, "witness program", ProgramFileError, tail=CRC.size)
    if not isinstance(obj, dict) or obj.get("identity") != ident:
        raise ProgramFileError("stale: made from another .wasm or with another sanity-check setting")
    program = memoryview(data)[body:-CRC.size]  # a view: the program is not copied again before its load
    if crc32c(program) != CRC.unpack_from(data, len(data) - CRC.size)[0]:
        raise ProgramFileError("program checksum mismatch (truncated or corrupt)")
    meta = obj.get("meta")
    if not isinstance(meta, dict):
        raise ProgramFileError("header without meta (corrupt)")
    return meta, program
