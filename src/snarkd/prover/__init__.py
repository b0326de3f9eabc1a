"""Groth16 proving: zkey + witness -> proof.json and public.json (snarkjs's algorithm).

Follow a proof through the files in this order:
  groth16.py      synthesize -> device_stage -> finalize, each phase timed: the one sequence of the steps
  proving_key.py  the resident, memory-mapped key (a SectionKey: what the steps read)
  mapped.py       a key mapped for one proof (the one-shot SectionKey over formats.zkey_layout.KeyFile: checked,
                  then released, section by section)
  qap.py          witness -> the H-polynomial evaluations on the odd coset
  backend.py      the device seam: the Backend protocol and get_backend()
  cpu.py, cuda.py the two backends (cuda.py drives snarkd.gpu)
  types.py        SectionKey, Synthesized, G1Sums, Proof: what the stages read and pass on
  output.py       proof.json / public.json exactly as snarkjs writes them
  oneshot.py      `snarkd prove` on the CPU: files in (the key and witness mapped), groth16.prove, the self-check,
                  files out; no numpy

Names are resolved on first use (PEP 562), so the one-shot path imports only
what it needs.
"""


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
    # __import__ with a fromlist gives the submodule; importlib itself (and warnings) would cost every command
    return getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
