"""The pipelined engine as an embedded object: proofs snarkjs accepts, priorities, cancellation,
the memory budget, self-verification, and per-partition timings."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest

import oracle
from snarkd.engine import CANCELLED, COMPLETED, FAILED, Engine, EngineConfig, TooLarge, estimate
from snarkd.errors import InputError
from snarkd.verifier import verify

PHASES = ("queue_wait", "synthesis", "spmv", "ntt", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2", "device",
          "finalize", "verify", "total")


def make(circ, **kw) -> Engine:
    cfg = dict(synthesis_workers=2, threads=1, workers_per_device=2, memory_budget="256MiB")
    cfg.update(kw)
    eng = Engine(EngineConfig(**cfg))
    eng.keys.load("k", str(circ.zkey))
    return eng


@pytest.fixture
def stop_after():
    engines = []
    yield engines.append
    for e in engines:
        e.stop(0)
        assert e.join_workers(10), "engine workers did not stop"


def snarkjs_ok(circ, tmp, proof, public) -> bool:
    (tmp / "proof.json").write_text(json.dumps(proof))
    (tmp / "public.json").write_text(json.dumps(public))
    return oracle.snarkjs_verify(circ.vk, tmp / "public.json", tmp / "proof.json")


def test_pipeline_witness_partitions_inputs_verify(chain_circuit, tmp_path, stop_after):
    """Several jobs at once (one witness, three partitions, two from inputs): every proof verifies."""
    circ, wtns = chain_circuit.circuit, chain_circuit.wtns
    eng = make(circ)
    stop_after(eng)
    eng.start()
    data = wtns.read_bytes()
    jobs = [eng.submit("k", data) for _ in range(3)]
    jobs.append(eng.submit("k", witnesses=[data] * 3))
    jobs.append(eng.submit("k", inputs=[chain_circuit.inputs, json.dumps(chain_circuit.inputs)]))
    vk = json.loads(circ.vk.read_text())
    for j in jobs:
        assert eng.await_(j.id, 120).state == COMPLETED, j.error
        assert len(j.results) == len(j.partitions)
        for p in j.partitions:
            assert verify(vk, p.result.public, p.result.proof)
            missing = [k for k in PHASES if k not in p.timings]
            assert not missing, missing
            stages = {s["stage"] for s in p.spans}
            assert {"synthesis", "device", "finalize", "msm_h", "spmv"} <= stages
            assert p.timings["total"] >= p.timings["device"] > 0
    assert "witness" in jobs[-1].partitions[0].timings  # calculated from inputs in the synthesis stage
    # snarkjs accepts a plain job, a partition of a multi-partition job, and a job from inputs
    for p in (jobs[0].partitions[0], jobs[3].partitions[2], jobs[4].partitions[1]):
        assert snarkjs_ok(circ, tmp_path, p.result.proof, p.result.public)
    st = eng.status()
    assert st.jobs.completed == 5 and st.jobs.partitions_completed == 8
    assert st.memory.used == 0 and st.partitions_in_flight == 0
    assert st.devices[0].busy_s > 0
    assert eng.keys.list()[0].users == 0 and eng.keys.list()[0].proofs == 8


def test_priority_runs_first(chain_bn128, stop_after):
    """Jobs queued before the workers start: the high-priority one, submitted last, finishes first."""
    circ, wtns = chain_bn128
    eng = make(circ, synthesis_workers=1, workers_per_device=1, queue_depth=1)
    stop_after(eng)
    order = []

    class Obs:
        def on_partition(self, part):
            pass

        def on_job(self, job):
            order.append(job.id)

    eng.observers.append(Obs())
    data = wtns.read_bytes()
    low = [eng.submit("k", data, f"low{i}", priority=0) for i in range(4)]
    mid = eng.submit("k", data, "mid", priority=1)
    high = eng.submit("k", data, "high", priority=5)
    eng.start()
    for j in (*low, mid, high):
        assert eng.await_(j.id, 120).state == COMPLETED
    assert order[:2] == ["high", "mid"], order
    assert order[2:] == ["low0", "low1", "low2", "low3"], order  # FIFO within a priority


def test_cancel_queued_and_running(chain_bn128, stop_after):
    circ, wtns = chain_bn128
    eng = make(circ, synthesis_workers=1, debug_delay_s=30)
    stop_after(eng)
    eng.start()
    data = wtns.read_bytes()
    running = eng.submit("k", data, witnesses=None)
    queued = eng.submit("k", witnesses=[data, data])
    deadline = time.monotonic() + 10
    while eng.status().jobs.running == 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert eng.status().jobs.queued == 1 and eng.status().queues.pending == 2
    assert eng.cancel(queued.id) == (CANCELLED, True)
    assert queued.done.is_set() and eng.status().queues.pending == 0
    t0 = time.monotonic()
    assert eng.cancel(running.id) == (CANCELLED, True)
    assert eng.await_(running.id, 5).state == CANCELLED
    # the running partition leaves the pipeline promptly: memory back, key released
    while eng.status().partitions_in_flight or eng.keys.list()[0].users:
        assert time.monotonic() - t0 < 5, eng.status()
        time.sleep(0.01)
    assert eng.status().memory.used == 0
    assert eng.cancel(running.id) == (CANCELLED, False)
    assert all(p.result is None for p in (*running.partitions, *queued.partitions))
    st = eng.status().jobs
    assert st.cancelled == 2 and st.completed == 0


def test_cancel_during_device_stage_drops_result(chain_bn128, stop_after, monkeypatch):
    from snarkd.prover.cpu import CpuBackend

    circ, wtns = chain_bn128
    entered, release = threading.Event(), threading.Event()
    real = CpuBackend.device_stage

    def slow_device(*a, **k):
        entered.set()
        release.wait(10)
        return real(*a, **k)

    monkeypatch.setattr(CpuBackend, "device_stage", slow_device)
    eng = make(circ)
    stop_after(eng)
    eng.start()
    job = eng.submit("k", wtns.read_bytes())
    assert entered.wait(10)
    assert eng.cancel(job.id) == (CANCELLED, True)
    release.set()
    deadline = time.monotonic() + 10
    while eng.status().partitions_in_flight:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert job.state == CANCELLED and job.result is None and eng.status().memory.used == 0
    assert eng.status().jobs.partitions_completed == 0


def _overlap(job) -> int:
    """Most partitions holding their big buffers at once (from synthesis start to device end)."""
    ev = []
    for p in job.partitions:
        span = {s["stage"]: s for s in p.spans}
        ev += [(span["synthesis"]["start"], 1), (span["device"]["end"], -1)]
    cur = best = 0
    for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
        cur += d
        best = max(best, cur)
    return best


@pytest.mark.parametrize("tight", [True, False])
def test_memory_budget_admits_one_partition_at_a_time(chain_bn128, stop_after, tight):
    """A job whose partitions together exceed a tiny budget waits (one partition's buffers at a time) and
    completes; with room for all, partitions overlap (so the budget is what serialized them)."""
    circ, wtns = chain_bn128
    probe = make(circ)
    est = estimate(probe.keys.list()[0].key)
    budget = int(est.total * 1.5) if tight else est.total * 16
    eng = make(circ, memory_budget=budget, debug_delay_s=0.3)
    stop_after(eng)
    eng.start()
    job = eng.submit("k", witnesses=[wtns.read_bytes()] * 4)
    assert eng.await_(job.id, 120).state == COMPLETED, job.error
    vk = json.loads(circ.vk.read_text())
    assert all(verify(vk, r.public, r.proof) for r in job.results)
    mem = eng.status().memory
    assert mem.peak <= mem.budget and mem.used == 0
    if tight:
        assert _overlap(job) == 1 and mem.waits >= 1, (_overlap(job), mem)
    else:
        assert _overlap(job) >= 2 and mem.waits == 0, (_overlap(job), mem)


def test_partition_larger_than_budget_is_refused(chain_bn128, stop_after):
    circ, wtns = chain_bn128
    eng = make(circ, memory_budget=4096)
    stop_after(eng)
    eng.start()
    with pytest.raises(TooLarge, match="memory budget"):
        eng.submit("k", wtns.read_bytes())
    assert eng.status().jobs.rejected == 1 and eng.keys.list()[0].users == 0


@pytest.mark.parametrize("self_verify", [True, False])
def test_self_verification_catches_a_bad_proof(chain_bn128, stop_after, monkeypatch, self_verify):
    import snarkd.engine.engine as E

    circ, wtns = chain_bn128
    real = E.finalize

    def corrupt(*a, **k):
        p = real(*a, **k)
        p.proof["pi_a"], p.proof["pi_c"] = p.proof["pi_c"], p.proof["pi_a"]
        return p

    monkeypatch.setattr(E, "finalize", corrupt)
    eng = make(circ, self_verify=self_verify)
    stop_after(eng)
    eng.start()
    job = eng.await_(eng.submit("k", wtns.read_bytes()).id, 60)
    if self_verify:
        # most often a witness that passes the cheap checks but not the constraints, so the request's fault
        # (INVALID_ARGUMENT through the daemon); the counter tells an operator when it is every proof
        assert job.state == FAILED and "self-verification failed" in job.error and job.error_kind == "input"
        assert "does not satisfy the circuit's constraints (or the key is damaged)" in job.error
        assert job.result is None and eng.status().jobs.self_verify_failed == 1
    else:  # off: the (bad) proof goes out, as configured
        assert job.state == COMPLETED and "verify" not in job.result.timings
        assert not verify(json.loads(circ.vk.read_text()), job.result.public, job.result.proof)


def test_bad_inputs_fail_the_job_or_the_submit(chain_bn128, stop_after, tmp_path):
    circ, wtns = chain_bn128
    eng = make(circ)
    stop_after(eng)
    eng.start()
    job = eng.await_(eng.submit("k", inputs=[{"k": 3}]).id, 60)  # x missing: found by the witness calculation
    assert job.state == FAILED and job.error_kind == "input" and "x" in job.error
    with pytest.raises(InputError, match="not valid JSON"):
        eng.submit("k", inputs=["{nope"])
    with pytest.raises(InputError, match="not several"):
        eng.submit("k", wtns.read_bytes(), inputs=[{"k": 3, "x": 2}])
    with pytest.raises(InputError, match="empty witness"):
        eng.submit("k", b"")
    # a key with no .wasm beside it cannot prove from inputs: refused at submit
    (tmp_path / "lone.zkey").write_bytes(circ.zkey.read_bytes())
    eng.keys.load("lone", str(tmp_path / "lone.zkey"))
    with pytest.raises(InputError, match="no circuit .wasm"):
        eng.submit("lone", inputs=[{"k": 3, "x": 2}])
    assert all(lk.users == 0 for lk in eng.keys.list())


def test_stop_cancels_queued_and_takes_no_more(chain_bn128):
    circ, wtns = chain_bn128
    eng = make(circ, synthesis_workers=1, debug_delay_s=30)
    eng.start()
    jobs = [eng.submit("k", wtns.read_bytes()) for _ in range(3)]
    t0 = time.monotonic()
    res = eng.stop(drain_timeout=0.3)
    assert res.cancelled == 3 and all(j.state == CANCELLED for j in jobs)
    assert eng.join_workers(5) and time.monotonic() - t0 < 5
    from snarkd.engine import Unavailable

    with pytest.raises(Unavailable):
        eng.submit("k", wtns.read_bytes())


def test_deep_inputs_json_is_refused_at_submit(chain_circuit, stop_after):
    """Inputs JSON nested deeper than the bound: a clear InputError, never a RecursionError or a crash."""
    eng = make(chain_circuit.circuit)
    stop_after(eng)
    eng.start()
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputError, match="nests arrays or objects"):
        eng.submit("k", inputs=['{"k": ' + deep + "}"])
    assert eng.status().jobs.rejected == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own niceness is Linux's")
def test_synthesis_workers_and_their_native_threads_run_nicer_by_the_setting(chain_bn128, stop_after):
    """[synthesis] nice: the synthesis workers run that much nicer than the process (and the threads they start
    inherit it: lower_priority's caller and a thread it starts, as the native core's are), the other stages as the
    process; 0 leaves every worker as the process."""
    from snarkd.engine.stages import lower_priority

    circ, _ = chain_bn128
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen = {}

    def probe():
        lower_priority(3)
        seen["self"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        child = threading.Thread(target=lambda: seen.setdefault("child", os.getpriority(os.PRIO_PROCESS,
                                                                                         threading.get_native_id())))
        child.start()
        child.join()

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    assert seen == {"self": min(19, base + 3), "child": min(19, base + 3)}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's thread alone changed
    for nice in (4, 0):
        eng = make(circ, synthesis_nice=nice)
        stop_after(eng)
        eng.start()
        workers = {th.name: os.getpriority(os.PRIO_PROCESS, th.native_id) for th in threading.enumerate()
                   if th.name.startswith(("synth-", "cpu/", "final-"))}
        synth = {n: p for n, p in workers.items() if n.startswith("synth-")}
        assert len(synth) == 2 and set(synth.values()) == {min(19, base + nice)}, workers
        assert {p for n, p in workers.items() if not n.startswith("synth-")} == {base}, workers
        eng.stop(0)
