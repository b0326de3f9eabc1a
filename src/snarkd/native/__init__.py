"""Native CPU core: Montgomery fields, G1/G2, Pippenger MSM, NTT, Groth16 pieces."""
from . import _core
from ._core import bn254, bls12_381, hardware_threads

__all__ = ["bn254", "bls12_381", "hardware_threads"]
