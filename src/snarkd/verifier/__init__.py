"""Groth16 verification of snarkjs-format proofs (native pairing).

`verify(vk, public, proof)` and `verify_files(...)` take snarkjs JSON;
`verify_points(curve, ...)` takes points in the zkey layout (for the prover's
self-check). `snarkd.verifier.reference.verify_reference` is the py_ecc
implementation kept as a test oracle.
"""

from snarkd.verifier.groth16 import verify, verify_files, verify_points

__all__ = ["verify", "verify_files", "verify_points"]
