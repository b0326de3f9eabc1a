"""Lanes and the Admission object through the gRPC servicer, in process (a real Engine and Journal, the methods
called as gRPC calls them): a request's lane or its token's, INVALID_ARGUMENT for an unknown lane and
PERMISSION_DENIED for another than the token's, ListJobs by lane, Status's lanes, the lane kept by the journal,
RESOURCE_EXHAUSTED by weight, and an admission refused after the engine had the job undone step by step."""

from __future__ import annotations

import json
import time

import pytest
from test_deadline_service import Aborted, Context, start_service, stop_services

from snarkd.config.lanes import Lane
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.security import ADMIN, PROVE, ROLES, Principal
from snarkd.errors import DaemonError
from snarkd.verifier import verify

LANES = {"urgent": Lane("urgent", priority=10, share=0.5, deadline=300.0), "bulk": Lane("bulk", max_queued=0.01)}
BOUND = {"bulkbot": "bulk"}  # tokens bound to a lane


class Gate:
    tokens = object()

    def principal(self, context, role):
        who = Principal(context.who, ROLES[ADMIN] if context.who == "admin" else ROLES[PROVE],
                        BOUND.get(context.who, ""))
        assert who.may(role)
        return who


@pytest.fixture
def service(chain_bn128, tmp_path):
    made = []

    def make(journal: bool = True, gate=None, **engine_kw):
        made.append(start_service(chain_bn128[0].zkey, tmp_path, journal, {"gate": gate or Gate(), "max_per_client": 2},
                                  **{"lanes": LANES, **engine_kw}))
        return made[-1]

    yield make
    stop_services(made)


def req(wtns, **kw):
    return pb.ProveRequest(key_id="chain", witness=wtns.read_bytes(), **kw)


def abort(call, *args) -> Aborted:
    with pytest.raises(Aborted) as e:
        call(*args)
    return e.value


def test_the_request_or_its_token_picks_the_lane(service, chain_bn128):
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    s = service()
    r = s.Prove(req(wtns, lane="urgent", job_id="u1"), Context("alice"))
    assert verify(vk, json.loads(r.public_json), json.loads(r.proof_json))
    assert s.engine.get(s.ids.engine_id("alice", "u1")).lane == "urgent"
    s.Prove(req(wtns, job_id="b1"), Context("bulkbot"))  # no lane named: its token's
    s.Prove(req(wtns, job_id="d1"), Context("alice"))  # neither: "default"
    e = abort(s.Submit, req(wtns, lane="urgent"), Context("bulkbot"))
    assert e.code.name == "PERMISSION_DENIED" and "bound to lane 'bulk'" in e.message and "'urgent'" in e.message
    e = abort(s.Submit, req(wtns, lane="fast"), Context("alice"))
    assert e.code.name == "INVALID_ARGUMENT" and "no lane 'fast'" in e.message
    assert s.Submit(req(wtns, lane="urgent"), Context("admin")).job_id  # admin may use any lane
    by_lane = {lane: [j.job_id for j in s.ListJobs(pb.ListJobsRequest(lane=lane), Context("admin")).jobs]
               for lane in ("urgent", "bulk", "default")}
    assert by_lane["bulk"] == ["b1"] and by_lane["default"] == ["d1"] and "u1" in by_lane["urgent"]
    assert abort(s.ListJobs, pb.ListJobsRequest(lane="fast"), Context("alice")).code.name == "INVALID_ARGUMENT"
    lanes = {ln.name: ln for ln in s.Status(pb.StatusRequest(), Context("alice")).lanes}
    assert set(lanes) == {"urgent", "bulk", "default"} and lanes["urgent"].priority == 10
    assert lanes["urgent"].share == 0.5 and lanes["urgent"].reserved_slots >= 1 and lanes["urgent"].deadline_s == 300
    text = s.Metrics(pb.MetricsRequest(), Context("admin")).text
    assert 'snarkd_lane_job_duration_seconds_count{lane="bulk"} 1.0' in text
    assert 'snarkd_lane_reserved_slots{lane="urgent"}' in text and 'snarkd_lane_expired_total{lane="urgent"} 0.0' in text


def test_a_lanes_deadline_applies_and_the_journal_keeps_lane_and_deadline_across_a_restart(service, chain_bn128):
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    s = service(debug_delay_s=5)
    blocker = s.Submit(req(wtns, lane="bulk", job_id="blocker"), Context("alice")).job_id
    waiting = s.Submit(req(wtns, job_id="w"), Context("bulkbot")).job_id  # its token's lane
    urgent = s.Submit(req(wtns, lane="urgent", job_id="u"), Context("alice")).job_id  # the lane's 300s deadline
    before = {j.job_id: j for j in s.ListJobs(pb.ListJobsRequest(), Context("admin")).jobs}
    assert before["u"].deadline_unix == pytest.approx(time.time() + 300, abs=5) and before["u"].lane == "urgent"
    s.journal.stopping = True  # as a shutdown: the unfinished stay journaled
    s.engine.stop(0)
    s.journal.close()
    s.journal = None
    s2 = service()
    after = {j.job_id: j for j in s2.ListJobs(pb.ListJobsRequest(), Context("admin")).jobs}
    assert {after[k].lane for k in ("blocker", "w")} == {"bulk"} and after["u"].lane == "urgent"
    assert after["u"].deadline_unix == pytest.approx(before["u"].deadline_unix, abs=0.01)
    for job_id, who in ((blocker, "alice"), (waiting, "bulkbot"), (urgent, "alice")):
        r = s2.Await(pb.AwaitRequest(job_id=job_id, timeout_s=120), Context(who))
        assert r.state == pb.COMPLETED and verify(vk, json.loads(r.result.public_json),
                                                   json.loads(r.result.proof_json)), job_id
    done = {j.job_id: j.lane for j in s2.ListJobs(pb.ListJobsRequest(lane="bulk"), Context("admin")).jobs}
    assert done == {"blocker": "bulk", "w": "bulk"}


def test_weight_bounds_refuse_with_the_bound_named(service, chain_bn128):
    _, wtns = chain_bn128
    s = service(debug_delay_s=5)
    w = s.engine.keys.get("chain").key.domain_size / 65536  # one partition's weight; bulk holds 0.01
    n = int(0.01 // w)
    s.Submit(pb.ProveRequest(key_id="chain", witnesses=[wtns.read_bytes()] * n, lane="bulk"), Context("admin"))
    e = abort(s.Submit, req(wtns, lane="bulk"), Context("admin"))
    assert e.code.name == "RESOURCE_EXHAUSTED" and "lane 'bulk' max_queued" in e.message
    assert s.Submit(req(wtns, lane="urgent"), Context("admin")).job_id  # another lane is not held up


def test_an_admission_refused_after_the_engine_had_the_job_is_undone(service, chain_bn128, monkeypatch):
    """The journal's accept fails after quota, claim, submit and keep: each is undone, latest first (the job
    cancelled and never recorded, the claim and the quota released), and the client hears the error."""
    _, wtns = chain_bn128
    s = service(debug_delay_s=5)
    calls = []
    real_accept = s.journal.accept

    def failing_accept(*a, **kw):
        calls.append("accept")
        raise DaemonError("cannot journal job: disk full (test)")

    monkeypatch.setattr(s.journal, "accept", failing_accept)
    for i in range(3):  # max_per_client 2: the quota must come back each time
        e = abort(s.Submit, req(wtns, job_id=f"x{i}"), Context("alice"))
        assert e.code.name == DaemonError.grpc_code and "disk full" in e.message  # the error model's code
    assert calls == ["accept"] * 3
    for i in range(3):
        job = s.engine.get(s.ids.engine_id("alice", f"x{i}"))
        assert job.state == "CANCELLED" and "could not journal" in job.error
        assert s.journal.lookup(job.id) is None
    assert not s.journal._claimed
    monkeypatch.setattr(s.journal, "accept", real_accept)
    ids = [s.Submit(req(wtns), Context("alice")).job_id for _ in range(2)]  # the quota is whole again
    assert len(ids) == 2 and s.quota._count == {"alice": 2}


def test_a_token_bound_to_a_lane_that_is_not_configured_stops_the_daemon_at_start(service):
    class Tokens:
        entries = [(b"d", Principal("bot", ROLES[PROVE], "nope"))]

    class BadGate(Gate):
        tokens = Tokens()

    with pytest.raises(DaemonError) as e:
        service(journal=False, gate=BadGate())
    assert "token 'bot'" in str(e.value) and "no lane 'nope'" in str(e.value)


def test_the_token_file_binds_a_token_to_a_lane(tmp_path):
    from snarkd.daemon.security import TokenTable

    path = tmp_path / "tokens"
    path.write_text("bot prove " + "b" * 20 + " lane=bulk\nops admin " + "a" * 20 + "\n")
    path.chmod(0o600)
    table = TokenTable.load(str(path))
    assert table.lookup("b" * 20) == Principal("bot", ROLES[PROVE], "bulk")
    assert table.lookup("a" * 20).lane == ""
    for line, message in (("bot prove " + "b" * 20 + " lane=no/pe", "lane='no/pe': a lane name is"),
                          ("bot prove " + "b" * 20 + " bulk", "expected NAME ROLE TOKEN [lane=LANE], got 4")):
        path.write_text(line + "\n")
        with pytest.raises(DaemonError) as e:
            TokenTable.load(str(path))
        assert message in str(e.value) and ":1:" in str(e.value)


def test_an_urgent_lanes_witness_by_path_is_read_into_the_engines_buffer(chain_bn128, tmp_path):
    """A by-path witness of a lane above priority 0 is read into the buffer the engine gives for that lane (on a
    GPU: page-locked memory, one DMA to the device), by the urgent read pool; other lanes' into the reader's own
    arrays. The proofs verify either way; an unknown lane is refused before the file is read."""
    from snarkd.daemon.transport import Transport
    from snarkd.engine.paths import PathRule

    circ, wtns = chain_bn128
    allowed = tmp_path / "witnesses"
    allowed.mkdir()
    s = start_service(circ.zkey, tmp_path, False, {"gate": Gate(), "transport": Transport(None, PathRule([allowed], "t"))},
                      lanes=LANES)
    try:
        by_path_into_the_lanes_buffer(s, circ, wtns, allowed)
    finally:
        stop_services([s])


def by_path_into_the_lanes_buffer(s, circ, wtns, allowed):
    import numpy as np

    path = allowed / "w.wtns"
    path.write_bytes(wtns.read_bytes())
    given = []

    def buffer(nbytes):
        given.append(np.empty(nbytes, dtype=np.uint8))
        return given[-1]

    real = s.engine.witness_buffer
    s.engine.witness_buffer = lambda lane: buffer if real(lane) is None and s.engine.lane(lane).priority > 0 else real(lane)
    vk = json.loads(circ.vk.read_text())
    for lane, job_id in (("urgent", "u"), ("bulk", "b")):
        r = s.Prove(pb.ProveRequest(key_id="chain", witness_paths=[str(path)], lane=lane, job_id=job_id),
                    Context("alice"))
        assert verify(vk, json.loads(r.public_json), json.loads(r.proof_json)), lane
    assert len(given) == 1 and given[0].nbytes == path.stat().st_size  # the urgent job's only
    assert bytes(given[0]) == path.read_bytes()
    e = abort(s.Submit, pb.ProveRequest(key_id="chain", witness_paths=[str(path)], lane="fast"), Context("alice"))
    assert e.code.name == "INVALID_ARGUMENT" and "no lane 'fast'" in e.message and len(given) == 1
