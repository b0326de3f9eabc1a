"""The device seam: one protocol for where the prover's device stage runs, one registry of backends.

    get_backend("cpu")                 the native CPU core (prover/cpu.py)
    get_backend("cuda", device=1)      one GPU through snarkd.gpu (prover/cuda.py)
    get_backend("auto")                cuda where CuPy sees a GPU, else cpu

Every backend returns the same G1Sums for the same inputs, so proofs are
identical for the same r and s. A backend asked for by name that cannot run
raises BackendUnavailable naming why; nothing falls back silently. To add a
backend: implement `Backend` in a module of its own and add its name to
`get_backend`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ContextManager, Protocol, runtime_checkable

from snarkd.errors import BackendUnavailable
from snarkd.prover.chooser import NAMES, choose, cuda_device_count  # noqa: F401 - cuda_device_count re-exported
from snarkd.prover.cpu import CPU
from snarkd.prover.types import G1Sums, Synthesized

if TYPE_CHECKING:
    from snarkd.gpu.resident import Residency


@runtime_checkable
class Backend(Protocol):
    name: str  # "cpu", "cuda:0", ...
    spmv_on_device: bool  # computes A·w and B·w itself (synthesis then only checks the witness)
    g2_on_device: bool  # the G2 MSM belongs in its device stage (fast there), not in finalize on the CPU
    max_concurrent: int  # device stages at once on this device (0: one per device worker)
    gpu: object  # the snarkd.gpu GpuDevice it computes on (aggregation's Miller loops run there too), or None
    urgent_share: float  # of its memory, what streamed keys' plans leave for urgent lanes' stages (with_urgent_share)

    def pin(self) -> None:
        """Bind the calling thread to this backend's device (each device worker calls it once)."""

    def with_urgent_share(self, share: float) -> "Backend":
        """This backend for an engine whose urgent lanes keep `share` of its memory: itself when that changes
        nothing, else a view of it with that urgent_share (backends are shared per process: get_backend)."""

    def release(self, key) -> None:
        """Drop what this backend keeps for `key` (resident bases, tables)."""

    def residency(self, key) -> "Residency | None":
        """What of `key` is resident on this device (snarkd.gpu.resident.Residency), or None."""

    def make_resident(self, key, timer=None) -> bool:
        """Put `key` on this device now, before a device stage, timed as the phase "key_upload" on
        `timer`; True when it was uploaded (False: it was there, or nothing is kept per device)."""

    def host_spmv(self, key) -> bool:
        """Whether synthesis computes A·w, B·w for `key` on the CPU even though spmv_on_device (a streamed
        key whose CSR does not fit beside its work)."""

    def batch_limit(self, key) -> int:
        """How many proofs of `key` one device stage takes together (device_stage_batch): >1 where they share
        work, as a streamed key's chunks; 1 elsewhere."""

    def preempt_blocker(self, key) -> str:
        """Why a device stage of `key` cannot start now beside the stages holding this device (a paused one keeps
        its buffers: engine/preempt.py): "" when it can, else the reason ("device_memory", "key_not_resident")."""

    def work_bytes(self, key) -> int:
        """Device memory one device stage of `key` needs beyond what stays resident (an upper estimate)."""

    def kernel_seconds(self) -> float | None:
        """Seconds the device itself computed so far (None where that is not measured apart)."""

    def urgent(self) -> "ContextManager":
        """A context for a device stage of an urgent lane (priority above 0): on a GPU, its kernels go on the
        device's highest-priority stream; elsewhere nothing changes."""

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False,
                     yield_point=None) -> G1Sums:
        """NTTs, H and the MSMs (G2 too when with_g2). Consumes synth.a and synth.b. yield_point: None, or a
        callable invoked at the stage's boundaries (once its device memory is reserved, between MSMs, between a
        streamed pass's chunks) that may run other device work before returning (the seconds it paused); the
        stage goes on where it stopped."""

    def device_stage_batch(self, key, synths: list, timers: list, threads: int = 0, with_g2: bool = False,
                           yield_point=None) -> list:
        """device_stage of up to batch_limit(key) proofs of one key, each timed on its own timer; a G1Sums each."""


_lock = threading.Lock()
_cuda: dict[tuple, Backend] = {}


def get_backend(name: str = "cpu", device: int = 0, *, memory_budget: int | str | None = None,
                msm_tables: str | None = None, msm_window_bits: int | None = None, cubin_dir: str | None = None,
                stream_bases: str | None = None) -> Backend:
    """The backend `name` ("cpu", "cuda" or "auto") on `device`. The cuda options are
    [gpus] settings (snarkd.config); one left None is that setting's declared default. One CudaBackend per
    (device, options)."""
    name, _ = choose(str(name))
    if name == "cpu":
        return CPU
    from snarkd.config.sections import ENGINE_DEFAULTS as d

    memory_budget = d["gpu_memory_budget"] if memory_budget is None else memory_budget
    msm_tables = d["msm_tables"] if msm_tables is None else msm_tables
    msm_window_bits = d["msm_window_bits"] if msm_window_bits is None else msm_window_bits
    cubin_dir = d["cubin_dir"] if cubin_dir is None else cubin_dir
    stream_bases = d["stream_bases"] if stream_bases is None else stream_bases
    opts = (int(device), memory_budget, msm_tables, int(msm_window_bits), cubin_dir, stream_bases)
    with _lock:
        be = _cuda.get(opts)
        if be is None:
            from snarkd.prover.cuda import CudaBackend  # lazy: imports CuPy

            be = CudaBackend(int(device), memory_budget=memory_budget, msm_tables=msm_tables,
                             msm_window_bits=msm_window_bits, cubin_dir=cubin_dir, stream_bases=stream_bases)
            _cuda[opts] = be
        return be


def from_settings(name: str, device: int = 0, *, cfg=None, msm_tables: str | None = None) -> Backend:
    """The backend `name` with the [gpus] settings of `cfg`, a validated Config (default: the declared
    defaults; entry points read the environment's overrides and pass their Config, as the CLI does).
    msm_tables: instead of [gpus] msm_tables."""
    if str(name).lower() == "cpu":
        return CPU
    from snarkd.config import EngineConfig  # lazy: the CPU path needs no config

    c = EngineConfig.from_config(cfg) if cfg is not None else EngineConfig()
    return get_backend(name, device, memory_budget=c.gpu_memory_budget, msm_tables=msm_tables or c.msm_tables,
                       msm_window_bits=c.msm_window_bits, cubin_dir=c.cubin_dir, stream_bases=c.stream_bases)


def resolve(backend) -> Backend:
    """A Backend from a name or a Backend (None: the CPU)."""
    if backend is None:
        return CPU
    if isinstance(backend, str):
        return from_settings(backend)
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a name ({', '.join(NAMES)}) or a Backend, not {type(backend).__name__}")
    return backend
