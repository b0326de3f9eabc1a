"""snarkd: a Groth16 proving daemon for circom/snarkjs circuits (BN254 and BLS12-381)."""

__version__ = "0.1.0"
