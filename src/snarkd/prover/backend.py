"""The backend seam: where the prover's device stage (H and the MSMs) runs.

    get_backend("cpu")             the native CPU core (the default everywhere)
    get_backend("cuda", device=0)  snarkd.gpu on one CUDA device (CuPy)
    get_backend("auto")            cuda when CuPy and a device are present, else cpu
    from_config(cfg)               [gpus] devices: [] = auto, [i, ...] = cuda on those

Both backends return the same G1Sums for the same inputs, so proofs are
identical for the same r and s. `device_stage(..., backend=b)` in
snarkd.prover.groth16 dispatches here; backend=None keeps the CPU path.
"""

from __future__ import annotations

import os
import threading


class CpuBackend:
    name = "cpu"

    def __repr__(self) -> str:
        return "CpuBackend()"

    def device_stage(self, key, synth, timer, threads: int = 0, with_g2: bool = False):
        from snarkd.prover.groth16 import device_stage

        return device_stage(key, synth, timer, threads, with_g2)


_CPU = CpuBackend()
_lock = threading.Lock()
_cuda: dict[int, object] = {}


def cuda_available() -> tuple[bool, str]:
    try:
        from snarkd.gpu.memory import available
    except Exception as e:  # pragma: no cover
        return False, str(e)
    return available()


def cuda_backend(device: int = 0, budget: int | None = None):
    with _lock:
        be = _cuda.get(device)
        if be is None:
            from snarkd.gpu.backend import CudaBackend

            be = CudaBackend(device, budget)
            _cuda[device] = be
        return be


def get_backend(name: str | None = None, device: int = 0, budget: int | None = None):
    """name: "cpu", "cuda" or "auto" (None reads $SNARKD_BACKEND, default cpu)."""
    name = (name or os.environ.get("SNARKD_BACKEND") or "cpu").lower()
    if name == "cpu":
        return _CPU
    if name == "cuda":
        return cuda_backend(device, budget)
    if name == "auto":
        ok, _ = cuda_available()
        return cuda_backend(device, budget) if ok else _CPU
    raise ValueError(f"unknown backend {name!r} (cpu, cuda or auto)")


def from_config(cfg) -> list:
    """One backend per configured device ([gpus] devices; empty = auto: every
    visible device when CuPy sees one, else the CPU)."""
    env = os.environ.get("SNARKD_GPU_BUDGET")  # bytes; default: free memory minus a margin
    budget = int(env) if env else None
    devices = tuple(getattr(getattr(cfg, "gpus", None), "devices", ()) or ())
    if devices:
        return [cuda_backend(d, budget) for d in devices]
    ok, _ = cuda_available()
    if not ok:
        return [_CPU]
    from snarkd.gpu.memory import device_count

    return [cuda_backend(d, budget) for d in range(device_count())] or [_CPU]
