"""Groth16 proving: zkey + witness -> proof.json and public.json (snarkjs's algorithm).

Follow a proof through the files in this order:
  proving_key.py  the resident, memory-mapped key
  qap.py          witness -> the H-polynomial evaluations on the odd coset
  groth16.py      synthesize -> device_stage -> finalize, each phase timed
  backend.py      the device seam: the Backend protocol and get_backend()
  cpu.py, cuda.py the two backends (cuda.py drives snarkd.gpu)
  types.py        Synthesized, G1Sums, Proof: what flows between the stages
  output.py       proof.json / public.json exactly as snarkjs writes them
  oneshot.py      `snarkd prove` on the CPU: the whole proof in one native call, no numpy

Names are resolved on first use (PEP 562), so the one-shot path imports only
what it needs.
"""

import importlib

_EXPORTS = {
    "Backend": "backend",
    "get_backend": "backend",
    "device_stage": "groth16",
    "finalize": "groth16",
    "prove": "groth16",
    "synthesize": "groth16",
    "write_proof": "output",
    "ProvingKey": "proving_key",
    "G1Sums": "types",
    "Proof": "types",
    "Synthesized": "types",
}

__all__ = ["ProvingKey", "Proof", "prove", "write_proof", "synthesize", "device_stage", "finalize", "Synthesized",
           "G1Sums", "Backend", "get_backend"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
