"""`snarkd prove` on the CPU: one proof through the staged prover's own steps, run back to back.

The key and the witness stay memory-mapped (formats.zkey_layout.KeyFile, formats.wtns.MappedWitness; with the
key's prepared sidecar when there is a valid one: snarkd.prover.prepared) and go to
prover.groth16.prove, the key as a MappedKey (prover.mapped): zero-copy section buffers, each bulk
section checked just before its first use (canonical coordinates, coefficient
entries) and its pages released after its last, so the key is never resident
all at once. The sequence of the steps is prover/groth16.py's, the one every
path runs; only the key differs. Nothing on this path imports numpy: its
import alone costs ~60 ms and ~17 MB, a large share of a one-shot proof at
2^16-2^17 constraints.
"""

from __future__ import annotations

import os
import time

from snarkd.formats.wtns import MappedWitness
from snarkd.formats.zkey_layout import KeyFile
from snarkd.prover.timing import PhaseTimer
from snarkd.prover.types import Proof

# The rest of the prover (groth16, cpu, qap, mapped, prepared, output: ~5 ms of imports) is imported in
# prove_files once the witness MSMs are started (prover.cpu.head_start): a native thread runs them on the core
# the interpreter leaves idle meanwhile.

__all__ = ["KeyFile", "prove_files"]


def prove_files(zkey: str | os.PathLike | KeyFile, witness_path: str | os.PathLike, threads: int = 0,
                timer: PhaseTimer | None = None, r: int | None = None, s: int | None = None,
                witness_name: str | None = None, verify: bool = True,
                write: tuple[str | os.PathLike, str | os.PathLike] | None = None) -> Proof:
    """Prove with fresh blinding from the OS CSPRNG (r, s only for reproducible tests).
    zkey: a path, or a KeyFile opened already (left open for its owner to close).
    verify: check the proof against the key's own verification data before returning it
    (native pairing, ~2 ms); a proof that does not verify raises SelfCheckError (exit 4)
    naming the likely cause (snarkd.verifier.self_check), and nothing is written.
    write: (proof.json, public.json) paths, written (phase "write") once the proof passed its self-check."""
    timer = timer or PhaseTimer()
    witness_name = witness_name or os.fspath(witness_path)
    key = witness = mapped = started = None
    try:
        with timer.phase("load"):
            key = zkey if isinstance(zkey, KeyFile) else KeyFile(zkey)
            witness = MappedWitness.open(witness_path, witness_name)
            from snarkd.prover.cpu import head_start

            # the witness MSMs (and their sections' checks) started on the helper thread: the device stage
            # finishes them (the mapped key's head_start)
            started = head_start(key, witness, threads)
        from snarkd.prover.groth16 import prove
        from snarkd.prover.mapped import MappedKey
        from snarkd.prover.output import write_proof

        t0 = time.perf_counter()
        mapped = MappedKey(key)  # the load step's last part (its prepared sidecar): one "load" phase for the bar
        timer.record("load", (time.perf_counter() - t0) * 1e3)
        mapped.head_start, started = started, None  # the key's now: its release stops it
        result = prove(mapped, witness, threads, r, s, witness_name, timer)
        if verify:
            # the proof checked against the key's own verification data before it is returned:
            # a damaged key, a witness that does not satisfy the circuit, a bug -- exit 4, and
            # nothing is written
            from snarkd.verifier.groth16 import verify_on_sections

            with timer.phase("verify"):
                ok = verify_on_sections(mapped, result)
            if not ok:
                _self_check_failed(mapped, result.proof, result.public, witness_name, threads)
        if write is not None:
            with timer.phase("write"):
                write_proof(result, *write)
        result.timings = dict(timer.ms)
        return result
    finally:
        if started is not None:  # not handed to the key: its tasks read the key's and the witness's mappings
            started.stop()
        if mapped is not None:  # before the witness: the key's head_start, if still running, stopped first
            mapped.release()
        if witness is not None:
            witness.close()
        if key is not None and key is not zkey:
            key.close()


def _self_check_failed(key, proof: dict, public: list[str], witness_name: str, threads: int) -> None:
    """The self-check's verdict with its diagnosis, on the mapped key's own sections (numpy only here)."""
    from snarkd.verifier.self_check import SelfCheckError, verify_against_sections

    verify_against_sections(key, proof, public, witness_name=witness_name, threads=threads)
    raise SelfCheckError(f"self-check failed: the proof does not verify against the verification key inside "
                         f"{key.path}; nothing was written.")
