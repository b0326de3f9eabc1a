"""`snarkd setup`: single-party Groth16 development setup (see groth16_setup.py)."""
