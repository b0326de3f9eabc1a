"""The daemon's engine: a thin adapter over snarkd.engine (the pipelined, embeddable engine).

Kept so that `from snarkd.daemon.engine import Engine, KeyStore, ...` keeps working.
"""

from snarkd.engine import (CANCELLED, COMPLETED, ENDED, FAILED, QUEUED, RUNNING, AlreadyExists, Engine,
                           EngineConfig, Job, KeyStore, LoadedKey, NotFound, TooLarge, Unavailable)
from snarkd.engine.engine import KEEP_FINISHED


def engine_from_config(cfg, keys: KeyStore) -> Engine:
    """The engine a daemon with this (validated) config runs."""
    return Engine(EngineConfig.from_config(cfg), keys)


__all__ = ["Engine", "EngineConfig", "KeyStore", "LoadedKey", "Job", "NotFound", "AlreadyExists", "Unavailable",
           "TooLarge", "QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "ENDED", "KEEP_FINISHED",
           "engine_from_config"]
