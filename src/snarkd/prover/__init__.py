"""Groth16 proving: zkey + witness -> proof.json and public.json (snarkjs's algorithm).

Follow a proof through the files in this order:
  proving_key.py  the resident, memory-mapped key
  qap.py          witness -> the H-polynomial evaluations on the odd coset
  groth16.py      the MSMs, blinding and assembly, each phase timed
  output.py       proof.json / public.json exactly as snarkjs writes them
"""

from snarkd.prover.groth16 import G1Sums, Proof, Synthesized, device_stage, finalize, prove, synthesize
from snarkd.prover.output import write_proof
from snarkd.prover.proving_key import ProvingKey

__all__ = ["ProvingKey", "Proof", "prove", "write_proof", "synthesize", "device_stage", "finalize", "Synthesized", "G1Sums"]
