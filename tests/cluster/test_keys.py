"""The front's key store: a key unloaded while jobs hold it leaves the actors only after its last job."""

from __future__ import annotations

import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install -e '.[test,cluster]')")

from snarkd.cluster.keys import ClusterKeyStore, spec_of  # noqa: E402
from snarkd.errors import InputError  # noqa: E402


def store(dropped: list, loaded: list | None = None, fail: bool = False) -> ClusterKeyStore:
    ks = ClusterKeyStore()

    def on_load(lk):
        if fail:
            raise InputError("no actor could load it")
        if loaded is not None:
            loaded.append(spec_of(lk))

    ks.on_load, ks.on_unload = on_load, dropped.append
    return ks


def test_unload_waits_for_the_last_job_then_drops_once(chain_circuit):
    dropped, loaded = [], []
    ks = store(dropped, loaded)
    lk = ks.load("k", str(chain_circuit.zkey))
    assert loaded[0].key_id == "k" and loaded[0].size == chain_circuit.zkey.stat().st_size
    a, b = ks.acquire("k"), ks.acquire("k")  # two jobs hold it
    ks.unload("k")
    assert dropped == []  # their partitions still need the actors' copies
    ks.release(a)
    assert dropped == []
    ks.release(b)
    assert dropped == ["k"] and lk.unloaded
    ks.load("k", str(chain_circuit.zkey))
    ks.unload("k")
    assert dropped == ["k", "k"]


def test_a_key_loaded_again_meanwhile_is_not_dropped(chain_circuit):
    dropped = []
    ks = store(dropped)
    ks.load("k", str(chain_circuit.zkey))
    old = ks.acquire("k")
    ks.unload("k")
    ks.load("k", str(chain_circuit.zkey))  # the same id again, while a job holds the old one
    ks.release(old)
    assert dropped == [] and ks.get("k").resident


def test_a_key_no_actor_could_load_is_not_kept_at_the_front(chain_circuit):
    ks = store([], fail=True)
    with pytest.raises(InputError, match="no actor could load it"):
        ks.load("k", str(chain_circuit.zkey))
    assert ks.list() == []
