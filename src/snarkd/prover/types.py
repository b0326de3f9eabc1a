"""What flows between the prover's stages (a leaf module: the backends and the engine import it).

Plain classes, not dataclasses: dataclasses (it imports inspect, ast, dis, tokenize) cost every `snarkd prove`
process ~12 ms of its start-up (bench/cpu-notes.md, round 7)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the one-shot prove path runs without numpy
    from typing import Protocol

    import numpy as np
else:  # a static interface for type checkers; at run time a plain base, without typing's import (with re and enum,
    Protocol = object  # ~3 ms of a one-shot proof). Nothing subclasses or isinstance-checks SectionKey.


class Proof:
    """proof.json's object, the public values, the phases' timings (ms), the curve's name, and points: (pi_a, pi_b,
    pi_c) as affine Montgomery bytes (the self-check's)."""

    def __init__(self, proof: dict, public: list[str], timings: dict[str, float] | None = None, curve: str = "",
                 points: tuple = ()):
        self.proof = proof
        self.public = public
        self.timings = {} if timings is None else timings
        self.curve = curve
        self.points = points

    def __repr__(self) -> str:
        return f"Proof(proof={self.proof!r}, public={self.public!r}, timings={self.timings!r}, curve={self.curve!r})"


def proof_json(curve_name: str, pi_a: list, pi_b: list, pi_c: list) -> dict:
    """snarkjs's proof.json object from the three points' JSON coordinates: the one place a proof is assembled
    (prover/groth16.finalize, for every path)."""
    return {"pi_a": pi_a, "pi_b": pi_b, "pi_c": pi_c, "protocol": "groth16", "curve": curve_name}


HEADER = ("alpha1", "beta1", "delta1", "beta2", "delta2")  # the key's header points a proof is blinded with


class SectionKey(Protocol):
    """A proving key as the proof's steps (prover/groth16.py) read it: its sizes, its native core and its
    sections by name (coefs, a, b1, b2, c, h and the header points alpha1, beta1, delta1, beta2, delta2) as
    buffers. Two kinds: prover.proving_key.ProvingKey (read_zkey checked every section at load; the engine
    keeps it resident) and prover.mapped.MappedKey (a one-shot proof: each bulk section checked just
    before its first use, its pages released after its last)."""

    curve: object
    native: object
    path: str
    n_vars: int
    n_public: int
    domain_size: int
    prepared: object  # the prepared sidecar (snarkd.prover.prepared) or None
    read_once: bool  # one proof reads it (its transforms' tables and its a, b are given back as soon as used)

    def section(self, name: str): ...

    def use(self, *names: str) -> None:
        """Before the first use of these sections: FormatError naming the section if one is malformed."""

    def done(self, *names: str) -> None:
        """After the last use of these sections ("prepared": the sidecar's blocks)."""

    def drop_prepared(self, why: str) -> None:
        """Stop using the sidecar (the native core refused its arrays) and remove it."""


class Synthesized:
    """A witness checked against its key, with a = A·w and b = B·w on the domain (native FrVectors, None when
    the backend computes them itself: `Backend.spmv_on_device`). witness: the values, (n, 4) uint64 limbs (a
    numpy array, or a memoryview of the mapped file on the one-shot path)."""

    def __init__(self, witness: np.ndarray | memoryview, a: object | None, b: object | None):
        self.witness = witness
        self.a = a
        self.b = b

    @property
    def nbytes(self) -> int:
        return sum(x.nbytes for x in (self.a, self.b) if x is not None)


class G1Sums:
    """The device stage's output: the MSM results (affine, Montgomery limbs: bytes from the CPU, arrays from a
    GPU; any buffer). b2: set when the G2 MSM also ran in the device stage."""

    def __init__(self, h: object, a: object, b1: object, c: object, b2: object | None = None):
        self.h = h
        self.a = a
        self.b1 = b1
        self.c = c
        self.b2 = b2
