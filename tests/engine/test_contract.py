"""The engine contract (snarkd.engine.contract.ProvingEngine), held against both of its implementations.

    engine    Engine, in this process (here, in every run)
    cluster   ClusterEngine with [cluster] address = "local": a private Ray and one engine actor. Ray needs a
              network namespace of its own, so tests/cluster/test_cluster_contract.py runs this module inside one
              (`-k cluster`, SNARKD_CONTRACT_CLUSTER=1); elsewhere that half skips, saying so.

One engine per implementation serves the whole module, in order; the last test stops it. Proofs are checked
by the native verifier, one of each curve by snarkjs.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest

import oracle
from cases import CURVES, build_case
from snarkd.config import Config, EngineConfig
from snarkd.daemon.status import as_json, key_message
from snarkd.engine import CANCELLED, COMPLETED, FAILED, AlreadyExists, NotFound, Unavailable
from snarkd.engine.contract import ProvingEngine, Stopped
from snarkd.engine.errors import DeadlineExceeded
from snarkd.engine.status import EngineStatus, KeyStatus
from snarkd.errors import InputError
from snarkd.verifier import verify

IN_NAMESPACE = os.environ.get("SNARKD_CONTRACT_CLUSTER") == "1"


class Observer:
    def __init__(self):
        self.partitions, self.jobs = [], []

    def on_partition(self, part):
        self.partitions.append(part.job.id)

    def on_job(self, job):
        self.jobs.append((job.id, job.state))


def _engine(tmp: Path):
    from snarkd.engine import Engine

    return Engine(EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1, memory_budget="256MiB"))


def _cluster(tmp: Path):
    from snarkd.cluster import ClusterEngine

    text = f"""
        [daemon]
        pid_file = "{tmp}/front.pid"
        [synthesis]
        workers = 1
        threads = 1
        [gpus]
        workers_per_device = 1
        [memory]
        budget = "256MiB"
        [cluster]
        address = "local"
        key_placement = "path"
        ready_timeout = "240s"
        """
    return ClusterEngine(Config.from_text("\n".join(line.strip() for line in text.splitlines()), "contract.toml",
                                          tmp, env={}))


@pytest.fixture(scope="module", params=["engine", "cluster"])
def contract(request, tmp_path_factory):
    """(the started engine, its observer, the cases by curve)."""
    if request.param == "cluster" and not IN_NAMESPACE:
        pytest.skip("the cluster half runs inside a network namespace: tests/cluster/test_cluster_contract.py")
    if request.param == "engine" and IN_NAMESPACE:
        pytest.skip("run outside the namespace")
    cases = {c: build_case("chain", c) for c in CURVES}
    eng = {"engine": _engine, "cluster": _cluster}[request.param](tmp_path_factory.mktemp(request.param))
    for c, case in cases.items():
        eng.keys.load(c, str(case.zkey))
    obs = Observer()
    eng.observers.append(obs)
    eng.start()
    yield eng, obs, cases
    if eng.accepting:  # a test failed before the last one stopped it
        eng.stop(0)
    eng.join_workers(10)
    eng.keys.close_all()


def test_it_is_a_proving_engine(contract):
    eng, _, _ = contract
    assert isinstance(eng, ProvingEngine)
    assert eng.started and eng.accepting and eng.all_alive()


def test_a_proof_from_a_witness_verifies_on_each_curve(contract, tmp_path):
    eng, obs, cases = contract
    for curve, case in cases.items():
        job = eng.await_(eng.submit(curve, case.wtns.read_bytes(), f"w-{curve}").id, 240)
        assert job.state == COMPLETED, job.error
        assert eng.get(job.id) is job and (job.id, COMPLETED) in obs.jobs and job.id in obs.partitions
        r = job.partitions[0].result
        vk = json.loads(case.vk.read_text())
        assert verify(vk, r.public, r.proof)
        (tmp_path / "proof.json").write_text(json.dumps(r.proof))
        (tmp_path / "public.json").write_text(json.dumps(list(r.public)))
        assert oracle.snarkjs_verify(case.vk, tmp_path / "public.json", tmp_path / "proof.json")
        assert job.partitions[0].timings["total"] > 0


def test_a_job_of_partitions_from_inputs_and_witnesses(contract):
    eng, _, cases = contract
    case = cases["bn128"]
    job = eng.await_(eng.submit("bn128", inputs=[case.inputs, json.dumps(case.inputs)], priority=3).id, 240)
    assert job.state == COMPLETED, job.error
    assert len(job.partitions) == 2 and all("witness" in p.timings for p in job.partitions)
    many = eng.await_(eng.submit("bn128", witnesses=[case.wtns.read_bytes()] * 3).id, 240)
    assert many.state == COMPLETED and len(many.partitions) == 3
    vk = json.loads(case.vk.read_text())
    assert all(verify(vk, p.result.public, p.result.proof) for p in job.partitions + many.partitions)


def test_bad_requests_are_refused_at_submit_and_counted(contract):
    eng, _, cases = contract
    before = eng.status().jobs.rejected
    with pytest.raises(NotFound, match="'nope'"):
        eng.submit("nope", cases["bn128"].wtns.read_bytes())
    with pytest.raises(InputError):
        eng.submit("bn128", b"not a witness")
    with pytest.raises(InputError):
        eng.submit("bn128", cases["bls12381"].wtns.read_bytes())  # a witness of the other curve's field
    eng.await_(eng.submit("bn128", cases["bn128"].wtns.read_bytes(), "named").id, 240)
    with pytest.raises(AlreadyExists, match="'named'"):
        eng.submit("bn128", cases["bn128"].wtns.read_bytes(), "named")
    with pytest.raises(NotFound):
        eng.get("no-such-job")
    assert eng.status().jobs.rejected == before + 3  # an unknown key id is not a request the engine took up
    assert all(lk.users == 0 for lk in eng.keys.list())  # every refused job gave its key back


def test_a_witness_that_does_not_satisfy_the_circuit_fails_its_job_only(contract):
    eng, _, cases = contract
    case = cases["bn128"]
    bad = eng.submit("bn128", inputs=[{"k": 3}])  # x missing: found by the witness calculation
    good = eng.submit("bn128", case.wtns.read_bytes())
    assert eng.await_(bad.id, 240).state == FAILED and bad.error_kind == "input" and bad.error
    assert eng.await_(good.id, 240).state == COMPLETED


def test_cancel_a_queued_job(contract):
    eng, obs, cases = contract
    data = cases["bn128"].wtns.read_bytes()
    ahead = [eng.submit("bn128", data) for _ in range(8)]
    last = eng.submit("bn128", data)
    assert eng.cancel(last.id) == (CANCELLED, True)
    assert eng.await_(last.id, 10).state == CANCELLED and last.done.is_set()
    assert eng.cancel(last.id) == (CANCELLED, False)
    assert (last.id, CANCELLED) in obs.jobs
    assert all(eng.await_(j.id, 240).state == COMPLETED for j in ahead)
    with pytest.raises(NotFound):
        eng.cancel("no-such-job")


def test_a_deadline_is_refused_when_past_and_met_when_far(contract):
    eng, _, cases = contract
    data = cases["bn128"].wtns.read_bytes()
    with pytest.raises(DeadlineExceeded, match="already passed"):
        eng.submit("bn128", data, deadline_s=-1)
    job = eng.await_(eng.submit("bn128", data, deadline_s=240).id, 240)
    assert job.state == COMPLETED and job.deadline_wall > 0, job.error
    assert verify(json.loads(cases["bn128"].vk.read_text()), job.result.public, job.result.proof)
    eta = eng.status().eta  # the completion model learnt the key's service time
    assert eta.latency_s["bn128"] >= eta.interval_s["bn128"] > 0 and eta.samples["bn128"] >= 1
    assert job in eng.jobs() and all(j.id for j in eng.jobs())


def test_status_is_the_typed_record_every_view_renders(contract):
    eng, obs, cases = contract
    for curve, case in cases.items():  # a proof of each key, whichever of this module's tests ran before here
        assert eng.await_(eng.submit(curve, case.wtns.read_bytes()).id, 240).state == COMPLETED
    deadline = time.monotonic() + 30
    while eng.status().jobs.running and time.monotonic() < deadline:
        time.sleep(0.05)
    st = eng.status()
    assert isinstance(st, EngineStatus) and st.accepting and st.started and st.uptime_s > 0
    # the counts are the jobs the observer saw end (pytest-xdist may have run this module's other tests elsewhere)
    ended = Counter(state for _, state in obs.jobs)
    assert st.jobs.completed == ended[COMPLETED] >= 2
    assert st.jobs.cancelled == ended[CANCELLED] and st.jobs.failed == ended[FAILED]
    assert st.jobs.queued == st.jobs.running == 0 and st.queues.pending == 0
    assert st.devices and all(d.busy_s >= 0 for d in st.devices)
    assert st.memory.budget > 0 and st.memory.used == 0 and st.memory.rss > 0
    assert st.keys.resident["host"] == 2 and set(st.workers) >= {"synthesis"}
    assert st.phase_ms["total"] > 0
    json.dumps(as_json(st))  # GET /status and engine_json: plain data
    for lk in eng.keys.list():
        ks = eng.key_status(lk)
        assert isinstance(ks, KeyStatus) and ks.id == lk.id and ks.resident and ks.proofs >= 1
        assert key_message(ks).id == lk.id  # the proto takes it as it is
        assert asdict(ks)["curve"] in CURVES


def test_stop_drains_and_refuses_new_work(contract):
    eng, _, cases = contract
    done = eng.submit("bls12381", cases["bls12381"].wtns.read_bytes())
    res = eng.stop(drain_timeout=120)
    assert isinstance(res, Stopped) and res.cancelled == 0
    assert done.state == COMPLETED  # the drain let it finish
    assert not eng.accepting
    with pytest.raises(Unavailable):
        eng.submit("bn128", cases["bn128"].wtns.read_bytes())
    assert eng.join_workers(30)
