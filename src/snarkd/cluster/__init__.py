"""snarkd cluster: one proving service over many GPU machines, on Ray (`pip install 'snarkd[cluster]'`).

The daemon becomes the cluster's **front** when [cluster] address is set: the same gRPC API, health
service, status and metrics, over engine actors on Ray nodes instead of one in-process engine.

    front.py    ClusterEngine: the engine contract (engine/contract.py) over actors
    book.py     jobs, the one admission queue (priorities), the witness budget, exactly-once endings, retries
    router.py   actor records; where a task goes (least outstanding work among actors holding its key)
    members.py  nodes and actors: creation per node, key loading, deaths, background status
    actor.py    EngineActor: an embedded Engine in a Ray actor process, one per GPU (or CPU-only node)
    keys.py     the front's key store; keys reach actors once, by path or through the object store
    connect.py  joining Ray ([cluster] address: local, auto, HOST:PORT, ray://HOST:PORT)
    status.py   the front's status record (the Engine's, plus nodes, actors, keys)

Ray is imported by these modules; the daemon imports this package only when [cluster] is set, so the
single-host path never loads Ray.
"""

from snarkd.cluster.front import ClusterEngine
from snarkd.cluster.keys import ClusterKeyStore
from snarkd.engine.paths import ClientPaths

__all__ = ["ClusterEngine", "ClusterKeyStore", "make"]


def make(config, paths: ClientPaths | None = None) -> tuple[ClusterEngine, ClusterKeyStore]:
    """The front's engine and key store for a daemon Config with [cluster] address set (not started); LoadKey
    paths are confined by the same rule as a single daemon's (`paths`: the daemon's, else built from config)."""
    keys = ClusterKeyStore(config.keys.param_cache, config.keys.wasm_cache,
                           rule=(paths or ClientPaths.from_config(config)).keys)
    return ClusterEngine(config, keys), keys
