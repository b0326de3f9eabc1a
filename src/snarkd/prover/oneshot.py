"""`snarkd prove` on the CPU: one proof, the whole of it in one native call.

The key and the witness stay memory-mapped (with the key's prepared sidecar
when there is a valid one: snarkd.prover.prepared) and go to the native core as
zero-copy section buffers (`groth16_prove` in snarkd.native._core): it checks
each bulk section just before using it (canonical coordinates, coefficient
entries, witness values) and releases the section's pages after its last use,
so the key is never resident all at once. Nothing on this path imports numpy:
its import alone costs ~60 ms and ~17 MB, a large share of a one-shot proof
at 2^16-2^17 constraints. The proof is the one prover.groth16.prove makes for
the same r and s; the engine keeps using the staged path.
"""

from __future__ import annotations

import importlib
import os
import secrets

from snarkd.curves.encoding import g1_bytes_to_json, g2_bytes_to_json
from snarkd.errors import FormatError, InputError, MismatchError
from snarkd.formats.binfile import BinFile
from snarkd.formats.wtns import MAGIC as WTNS_MAGIC, VERSIONS as WTNS_VERSIONS, check_header_values
from snarkd.formats.wtns import read_header as read_wtns_header
from snarkd.formats.zkey_layout import open_zkey, read_layout
from snarkd.prover import prepared as _prepared
from snarkd.prover.timing import PhaseTimer
from snarkd.prover.types import Proof, proof_json


class KeyFile:
    """A .zkey opened for one-shot proofs: mapped once, its header and layout read once (`snarkd prove`
    asks its domain before proving: auto backend, progress bar)."""

    def __init__(self, path: str | os.PathLike):
        self.path = path
        self.file = open_zkey(path)
        try:
            self.layout = read_layout(self.file)
        except BaseException:
            self.file.close()
            raise

    @property
    def domain_power(self) -> int:
        return self.layout.domain_size.bit_length() - 1

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "KeyFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _replay(timer: PhaseTimer):
    """on_phase for the native call: each phase goes through the timer as it ends, so a
    PhaseBar (snarkd.prover.progress) moves during the one long call."""
    def on_phase(name: str, ms: float) -> None:
        with timer.phase(name):
            pass
        timer.ms[name] = timer.ms.get(name, 0.0) + ms
    return on_phase


def prove_files(zkey: str | os.PathLike | KeyFile, witness_path: str | os.PathLike, threads: int = 0,
                timer: PhaseTimer | None = None, r: int | None = None, s: int | None = None,
                witness_name: str | None = None, verify: bool = True) -> Proof:
    """Prove with fresh blinding from the OS CSPRNG (r, s only for reproducible tests).
    zkey: a path, or a KeyFile opened already (left open for its owner to close).
    verify: check the proof against the key's own verification data before returning it
    (native pairing, ~2 ms); a proof that does not verify raises SelfCheckError (exit 4)
    naming the likely cause (snarkd.verifier.self_check)."""
    timer = timer or PhaseTimer()
    witness_name = witness_name or os.fspath(witness_path)
    views: list[memoryview] = []
    key = wf = prep = None
    try:
        with timer.phase("load"):
            key = zkey if isinstance(zkey, KeyFile) else KeyFile(zkey)
            zkey_path, zf, lay = key.path, key.file, key.layout
            wf = BinFile.open(witness_path, WTNS_MAGIC, WTNS_VERSIONS)
            prime, n, woff = read_wtns_header(wf)
        curve = lay.curve
        witness = wf.buffer[woff : woff + 32 * n]
        views.append(witness)
        check_header_values(prime, n, int.from_bytes(witness[0:32], "little") if n else None, lay.r, lay.n_vars,
                            curve.name, zf.path, witness_name)

        prep = _prepared.load(zkey_path, zf, curve.name, lay.n_vars, lay.domain_size)
        zbuf = zf.buffer
        sections = {}
        for name, (off, nbytes) in (*lay.sections.items(), *lay.header_points.items()):
            sections[name] = zbuf[off : off + nbytes]
            views.append(sections[name])
        order = curve.r
        r = secrets.randbelow(order) if r is None else r % order
        s = secrets.randbelow(order) if s is None else s % order
        native = getattr(importlib.import_module("snarkd.native._core"), curve.native)
        scalars = (r.to_bytes(32, "little"), s.to_bytes(32, "little"), (r * s % order).to_bytes(32, "little"))
        try:
            out = native.groth16_prove(sections, witness, lay.n_vars, lay.n_public, lay.domain_size, *scalars, threads,
                                       drop_pages=True, prepared=prep.blocks if prep else None, on_phase=_replay(timer))
        except ValueError as exc:
            if prep is None or not str(exc).startswith("prepared:"):
                raise
            _prepared.discard(prep, zkey_path, str(exc))  # the sidecar's arrays are inconsistent: without it
            prep = None
            out = native.groth16_prove(sections, witness, lay.n_vars, lay.n_public, lay.domain_size, *scalars, threads,
                                       drop_pages=True, on_phase=_replay(timer))
        if out["error"] is not None:
            section, index, message = out["error"]
            if section == 0:
                raise MismatchError(f"{witness_name}: witness value w[{index}] is not canonical (not below the field prime r = {lay.r})")
            raise FormatError(zf.path, message, section=zf.label(section))
        public_ints = [int.from_bytes(witness[32 * i : 32 * i + 32], "little") for i in range(1, lay.n_public + 1)]
        with timer.phase("assemble"):
            proof = proof_json(curve.name, g1_bytes_to_json(curve, out["pi_a"]), g2_bytes_to_json(curve, out["pi_b"]),
                               g1_bytes_to_json(curve, out["pi_c"]))
            public = [str(v) for v in public_ints]
        if verify:
            # the proof checked against the key's own verification data before it is returned:
            # a damaged key, a witness that does not satisfy the circuit, a bug -- exit 4, and
            # nothing is written
            with timer.phase("verify"):
                from snarkd.verifier.groth16 import verify_points

                try:
                    ok = verify_points(curve, sections["alpha1"], sections["beta2"], sections["gamma2"],
                                       sections["delta2"], sections["ic"], public_ints, out["pi_a"], out["pi_b"], out["pi_c"])
                except InputError:  # a verification-key point off its curve: the key is damaged
                    ok = False
            if not ok:
                _self_check_failed(zkey_path, proof, public, witness_name, threads)
        return Proof(proof=proof, public=public, timings=dict(timer.ms), curve=curve.name)
    finally:
        for v in views:
            v.release()
        for f in (prep, wf, key if key is not zkey else None):
            if f is not None:
                f.close()


def _self_check_failed(zkey_path, proof: dict, public: list[str], witness_name: str, threads: int) -> None:
    """The self-check's verdict with its diagnosis (which needs the numpy reader: only here)."""
    from snarkd.formats.zkey import read_zkey
    from snarkd.verifier.self_check import SelfCheckError, verify_against_key

    with read_zkey(zkey_path) as zk:
        verify_against_key(zk, proof, public, witness_name=witness_name, threads=threads)
    raise SelfCheckError(f"self-check failed: the proof does not verify against the verification key inside "
                         f"{os.fspath(zkey_path)}; nothing was written.")
