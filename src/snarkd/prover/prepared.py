"""Per-key precomputation kept beside the zkey: `snarkd prepare KEY.zkey` writes
KEY.zkey.prep (the container: snarkd.formats.prepared); the provers map it at load.

What it holds: zkey section 4 (the A and B coefficients) laid out for the
sparse products A·w, B·w -- each matrix's entries sorted by constraint (CSR),
the coefficients +1 and -1 (three in four entries of circom keys) marked so
they cost an addition instead of a product, the others in Montgomery form --
checked once, when it is built. A proof then reads neither section 4 nor its
entry checks, and the sidecar is about half the size of section 4.

Policy. A missing sidecar is not used, and a one-shot proof does not write
files beside the key unasked (`prepared="build"` -- for a daemon -- creates
it). A stale sidecar (another or a changed zkey: size, modification time and
header hash are compared) or a corrupt one (a block checksum, or the native
core's consistency check of the arrays) is ignored with a warning and rebuilt
when `rebuild` is set and its directory is writable. Nothing in it is trusted
beyond what those checks establish, so it can make a proof faster but never
a wrong one.
"""

from __future__ import annotations

import importlib
import os

from snarkd.errors import FormatError
from snarkd.formats.binfile import BinFile
from snarkd.formats.prepared import SUFFIX, PreparedError, PreparedFile, write, zkey_identity
from snarkd.formats.zkey_layout import open_zkey, read_layout

LOGGER = "snarkd.prepared"


def _warn(msg: str, *args) -> None:
    import logging  # only when there is something to say: the one-shot path stays lean

    logging.getLogger(LOGGER).warning(msg, *args)

LAYOUT = "csr-1"  # what the blocks mean; a reader of another layout ignores (and rebuilds) the file
BLOCKS = tuple(f"{kind}_{m}" for m in "ab" for kind in ("rows", "vrows", "ent", "val"))
MODES = ("use", "build", "off")


def sidecar_path(zkey_path: str | os.PathLike) -> str:
    return os.fspath(zkey_path) + SUFFIX


def _identity(zkey_path: str | os.PathLike, bf: BinFile) -> dict:
    return zkey_identity(zkey_path, bytes(bf.section(1)) + bytes(bf.section(2)))


def _native(curve_native: str):
    return getattr(importlib.import_module("snarkd.native._core"), curve_native)


def build(zkey_path: str | os.PathLike, out: str | os.PathLike | None = None) -> str:
    """Write the sidecar of `zkey_path` (default: beside it); returns its path.
    FormatError if section 4 of the key is malformed."""
    out = os.fspath(out) if out is not None else sidecar_path(zkey_path)
    bf = open_zkey(zkey_path)
    try:
        lay = read_layout(bf)
        res = _native(lay.curve.native).prepare_csr(bf.section(4), lay.domain_size, lay.n_vars)
        if res["error"] is not None:
            raise FormatError(bf.path, res["error"][1], section=bf.label(4))
        blocks = {name: res[name] for name in BLOCKS}
        meta = {"layout": LAYOUT, "curve": lay.curve.name, "n_vars": lay.n_vars, "domain_size": lay.domain_size,
                "n_coefs": lay.n_coefs}
        identity = _identity(zkey_path, bf)
    finally:
        bf.close()
    write(out, identity, meta, blocks)
    return out


def _open_checked(path: str, identity: dict, curve: str, n_vars: int, domain_size: int) -> PreparedFile:
    pf = PreparedFile(path, identity)
    meta = pf.meta
    if meta.get("layout") != LAYOUT:
        pf.close()
        raise PreparedError(f"layout {meta.get('layout')!r}, this snarkd reads {LAYOUT!r}")
    if (meta.get("curve"), meta.get("n_vars"), meta.get("domain_size")) != (curve, n_vars, domain_size) or \
            set(pf.blocks) != set(BLOCKS):
        pf.close()
        raise PreparedError("does not describe this key (curve, sizes or blocks differ)")
    return pf


def load(zkey_path: str | os.PathLike, bf: BinFile, curve: str, n_vars: int, domain_size: int, mode: str = "use",
         rebuild: bool = True) -> PreparedFile | None:
    """The checked sidecar of an opened zkey, or None (see the module docstring for when)."""
    if mode not in MODES:
        raise ValueError(f"prepared: {mode!r} is not one of {', '.join(MODES)}")
    if mode == "off":
        return None
    path = sidecar_path(zkey_path)
    if not os.path.exists(path) and mode != "build":
        return None
    identity = _identity(zkey_path, bf)
    try:
        return _open_checked(path, identity, curve, n_vars, domain_size)
    except PreparedError as exc:
        missing = str(exc) == "not found"
        if not (rebuild or mode == "build"):
            _warn("%s: %s; ignored (run `snarkd prepare %s` to rebuild it)", path, exc, os.fspath(zkey_path))
            return None
        if not missing:
            _warn("%s: %s; ignored, rebuilding it", path, exc)
    try:
        build(zkey_path, path)
        return _open_checked(path, identity, curve, n_vars, domain_size)
    except (OSError, PreparedError) as exc:
        _warn("%s: cannot (re)build the prepared sidecar (%s); proving without it", path, exc)
        return None


def discard(pf: PreparedFile | None, zkey_path: str | os.PathLike, why: str) -> None:
    """The native core refused the sidecar's arrays (a damaged or foreign file that
    passed the checksums): warn and remove it, so the next prepare rebuilds it."""
    if pf is None:
        return
    _warn("%s: %s; ignored and removed (run `snarkd prepare %s`)", pf.path, why, os.fspath(zkey_path))
    path = pf.path
    pf.close()
    try:
        os.unlink(path)
    except OSError:
        pass
