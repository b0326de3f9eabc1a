"""The devices the device stage runs on: one Backend per configured GPU, else the CPU.

Each device worker is pinned to one device for its whole life (cuzk's multi-GPU
runs produced corrupt proofs until workers were pinned): it calls its backend's
`pin()` once, before its first job.
"""

from __future__ import annotations

from snarkd.errors import DaemonError
from snarkd.prover.backend import CPU, Backend, cuda_device_count, get_backend


def resolve_devices(config) -> list[Backend]:
    """[gpus] devices (of an EngineConfig) -> backends. Empty: every GPU, or the CPU when there is none.
    Listing a GPU that is not there is an error, never a silent fallback to the CPU."""
    count = cuda_device_count()
    wanted = list(config.devices)
    if not wanted and count == 0:
        return [CPU]
    if wanted and count == 0:
        raise DaemonError(f"[gpus] devices = {wanted}: no CUDA device or backend is available "
                          "(leave [gpus] devices empty to prove on the CPU)")
    bad = [i for i in wanted if i >= count]
    if bad:
        raise DaemonError(f"[gpus] devices lists {bad}, but only {count} CUDA device(s) exist")
    return [get_backend("cuda", i, memory_budget=config.gpu_memory_budget, msm_tables=config.msm_tables,
                        msm_window_bits=config.msm_window_bits, cubin_dir=config.cubin_dir,
                        stream_bases=config.stream_bases)
            for i in (wanted or range(count))]
