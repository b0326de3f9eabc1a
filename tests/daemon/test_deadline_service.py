"""Deadlines, ListJobs and per-token job ids through the gRPC servicer, in process (a real Engine and Journal, the
methods called as gRPC calls them): DEADLINE_EXCEEDED with the estimate at admission, EXPIRED jobs in Await, Prove,
Status and the metrics, a deadline that passed while the daemon was down, ListJobs scoped to the caller's token,
job ids that are each token's own (no answer tells a token that another's id exists). The same over
a real daemon and the CLI, with kill -9: tests/daemon/test_journal.py and test_deadline_cli.py."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

import oracle
from snarkd.daemon.journal import SCHEMA, Journal
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.security import ADMIN, PROVE, ROLES, Principal
from snarkd.daemon.service import ProverService
from snarkd.engine import Engine, EngineConfig, KeyStore


class Aborted(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code.name}: {message}")
        self.code, self.message = code, message


class Context:
    """What @rpc asks of a gRPC servicer context; `who` names the caller's token (Gate below)."""

    def __init__(self, who: str = "admin"):
        self.who = who

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def invocation_metadata(self):
        return ()

    def is_active(self) -> bool:
        return True

    def set_trailing_metadata(self, metadata):  # the error's kind (snarkd/errors.py)
        self.trailer = dict(metadata)

    def abort(self, code, message):
        raise Aborted(code, message)


class Gate:
    """Tokens on: alice and bob hold the prove role, admin the admin role."""

    tokens = object()

    def principal(self, context, role):
        who = Principal(context.who, ROLES[ADMIN] if context.who == "admin" else ROLES[PROVE])
        assert who.may(role)
        return who


def start_service(zkey, tmp_path, journal: bool, service_kw: dict, **engine_kw) -> ProverService:
    """A serving ProverService over a real Engine (the chain key loaded as "chain") and, if asked, a Journal in
    tmp_path, started as the server starts them (recover, then the journal, then the engine)."""
    keys = KeyStore("/")
    cfg = dict(synthesis_workers=1, threads=1, workers_per_device=1, memory_budget="64MiB")
    cfg.update(engine_kw)
    engine = Engine(EngineConfig(**cfg), keys)
    keys.load("chain", str(zkey))
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1 << 30, retention=3600) if journal else None
    info = {"started": time.monotonic(), "config_path": "<test>", "fingerprint": "f" * 16, "listen": "x"}
    service = ProverService(engine, keys, info, journal=j, **service_kw)
    if j is not None:
        service.recover()
        j.start()
    engine.start()
    service.state = "serving"
    return service


def stop_services(made: list) -> None:
    for s in made:
        if s.journal is not None:
            s.journal.stopping = True  # what the server sets before its drain
        s.engine.stop(0)
        s.engine.join_workers(10)
        if s.journal is not None:
            s.journal.close()
        s.keys.close_all()


@pytest.fixture
def make_service(chain_bn128, tmp_path):
    made = []

    def make(journal: bool = False, **engine_kw):
        made.append(start_service(chain_bn128[0].zkey, tmp_path, journal, {"gate": Gate()}, **engine_kw))
        return made[-1]

    yield make
    stop_services(made)


def request(wtns, **kw) -> pb.ProveRequest:
    return pb.ProveRequest(key_id="chain", witness=wtns.read_bytes(), **kw)


def snarkjs_ok(circ, tmp, reply: pb.ProveReply) -> bool:
    (tmp / "proof.json").write_text(reply.proof_json)
    (tmp / "public.json").write_text(reply.public_json)
    return oracle.snarkjs_verify(circ.vk, tmp / "public.json", tmp / "proof.json")


def test_a_deadline_the_estimate_misses_is_refused_with_it(make_service, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    s = make_service()
    ctx = Context()
    s.Prove(request(wtns), ctx)  # the key's first proof: its service time
    with pytest.raises(Aborted) as e:
        s.Submit(request(wtns, deadline_unix=time.time() - 5), ctx)
    assert e.value.code.name == "DEADLINE_EXCEEDED" and "already passed" in e.value.message
    assert ctx.trailer == {"snarkd-error-kind": "deadline"}
    ahead = [s.Submit(pb.ProveRequest(key_id="chain", witnesses=[wtns.read_bytes()] * 4), ctx).job_id
             for _ in range(3)]
    latency = json.loads(s.Status(pb.StatusRequest(), ctx).engine_json)["eta"]["latency_s"]["chain"]
    with pytest.raises(Aborted) as e:
        s.Submit(request(wtns, deadline_s=latency / 2), ctx)
    assert e.value.code.name == "DEADLINE_EXCEEDED"
    assert "estimated" in e.value.message and "partition(s) ahead" in e.value.message and "'chain'" in e.value.message
    for bad, field in ((dict(deadline_s=-1), "deadline_s"), (dict(deadline_unix=float("nan")), "deadline_unix"),
                       (dict(deadline_s=5, deadline_unix=time.time() + 5), "not both")):
        with pytest.raises(Aborted) as e:
            s.Submit(request(wtns, **bad), ctx)
        assert e.value.code.name == "INVALID_ARGUMENT" and field in e.value.message
    reply = s.Prove(request(wtns, deadline_s=600), ctx)  # the daemon serves on; a far deadline is met
    assert snarkjs_ok(circ, tmp_path, reply)
    for job_id in ahead:
        assert s.Await(pb.AwaitRequest(job_id=job_id), ctx).state == pb.COMPLETED
    st = s.Status(pb.StatusRequest(), ctx)
    assert json.loads(st.engine_json)["jobs"]["deadline_refused"] == 2 and st.expired == 0
    m = s.metrics.values()
    assert m["snarkd_deadline_refused_total"] == 2
    assert m['snarkd_eta_latency_seconds{key="chain"}'] >= m['snarkd_eta_interval_seconds{key="chain"}'] > 0
    assert m["snarkd_eta_backlog_seconds"] == 0  # nothing left ahead


def test_a_job_past_its_deadline_expires_in_await_prove_status_and_metrics(make_service, chain_bn128):
    _, wtns = chain_bn128
    s = make_service(debug_delay_s=3)
    ctx = Context()
    first = s.Submit(request(wtns), ctx).job_id  # holds the one synthesis worker for 3 s
    late = s.Submit(request(wtns, deadline_s=0.3), ctx).job_id
    r = s.Await(pb.AwaitRequest(job_id=late, timeout_s=10), ctx)
    assert r.state == pb.EXPIRED and "before it started" in r.error
    with pytest.raises(Aborted) as e:  # a Prove caller hears DEADLINE_EXCEEDED with the job's expiry
        s.Prove(request(wtns, deadline_unix=time.time() + 0.3), ctx)
    assert e.value.code.name == "DEADLINE_EXCEEDED" and "expired" in e.value.message
    assert s.Cancel(pb.CancelRequest(job_id=late), ctx).state == pb.EXPIRED
    st = s.Status(pb.StatusRequest(), ctx)
    assert st.expired == 2 and st.completed == 0
    assert s.metrics.values()["snarkd_proofs_expired_total"] == 2
    s.Cancel(pb.CancelRequest(job_id=first), ctx)


def test_list_jobs_shows_each_token_its_own_and_admin_all(make_service, chain_bn128):
    _, wtns = chain_bn128
    s = make_service(journal=True)
    alice, bob, admin = Context("alice"), Context("bob"), Context("admin")
    a1 = s.Submit(request(wtns, job_id="a-1"), alice).job_id
    a2 = s.Submit(request(wtns, deadline_s=600), alice).job_id
    b1 = s.Submit(request(wtns), bob).job_id
    for ctx, j in ((alice, a1), (alice, a2), (bob, b1)):
        assert s.Await(pb.AwaitRequest(job_id=j), ctx).state == pb.COMPLETED
    mine = s.ListJobs(pb.ListJobsRequest(), alice).jobs
    assert [j.job_id for j in mine] == [a2, a1]  # newest first, bob's not there
    assert all(j.client == "" and j.state == pb.COMPLETED and j.done == j.partitions == 1 for j in mine)
    assert mine[0].deadline_unix > time.time() + 500 and mine[1].deadline_unix == 0
    assert [j.job_id for j in s.ListJobs(pb.ListJobsRequest(), bob).jobs] == [b1]
    every = s.ListJobs(pb.ListJobsRequest(), admin).jobs
    assert {(j.job_id, j.client) for j in every} == {(a1, "alice"), (a2, "alice"), (b1, "bob")}
    assert [j.job_id for j in s.ListJobs(pb.ListJobsRequest(limit=1), admin).jobs] == [b1]
    assert not s.ListJobs(pb.ListJobsRequest(states=[pb.EXPIRED]), admin).jobs
    assert not s.ListJobs(pb.ListJobsRequest(key_id="other"), admin).jobs
    with pytest.raises(Aborted) as e:
        s.ListJobs(pb.ListJobsRequest(states=[pb.TIMEOUT]), alice)
    assert e.value.code.name == "INVALID_ARGUMENT" and "states[0]" in e.value.message
    # finished jobs the engine no longer holds come from the journal, scoped the same way
    s.engine.book.jobs.clear()
    assert [j.job_id for j in s.ListJobs(pb.ListJobsRequest(), alice).jobs] == [a2, a1]
    assert {j.client for j in s.ListJobs(pb.ListJobsRequest(states=[pb.COMPLETED]), admin).jobs} == {"alice", "bob"}


def test_a_deadline_that_passed_while_the_daemon_was_down_expires_the_job(make_service, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    s = make_service(journal=True, debug_delay_s=30)
    ctx = Context("alice")
    late = s.Submit(request(wtns, deadline_s=0.5), ctx).job_id
    far = s.Submit(request(wtns, deadline_s=600), ctx).job_id
    far_deadline = {j.job_id: j for j in s.ListJobs(pb.ListJobsRequest(), ctx).jobs}[far].deadline_unix
    s.journal.stopping = True  # the daemon goes away with both unfinished: journaled, not ended
    s.engine.stop(0)
    s.journal.close()
    s.journal = None
    time.sleep(0.7)
    s2 = make_service(journal=True)  # recovers: one expired while down, one runs with its own deadline
    r = s2.Await(pb.AwaitRequest(job_id=late), ctx)
    assert r.state == pb.EXPIRED and "while the daemon was down" in r.error
    r = s2.Await(pb.AwaitRequest(job_id=far), ctx)
    assert r.state == pb.COMPLETED and snarkjs_ok(circ, tmp_path, r.result)
    listed = {j.job_id: j for j in s2.ListJobs(pb.ListJobsRequest(), ctx).jobs}
    assert listed[late].state == pb.EXPIRED
    assert listed[far].deadline_unix == pytest.approx(far_deadline, abs=0.01)  # not moved by the restart


def test_job_ids_are_per_token_so_none_tells_of_another_tokens(make_service, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    other = circ.witness({"k": 5, "x": 2})
    s = make_service(journal=True)
    alice, bob, admin = Context("alice"), Context("bob"), Context("admin")
    assert s.Submit(request(wtns, job_id="shared"), alice).job_id == "shared"
    assert s.Submit(request(other, job_id="shared"), bob).job_id == "shared"  # was ALREADY_EXISTS: an oracle
    with pytest.raises(Aborted) as e:  # its own id, taken: said with the id it gave, nothing else
        s.Submit(request(wtns, job_id="shared"), alice)
    assert e.value.code.name == "ALREADY_EXISTS" and "'shared'" in e.value.message and ".shared" not in e.value.message
    mine = s.Await(pb.AwaitRequest(job_id="shared"), alice)
    theirs = s.Await(pb.AwaitRequest(job_id="shared"), bob)
    assert mine.state == theirs.state == pb.COMPLETED and mine.result.job_id == theirs.result.job_id == "shared"
    assert json.loads(mine.result.public_json)[1] == "3" and json.loads(theirs.result.public_json)[1] == "5"
    assert snarkjs_ok(circ, tmp_path, mine.result) and snarkjs_ok(circ, tmp_path, theirs.result)
    with pytest.raises(Aborted) as e:  # another token's id is unknown to it, as any unknown id is
        s.Cancel(pb.CancelRequest(job_id="bob/shared"), alice)
    assert e.value.code.name == "NOT_FOUND"
    # an admin sees both, with their owners, and reaches each as TOKEN/NAME
    assert sorted((j.job_id, j.client) for j in s.ListJobs(pb.ListJobsRequest(), admin).jobs) == \
        [("shared", "alice"), ("shared", "bob")]
    assert json.loads(s.Await(pb.AwaitRequest(job_id="bob/shared"), admin).result.public_json)[1] == "5"
    with pytest.raises(Aborted) as e:  # by its name alone only when one token has it
        s.Await(pb.AwaitRequest(job_id="shared"), admin)
    assert e.value.code.name == "INVALID_ARGUMENT"
    assert "alice, bob" in e.value.message and "TOKEN/shared" in e.value.message
    solo = s.Submit(request(wtns), alice).job_id
    assert s.Await(pb.AwaitRequest(job_id=solo), admin).result.job_id == solo
    # after a restart the journal answers the same way: each token's own job under the name it gave
    s.journal.stopping = True
    s.engine.stop(0)
    s.journal.close()
    s.journal = None
    s2 = make_service(journal=True)
    r = s2.Await(pb.AwaitRequest(job_id="shared"), bob)
    assert r.state == pb.COMPLETED and r.result.job_id == "shared" and json.loads(r.result.public_json)[1] == "5"
    assert [(j.job_id, j.client) for j in s2.ListJobs(pb.ListJobsRequest(), alice).jobs] == [(solo, ""), ("shared", "")]
    with pytest.raises(Aborted) as e:  # still taken for alice (result_retention), free for a third token
        s2.Submit(request(wtns, job_id="shared"), alice)
    assert e.value.code.name == "ALREADY_EXISTS"
    assert s2.Submit(request(wtns, job_id="shared"), Context("carol")).job_id == "shared"


def test_a_job_journaled_before_ids_were_per_token_is_still_its_tokens(make_service, chain_bn128, tmp_path):
    """A journal of an older daemon holds a token's job under the id its client gave: after the upgrade it runs
    again and that token (and admin) reach it by that id; another token does not."""
    circ, wtns = chain_bn128
    old_schema = "\n".join(line for line in SCHEMA.replace("result BLOB,", "result BLOB").splitlines()
                           if not line.lstrip().startswith(("name TEXT", "lane TEXT")))  # both added since
    assert "name TEXT" not in old_schema
    db = sqlite3.connect(str(tmp_path / "jobs.db"))
    db.executescript(old_schema)  # the journal of a daemon from before
    db.close()
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1 << 30, retention=3600)  # adds the column
    j.accept("old-1", "chain", "alice", 0, request(wtns, job_id="old-1").SerializeToString())  # no name: as before
    assert j.lookup("old-1").name == ""
    j.close()
    s = make_service(journal=True)  # recovers it, under its old id
    with pytest.raises(Aborted) as e:
        s.Await(pb.AwaitRequest(job_id="old-1"), Context("bob"))
    assert e.value.code.name == "NOT_FOUND"
    r = s.Await(pb.AwaitRequest(job_id="old-1"), Context("alice"))
    assert r.state == pb.COMPLETED and r.result.job_id == "old-1" and snarkjs_ok(circ, tmp_path, r.result)
    s.engine.book.jobs.clear()  # then from the journal's row
    assert s.Await(pb.AwaitRequest(job_id="old-1"), Context("admin")).state == pb.COMPLETED
    assert [j.job_id for j in s.ListJobs(pb.ListJobsRequest(), Context("alice")).jobs] == ["old-1"]


def test_the_clients_deadline_argument():
    from datetime import datetime, timezone

    from snarkd.daemon.client import deadline_fields
    from snarkd.errors import InputError

    assert deadline_fields(None) == {}
    assert deadline_fields(30) == deadline_fields("30") == {"deadline_s": 30.0}
    assert deadline_fields("@1767225600") == {"deadline_unix": 1767225600.0}
    when = datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert deadline_fields(when) == {"deadline_unix": when.timestamp()}
    for bad in (0, -1, "soon", float("inf"), "@-5"):
        with pytest.raises(InputError, match="deadline"):
            deadline_fields(bad)
