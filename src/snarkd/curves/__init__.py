"""Curve parameters and encodings shared by formats, prover and verifier."""

from snarkd.curves.params import BLS12_381, BN254, CURVES, Curve, curve_by_name, curve_by_q, curve_by_r

__all__ = ["BN254", "BLS12_381", "CURVES", "Curve", "curve_by_name", "curve_by_q", "curve_by_r"]
