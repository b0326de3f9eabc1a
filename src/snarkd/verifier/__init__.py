"""Groth16 verification of snarkjs-format proofs (native pairing).

`verify(vk, public, proof)` and `verify_files(...)` take snarkjs JSON;
`verify_points(curve, ...)` takes points in the zkey layout (for the prover's
self-check). The py_ecc implementation kept as a test oracle is tests/verifier/ref_verifier.py.
"""

from snarkd.verifier.groth16 import verify, verify_files, verify_points

__all__ = ["verify", "verify_files", "verify_points"]
