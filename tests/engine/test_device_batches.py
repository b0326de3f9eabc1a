"""The device stage's batches (engine.gather, StageQueue.take_matching): a backend that takes several proofs of a
key at once (a streamed key on a GPU) gets a partitioned job's partitions together, never more than its limit,
never another key's; each proof still verifies. Runs on the CPU backend with its batch limit raised."""

from __future__ import annotations

import threading

from snarkd.engine.engine import Engine, EngineConfig
from snarkd.engine.stage_queue import StageQueue
from snarkd.prover.backend import CPU
from snarkd.verifier import verify


class Part:
    def __init__(self, key, prio=0, seq=0, index=0):
        self.job = type("J", (), {"key": key, "priority": prio, "seq": seq, "rank": (0, -prio, seq)})()
        self.index = index


def test_take_matching_takes_in_priority_order_and_leaves_the_rest():
    q = StageQueue(8)
    stop = threading.Event()
    parts = [Part("k", 0, 1, 0), Part("other", 5, 2, 0), Part("k", 3, 3, 0), Part("k", 0, 1, 1)]
    for p in parts:
        assert q.put(p, stop)
    got = q.take_matching(lambda p: p.job.key == "k", 2)
    assert got == [parts[2], parts[0]]  # priority 3 first, then submission order
    assert len(q) == 2
    assert q.get(stop) is parts[1] and q.get(stop) is parts[3]
    assert q.take_matching(lambda p: True, 5) == [] and q.take_matching(lambda p: True, 0) == []


def test_a_partitioned_job_goes_in_batches_up_to_the_backend_limit(chain_bn128, running, monkeypatch):
    circ, witness = chain_bn128
    batches = []
    real = CPU.device_stage_batch

    def record(key, synths, timers, threads=0, with_g2=False, yield_point=None):
        batches.append(len(synths))
        return real(key, synths, timers, threads, with_g2, yield_point)

    monkeypatch.setattr(CPU, "batch_limit", lambda key: 4)
    monkeypatch.setattr(CPU, "device_stage_batch", record)
    eng = Engine(EngineConfig(synthesis_workers=2, finalize_workers=2, devices=(), self_verify=True))
    lk = eng.keys.load("k", str(circ.zkey))
    running(eng)
    data = witness.read_bytes()
    job = eng.submit("k", witnesses=[data] * 6)
    assert job.done.wait(120) and job.state == "COMPLETED", job.error
    for p in job.partitions:
        assert verify(lk.vk, p.result.public, p.result.proof)
        assert p.timings["device"] > 0 and "device_wait" in p.timings
    # lone stages go through device_stage (not recorded here); the job's partitions are gathered while in synthesis
    assert sum(batches) <= 6 and max(batches, default=0) > 1 and max(batches) <= 4, batches
