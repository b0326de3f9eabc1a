"""What flows between the prover's stages (a leaf module: the backends and the engine import it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the one-shot prove path runs without numpy
    import numpy as np


@dataclass
class Proof:
    proof: dict
    public: list[str]
    timings: dict[str, float] = field(default_factory=dict)
    curve: str = ""


def proof_json(curve_name: str, pi_a: list, pi_b: list, pi_c: list) -> dict:
    """snarkjs's proof.json object from the three points' JSON coordinates: the one place both provers (the
    staged groth16.finalize and the one-shot native path, oneshot.py) assemble it."""
    return {"pi_a": pi_a, "pi_b": pi_b, "pi_c": pi_c, "protocol": "groth16", "curve": curve_name}


@dataclass
class Synthesized:
    """A witness checked against its key, with a = A·w and b = B·w on the domain
    (None when the backend computes them itself: `Backend.spmv_on_device`)."""

    witness: np.ndarray
    a: np.ndarray | None
    b: np.ndarray | None

    @property
    def nbytes(self) -> int:
        return sum(x.nbytes for x in (self.a, self.b) if x is not None)


@dataclass
class G1Sums:
    """The device stage's output: the MSM results (affine, Montgomery limbs)."""

    h: np.ndarray
    a: np.ndarray
    b1: np.ndarray
    c: np.ndarray
    b2: np.ndarray | None = None  # set when the G2 MSM also ran in the device stage
