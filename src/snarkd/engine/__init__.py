"""The proving engine, as a plain embeddable object.

    contract.py    ProvingEngine (what the daemon asks of an engine) and EngineBase (what both engines share)
    engine.py      Engine: the pipeline (admission -> synthesis -> device -> finalize), what each stage does
    stages.py      Stage and the one worker loop (timing, spans, cancellation, failures)
    stage_queue.py StageQueue: the bounded priority queue between two stages (putters let in by rank)
    scheduler.py   the job table, the pending heap, admission under the memory budget, how jobs end
    accounting.py  counters, phase sums, device-held time
    status.py      the typed status record (EngineStatus, KeyStatus, ...)
    requests.py    a submitted job's partitions, parsed (witnesses or inputs JSON)
    jobs.py        Job, Partition, states, SpanTimer (per-phase ms and wall-clock spans)
    keys.py        KeyStore / LoadedKey: resident keys, their vk and witness calculator
    memory.py      the memory budget and per-partition estimates
    devices.py     the device list: a Backend per GPU, else the CPU

The gRPC service (snarkd.daemon) wraps one engine through the contract; a cluster host runs one Engine
per GPU inside its own process (a Ray actor) with the same calls: start, submit, await_, cancel, status,
key_status, stop.
"""

from snarkd.config import EngineConfig
from snarkd.engine.engine import KEEP_FINISHED, Engine
from snarkd.engine.errors import AlreadyExists, Busy, NotFound, PermissionDenied, TooLarge, Unavailable
from snarkd.engine.jobs import CANCELLED, COMPLETED, ENDED, FAILED, QUEUED, RUNNING, Job, Partition
from snarkd.engine.keys import KeyStore, LoadedKey
from snarkd.engine.memory import Estimate, MemoryBudget, estimate

__all__ = ["Engine", "EngineConfig", "KeyStore", "LoadedKey", "Job", "Partition", "MemoryBudget", "Estimate",
           "estimate", "Busy", "PermissionDenied", "NotFound", "AlreadyExists", "Unavailable", "TooLarge", "QUEUED", "RUNNING", "COMPLETED",
           "FAILED", "CANCELLED", "ENDED", "KEEP_FINISHED"]
