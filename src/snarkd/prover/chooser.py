"""Where work runs: the one cpu | cuda | auto decision, for proofs and for aggregation.

    choose("auto", size=2**20, floor=2**16)   ("cuda", "auto: domain 1048576 >= 65536") on a GPU machine
    choose("auto", gpus=0)                     ("cpu", "auto: no GPU")

`snarkd prove` (cli/prove.py), `get_backend` (backend.py), `snarkd aggregate` (cli/aggregate.py) and the daemon's
aggregator (daemon/aggregation.py, over the engine's devices) all ask here. No numpy, no CuPy until a GPU may
win: CUDA's device count costs ~0.8 s of start-up, so a small proof under auto never asks for it.
"""

from __future__ import annotations

from snarkd.errors import BackendUnavailable

NAMES = ("cpu", "cuda", "auto")


def cuda_device_count() -> int:
    """CUDA devices usable here (0 without CuPy or a driver)."""
    try:
        from snarkd.gpu.device import device_count  # lazy: CuPy is optional
    except ImportError:
        return 0
    return device_count()


def choose(name: str | None, *, size: int | None = None, floor: int = 0, gpus: int | None = None) -> tuple[str, str]:
    """("cpu" or "cuda", why) for a backend name (None: "auto"). cpu and cuda are taken as asked (a cuda that
    cannot run raises BackendUnavailable where it is built, never falls back); auto takes the GPU when the work
    is at least `floor` (size: a proof's domain; None: any size) and a GPU is there (gpus: how many the caller
    holds, e.g. the daemon's devices; None: CUDA's count on this machine, asked only then)."""
    name = (name or "auto").lower()
    if name not in NAMES:
        raise BackendUnavailable(f"unknown backend {name!r} (one of {', '.join(NAMES)})")
    if name != "auto":
        return name, name
    if size is not None and size < floor:
        return "cpu", f"auto: domain {size} < {floor} ([prove] auto_cuda_min_domain)"
    if (cuda_device_count() if gpus is None else gpus) == 0:
        return "cpu", "auto: no GPU"
    return "cuda", f"auto: domain {size} >= {floor}" if size is not None else "auto: a GPU is here"
