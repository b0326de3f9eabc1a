"""The key budget: least-recently-used eviction of idle keys, never of a key in use; a job for an
evicted key reloads it (phase key_load) and its proof verifies; the device side's policy."""

from __future__ import annotations

import json
import threading

import pytest

import oracle
from cases import build_case
from snarkd.engine import COMPLETED, Engine, EngineConfig
from snarkd.engine.residency import make_device_room
from snarkd.gpu.resident import Residency
from snarkd.verifier import verify

KEYS = ("chain", "many_public", "no_public")


@pytest.fixture(scope="module")
def cases():
    return {name: build_case(name, "bn128") for name in KEYS}


@pytest.fixture
def engine():
    made = []

    def make(**kw) -> Engine:
        cfg = dict(synthesis_workers=2, threads=1, workers_per_device=2, memory_budget="256MiB")
        cfg.update(kw)
        eng = Engine(EngineConfig(**cfg))
        made.append(eng)
        return eng

    yield make
    for e in made:
        e.stop(0)
        assert e.join_workers(10), "engine workers did not stop"
        e.keys.close_all()


def resident(eng) -> set[str]:
    return {lk.id for lk in eng.keys.list() if lk.resident}


def test_concurrent_jobs_on_more_keys_than_the_budget_all_verify(cases, engine, tmp_path):
    """Three keys, max_resident = 2, 30 jobs from 6 threads: keys are evicted and reloaded
    under load, no job fails, every proof verifies against its own key, the counts add up."""
    eng = engine(key_max_resident=2)
    for name, case in cases.items():
        eng.keys.load(name, str(case.zkey))
    assert len(resident(eng)) == 2 and eng.keys.evictions == 1  # the third load evicted the first (idle) key
    eng.start()
    vks = {name: json.loads(case.vk.read_text()) for name, case in cases.items()}
    witness = {name: case.wtns.read_bytes() for name, case in cases.items()}
    jobs, lock, errors = [], threading.Lock(), []
    in_use_evicted = []
    eng.keys.on_evict.append(lambda lk, key: lk.users and in_use_evicted.append(lk.id))

    def client(t: int) -> None:
        try:
            for i in range(5):
                name = KEYS[(t + i) % len(KEYS)]
                job = eng.submit(name, witness[name])
                with lock:
                    jobs.append((name, job))
                eng.await_(job.id, 120)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=client, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert len(jobs) == 30
    reloaded = []
    for name, job in jobs:
        assert job.state == COMPLETED, (name, job.error)
        assert verify(vks[name], job.result.public, job.result.proof), name
        if "key_load" in job.timings:
            reloaded.append((name, job))
    st = eng.status().keys
    assert st.evictions["host"] >= 2 and st.reloads >= 1, st
    assert st.reloads == len(reloaded) == sum(lk.reloads for lk in eng.keys.list())
    assert st.evictions["host"] == sum(lk.evictions for lk in eng.keys.list())
    assert not in_use_evicted  # the hook runs with the key out of the store: nobody may be using it
    assert len(resident(eng)) <= 2 and st.resident["host"] == len(resident(eng))
    assert sum(lk.proofs for lk in eng.keys.list()) == 30
    # a proof made with a reloaded key is one snarkjs accepts
    name, job = reloaded[0]
    (tmp_path / "proof.json").write_text(json.dumps(job.result.proof))
    (tmp_path / "public.json").write_text(json.dumps(job.result.public))
    assert oracle.snarkjs_verify(cases[name].vk, tmp_path / "public.json", tmp_path / "proof.json")
    assert job.timings["key_load"] > 0


def test_a_key_in_use_is_never_evicted(cases, engine, caplog):
    """max_resident = 1: while a job holds key A, loading B and C cannot evict A (the store runs over
    budget and says so); once A is idle the least recently used key goes, and A is evicted only
    when it is the least recently used idle key."""
    eng = engine(key_max_resident=1)
    eng.keys.load("chain", str(cases["chain"].zkey))
    held, _ = eng.keys.checkout("chain")  # what a queued or running job holds
    with caplog.at_level("WARNING", logger="snarkd"):
        eng.keys.load("many_public", str(cases["many_public"].zkey))
        eng.keys.load("no_public", str(cases["no_public"].zkey))
    assert held.resident and "chain" in resident(eng)
    assert resident(eng) == {"chain", "no_public"}  # many_public (idle, older) made room for no_public
    assert "key budget exceeded" in caplog.text and "none idle to evict" in caplog.text
    eng.keys.release(held)  # A was just used; no_public (loaded before A was released) is the LRU one
    assert resident(eng) == {"chain"}
    np, ms = eng.keys.checkout("no_public")  # reloaded; A, idle and now least recently used, leaves
    assert ms > 0 and np.reloads == 1 and resident(eng) == {"no_public"}
    assert not held.resident and held.evictions == 1
    eng.keys.release(np)
    lk, ms = eng.keys.checkout("chain")  # its next job reloads it from the recorded path
    assert lk is held and lk.resident and ms > 0 and lk.reloads == 1
    eng.keys.release(lk)


def test_host_budget_in_bytes(cases, engine):
    eng = engine(key_host_budget=1)  # one byte: only the key just loaded (or in use) may stay mapped
    for name in KEYS:
        eng.keys.load(name, str(cases[name].zkey))
        assert resident(eng) == {name}
    info = {k.id: k for k in (lk.status() for lk in eng.keys.list())}
    assert info["chain"].resident is False and info["chain"].bytes > 0  # listed, with its size, while evicted
    assert info["chain"].curve == "bn128" and info["chain"].evictions == 1


def test_an_evicted_key_whose_file_is_gone_fails_the_job_clearly(cases, engine, tmp_path):
    eng = engine(key_max_resident=1)
    copy = tmp_path / "copy.zkey"
    copy.write_bytes(cases["chain"].zkey.read_bytes())
    eng.keys.load("copy", str(copy))
    eng.keys.load("other", str(cases["many_public"].zkey))
    copy.unlink()
    eng.start()
    with pytest.raises(Exception, match=r"key 'copy' was evicted and cannot be reloaded.*copy\.zkey"):
        eng.submit("copy", cases["chain"].wtns.read_bytes())
    assert eng.keys.list()[0].users == 0  # the failed reload gave the key back
    job = eng.submit("other", cases["many_public"].wtns.read_bytes())  # the engine goes on
    assert eng.await_(job.id, 60).state == COMPLETED


class _Key:
    def __init__(self, name: str, nbytes: int, users: int, last_used: float):
        self.id, self.nbytes, self.users, self.lru_stamp = name, nbytes, users, last_used
        self.key = object()


class _Store:
    def __init__(self, keys):
        self.keys = keys

    def list(self):
        return list(self.keys)


class _Device:
    """A device's residency as make_device_room sees it (residency / release / name)."""

    name = "dev:0"

    def __init__(self, resident: dict):
        self.resident, self.released = resident, []

    def residency(self, key):
        n = self.resident.get(id(key))
        return None if n is None else Residency(n, False, False)

    def release(self, key):
        self.released.append(id(key))
        self.resident.pop(id(key))


def test_device_room_drops_lru_idle_keys_only():
    a, b, c, new = _Key("a", 100, 0, 1.0), _Key("b", 100, 1, 0.5), _Key("c", 100, 0, 2.0), _Key("new", 100, 1, 3.0)
    dev = _Device({id(a.key): 100, id(b.key): 100, id(c.key): 100})
    store = _Store([a, b, c, new])
    # count: 3 resident + new > 2 -> two must go; b (oldest) is busy, so a then c
    assert [k.id for k in make_device_room(dev, store, new, 2, 0)] == ["a", "c"]
    assert dev.released == [id(a.key), id(c.key)]
    # bytes: b (busy) stays even though the budget is short: nothing idle is left to drop
    assert make_device_room(dev, store, new, 0, 150) == []
    # no budget, or the key already there: nothing happens
    dev.resident[id(new.key)] = 100
    assert make_device_room(dev, store, new, 1, 1) == []
