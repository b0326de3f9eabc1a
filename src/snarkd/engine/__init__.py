"""The proving engine, as a plain embeddable object.

    engine.py   Engine / EngineConfig: the pipeline (admission -> synthesis -> device -> finalize)
    jobs.py     Job, Partition, states, SpanTimer (per-phase ms and wall-clock spans)
    keys.py     KeyStore / LoadedKey: resident keys, their vk and witness calculator
    memory.py   the memory budget and per-partition estimates
    devices.py  the device list (GPUs through the CUDA backend hook, else the CPU)

The gRPC service (snarkd.daemon) wraps one Engine; a cluster host can run one per
GPU inside its own process (e.g. a Ray actor) with the same five calls:
start, submit, await_, cancel, status, stop.
"""

from snarkd.engine.engine import Engine, EngineConfig
from snarkd.engine.errors import AlreadyExists, NotFound, TooLarge, Unavailable
from snarkd.engine.jobs import CANCELLED, COMPLETED, ENDED, FAILED, PHASES, QUEUED, RUNNING, Job, Partition
from snarkd.engine.keys import KeyStore, LoadedKey
from snarkd.engine.memory import Estimate, MemoryBudget, estimate

__all__ = ["Engine", "EngineConfig", "KeyStore", "LoadedKey", "Job", "Partition", "MemoryBudget", "Estimate",
           "estimate", "NotFound", "AlreadyExists", "Unavailable", "TooLarge", "QUEUED", "RUNNING", "COMPLETED",
           "FAILED", "CANCELLED", "ENDED", "PHASES"]
