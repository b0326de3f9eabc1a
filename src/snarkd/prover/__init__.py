"""Groth16 proving: zkey + witness -> proof.json and public.json (snarkjs's algorithm).

Follow a proof through the files in this order:
  proving_key.py  the resident, memory-mapped key
  qap.py          witness -> the H-polynomial evaluations on the odd coset
  groth16.py      synthesize -> device_stage -> finalize, each phase timed
  backend.py      the device seam: the Backend protocol and get_backend()
  cpu.py, cuda.py the two backends (cuda.py drives snarkd.gpu)
  types.py        Synthesized, G1Sums, Proof: what flows between the stages
  output.py       proof.json / public.json exactly as snarkjs writes them
"""

from snarkd.prover.backend import Backend, get_backend
from snarkd.prover.groth16 import device_stage, finalize, prove, synthesize
from snarkd.prover.output import write_proof
from snarkd.prover.proving_key import ProvingKey
from snarkd.prover.types import G1Sums, Proof, Synthesized

__all__ = ["ProvingKey", "Proof", "prove", "write_proof", "synthesize", "device_stage", "finalize", "Synthesized",
           "G1Sums", "Backend", "get_backend"]
