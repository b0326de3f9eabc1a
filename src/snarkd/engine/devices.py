"""The devices the prove stage runs on: GPUs when a CUDA backend is present, else the CPU.

Each device worker is pinned to one device index for its whole life (cuzk's
multi-GPU runs produced corrupt proofs until workers were pinned). The CUDA
backend (snarkd.gpu) is reached through one hook, `_gpu_backend`: it must
offer `device_count() -> int` and `backend(index, msm_tables)` returning the object
passed to `device_stage(..., backend=...)`; when that object has `pin()`, each
device worker thread calls it once before its first job (e.g. to make its
device current in CuPy, which is per thread). Without it, one CPU "device" runs the
native core, and `[gpus] devices` must stay empty.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from snarkd.errors import DaemonError


@dataclass
class Device:
    name: str  # "cpu" | "cuda:0"
    index: int  # -1 for the CPU
    backend: object = None  # None: the native CPU core


def _gpu_backend():
    try:
        from snarkd.gpu import backend as gpu  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no CUDA backend (yet), or no driver
        return None
    if not hasattr(gpu, "device_count") or not hasattr(gpu, "backend"):
        return None
    try:
        return gpu if gpu.device_count() > 0 else None
    except Exception:  # noqa: BLE001
        return None


def resolve_devices(devices: tuple | list = (), msm_tables: str | None = None) -> list[Device]:
    """[gpus] devices -> the device list. Empty: every GPU, or the CPU when there is none.
    msm_tables ([gpus] msm_tables) goes to each GPU backend."""
    gpu = _gpu_backend()
    if gpu is None:
        if devices:
            raise DaemonError(f"[gpus] devices = {list(devices)}: no CUDA device or backend is available "
                              "(leave [gpus] devices empty to prove on the CPU)")
        return [Device("cpu", -1, None)]
    count = gpu.device_count()
    idx = list(devices) or list(range(count))
    bad = [i for i in idx if i >= count]
    if bad:
        raise DaemonError(f"[gpus] devices lists {bad}, but only {count} CUDA device(s) exist")
    return [Device(f"cuda:{i}", i, gpu.backend(i, msm_tables)) for i in idx]


def pin_thread(device: Device) -> None:
    """Make `device` current for the calling worker thread (GPU backends only)."""
    pin = getattr(device.backend, "pin", None)
    if pin is not None:
        pin()


def device_stage_kwargs(device: Device) -> dict:
    """`backend=` for device_stage, when the prover takes it and the device is a GPU."""
    from snarkd.prover import device_stage

    if device.backend is None:
        return {}
    if "backend" not in inspect.signature(device_stage).parameters:
        raise DaemonError("the prover's device_stage takes no backend= yet: cannot use a GPU")
    return {"backend": device.backend}
