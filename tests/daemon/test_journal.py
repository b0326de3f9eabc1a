"""Durable jobs: the journal (unit), and kill -9 / restart with a real daemon: accepted jobs run again,
finished results stay fetchable, a Prove caller whose connection broke fetches its result by id."""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
import time

import pytest
from daemon_helpers import snarkd, start_daemon, wait_gone

from snarkd.daemon.client import Client, RemoteDaemonError
from snarkd.daemon.journal import Journal
from snarkd.engine import AlreadyExists, Busy
from snarkd.engine.errors import TooLarge
from snarkd.verifier import verify


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def test_journal_rows_spool_and_retention(tmp_path):
    j = Journal(str(tmp_path / "jobs.db"), spool_max=100, retention=60)
    j.start()
    j.accept("a", "key", "alice", 3, b"x" * 40)
    j.accept("b", "key", "bob", 0, b"y" * 40)
    with pytest.raises(Busy, match=r"\[daemon\] spool_max \(100 bytes\)"):
        j.accept("c", "key", "alice", 0, b"z" * 40)
    with pytest.raises(AlreadyExists):
        j.accept("a", "key", "alice", 0, b"")
    assert j.request_bytes(j.lookup("a")) == b"x" * 40 and j.lookup("a").state == "QUEUED"
    assert [r.id for r in j.unfinished()] == ["a", "b"]
    j.finish("a", "COMPLETED", "", "", lambda: b"reply-bytes")
    j.flush()
    row = j.lookup("a")
    assert (row.state, row.result, row.spool, row.client, row.priority) == ("COMPLETED", b"reply-bytes", None, "alice", 3)
    assert [r.id for r in j.unfinished()] == ["b"] and j.spool_used == 40
    assert len(list(j.spool_dir.iterdir())) == 1  # a's spool file is gone with its job
    j.accept("c", "key", "alice", 0, b"z" * 40)  # room again
    with pytest.raises(AlreadyExists):  # a finished job's id stays taken while its result is kept
        j.accept("a", "key", "alice", 0, b"")
    assert j.purge(now=time.time() + 30) == 0 and j.purge(now=time.time() + 61) == 1
    assert j.lookup("a") is None
    (j.spool_dir / "left-by-a-crash.tmp").write_bytes(b"")
    j.close()
    again = Journal(str(tmp_path / "jobs.db"), spool_max=100, retention=60)  # reopened: same rows, same spool
    assert again.spool_used == 80 and [r.id for r in again.unfinished()] == ["b", "c"]
    assert again.orphans() == 1
    again.close()


def test_by_reference_witnesses_are_kept_as_the_daemon_read_them(tmp_path):
    """A spool file nobody else names is renamed into the journal's spool (same inode: no copy); any other
    witness (a hard-linked spool file, a witness_dirs file) is written from the bytes the daemon read, so a
    client rewriting its file cannot change what a re-run proves. Counted against spool_max, all or nothing,
    and gone with the job; a retry of the same id never touches the first one's files."""
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1000, retention=60)
    j.start()
    w = tmp_path / "w.wtns"
    w.write_bytes(b"w" * 300)
    inode = w.stat().st_ino
    theirs = tmp_path / "theirs.wtns"  # the client's own file, which it may rewrite later
    theirs.write_bytes(b"t" * 200)
    kept = j.keep("job", [(w, w.read_bytes()), (None, theirs.read_bytes())])
    theirs.write_bytes(b"T" * 200)
    assert not w.exists() and os.stat(kept[0]).st_ino == inode and j.adopted(kept[0]) and j.adopted(kept[1])
    assert open(kept[1], "rb").read() == b"t" * 200 and stat.S_IMODE(os.stat(kept[1]).st_mode) == 0o600
    j.accept("job", "key", "alice", 0, b"r" * 10)
    assert j.spool_used == 510
    retry = tmp_path / "again.wtns"
    retry.write_bytes(b"v" * 300)
    second = j.keep("job", [(retry, retry.read_bytes())])
    with pytest.raises(AlreadyExists):
        j.accept("job", "key", "alice", 0, b"r" * 10)
    j.discard(second)
    assert os.path.exists(kept[0]) and not os.path.exists(second[0]) and j.spool_used == 510
    big = tmp_path / "big.wtns"
    big.write_bytes(b"x" * 800)
    with pytest.raises(Busy):  # all or nothing: nothing kept when the spool would overflow
        j.keep("big", [(None, b"y" * 100), (big, big.read_bytes())])
    assert big.exists() and j.spool_used == 510 and len(list(j.spool_dir.iterdir())) == 3
    # a job larger than the whole spool is not "busy, retry": it can never be kept (a 10-partition 2^24 job is 5 GiB)
    with pytest.raises(TooLarge, match=r"more than the journal's spool can ever keep \(\[daemon\] spool_max, 1000 bytes\)"):
        j.keep("huge", [(None, b"y" * 600), (big, big.read_bytes())])
    with pytest.raises(TooLarge):
        j.accept("huge", "key", "alice", 0, b"r" * 1001)
    assert big.exists() and j.spool_used == 510 and j.lookup("huge") is None
    j.finish("job", "COMPLETED", "", "", lambda: b"reply")
    j.flush()
    assert not os.path.exists(kept[0]) and j.spool_used == 0 and list(j.spool_dir.iterdir()) == []
    j.close()


def test_the_journal_files_are_private(tmp_path):
    """jobs.db and its -wal and -shm hold client names, errors and results: 0600, even where they existed 0644."""
    (tmp_path / "jobs.db-wal").write_bytes(b"")
    os.chmod(tmp_path / "jobs.db-wal", 0o644)
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1000, retention=60)
    j.start()
    j.accept("a", "key", "alice", 0, b"x")
    for name in ("jobs.db", "jobs.db-wal", "jobs.db-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(j.spool_dir.stat().st_mode) == 0o700
    j.close()


def _config(setup, circ, journal_extra=""):
    return setup.write(drain="2s", workers=1, preload={"chain": circ.zkey},
                       extra=journal_extra)


def _start(cfg, reaper, **env):
    return start_daemon(cfg, reaper, extra_env=env)


def test_kill_9_then_start_reruns_accepted_jobs(setup, reaper, chain_bn128):
    circ, _ = chain_bn128
    vk = json.loads(circ.vk.read_text())
    witnesses = {k: circ.witness({"k": k, "x": 2}).read_bytes() for k in (11, 12, 13, 14)}
    cfg = _config(setup, circ)
    pid = _start(cfg, reaper, SNARKD_DEBUG_PROVE_DELAY_MS=700)
    broken = {}
    with Client(setup.addr, timeout=60) as c:
        ids = {k: c.submit("chain", w, job_id=f"job-k{k}") for k, w in witnesses.items()}
        first = c.await_(ids[11])
        assert first.state == "COMPLETED"

        def prove_then_lose_the_daemon():
            try:
                with Client(setup.addr, timeout=60) as c2:
                    broken["reply"] = c2.prove("chain", witnesses[12], job_id="prove-k12")
            except RemoteDaemonError as exc:
                broken["error"] = exc

        t = threading.Thread(target=prove_then_lose_the_daemon)
        t.start()
        time.sleep(0.3)
        assert c.status()["completed"] == 1  # the rest are queued or running
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    t.join(30)
    assert "error" in broken and broken["error"].job_id == "prove-k12", broken
    assert any(p.suffix == ".req" for p in setup.pid_file.with_suffix(".jobs.db.spool").iterdir())

    pid2 = _start(cfg, reaper)
    assert "journal: 4 unfinished job(s) submitted again" in setup.log()
    with Client(setup.addr, timeout=60) as c:
        again = c.await_(ids[11])  # finished before the kill: from the journal, the same proof
        assert again.state == "COMPLETED" and again.reply.proof == first.reply.proof
        for k in witnesses:
            r = c.await_(ids[k])
            assert r.state == "COMPLETED", (k, r)
            assert verify(vk, r.reply.public, r.reply.proof) and r.reply.public[1] == str(k)
        r = c.await_("prove-k12")  # the Prove caller fetches its result by the id its client gave
        assert r.state == "COMPLETED" and r.reply.public[1] == "12" and verify(vk, r.reply.public, r.reply.proof)
        assert c.status()["completed"] == 4  # each unfinished job ran once after the restart
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0 and wait_gone(pid2), r.stderr
    spool = setup.pid_file.with_suffix(".jobs.db.spool")
    assert not list(spool.iterdir()), "spool files outlived their jobs"


def test_kill_9_keeps_deadlines_and_expires_what_passed_while_down(setup, reaper, chain_bn128):
    """A journaled job's deadline survives kill -9 as the absolute time it was given: one that passed while the
    daemon was down is recorded EXPIRED and never runs; the others run after the restart, their deadline unmoved."""
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    cfg = _config(setup, circ)
    pid = _start(cfg, reaper, SNARKD_DEBUG_PROVE_DELAY_MS=2000)
    with Client(setup.addr, timeout=60) as c:
        blocker = c.submit("chain", wtns.read_bytes(), job_id="blocker")
        soon = c.submit("chain", wtns.read_bytes(), job_id="soon", deadline=2.5)
        far = c.submit("chain", wtns.read_bytes(), job_id="far", deadline=300)
        before = {j["job_id"]: j for j in c.list_jobs()}
    t_kill = time.time()
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    time.sleep(max(0.0, before["soon"]["deadline_unix"] - t_kill + 0.3))  # its deadline passes while it is down

    pid2 = _start(cfg, reaper)
    assert "2 unfinished job(s) submitted again, 0 could not be (failed), 1 past their deadline (expired)" \
        in setup.log()
    with Client(setup.addr, timeout=60) as c:
        r = c.await_(soon)
        assert r.state == "EXPIRED" and "while the daemon was down" in r.error and r.reply is None
        for job_id in (blocker, far):
            r = c.await_(job_id)
            assert r.state == "COMPLETED" and verify(vk, r.reply.public, r.reply.proof), (job_id, r)
        after = {j["job_id"]: j for j in c.list_jobs()}
        assert after["far"]["deadline_unix"] == pytest.approx(before["far"]["deadline_unix"], abs=0.01)
        assert after["soon"]["state"] == "EXPIRED" and after["blocker"]["deadline_unix"] == 0
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0 and wait_gone(pid2), r.stderr


def test_retention_and_journal_off(setup, reaper, chain_bn128):
    import grpc

    from snarkd.daemon.client import RemoteInputError

    circ, wtns = chain_bn128
    cfg = _config(setup, circ)
    cfg.write_text(cfg.read_text().replace("[transport]", 'result_retention = "1s"\n[transport]'))
    pid = _start(cfg, reaper)
    with Client(setup.addr, timeout=60) as c:
        job = c.submit("chain", wtns.read_bytes(), job_id="short-lived")
        assert c.await_(job).state == "COMPLETED"
    assert snarkd("stop", "--config", cfg).returncode == 0 and wait_gone(pid)
    time.sleep(1.2)
    pid = _start(cfg, reaper)  # the journal drops results older than result_retention at start (and every minute)
    with Client(setup.addr, timeout=60) as c:
        with pytest.raises(RemoteInputError) as e:
            c.await_(job)
        assert e.value.code == grpc.StatusCode.NOT_FOUND
    assert snarkd("stop", "--config", cfg).returncode == 0 and wait_gone(pid)
    # journal = "off": no journal file, jobs in memory only
    cfg.write_text(cfg.read_text().replace('result_retention = "1s"', 'journal = "off"'))
    setup.pid_file.with_suffix(".jobs.db").unlink()
    pid = _start(cfg, reaper)
    with Client(setup.addr, timeout=60) as c:
        assert c.await_(c.submit("chain", wtns.read_bytes())).state == "COMPLETED"
    assert not setup.pid_file.with_suffix(".jobs.db").exists()
    assert snarkd("stop", "--config", cfg).returncode == 0 and wait_gone(pid)


def test_a_claimed_job_runs_while_it_is_journaled_and_its_ending_waits_for_accept(tmp_path):
    """The engine starts on a job once the journal has claimed its id (free, spool room); the journal writes it
    down meanwhile. An ending reported before accept() commits is held back (a result never leaves before the
    job is durable), then recorded; a claim the daemon gives up (accept failed) records nothing and holds up no
    waiter; a claimed or journaled id cannot be claimed again, nor a job the spool has no room for."""
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1000, retention=60)
    j.start()
    j.claim("fast", 10)
    with pytest.raises(AlreadyExists):
        j.claim("fast", 10)
    with pytest.raises(Busy):
        j.claim("huge", 1001)
    j.finish("fast", "COMPLETED", "", "", lambda: b"reply")  # the engine was quicker than the journal
    assert not j.wait_recorded("fast", timeout=0.3)
    j.accept("fast", "key", "alice", 0, b"r" * 10)
    assert not j.wait_recorded("fast", timeout=0.3)
    j.release("fast", accepted=True)
    assert j.wait_recorded("fast", timeout=10)
    j.flush()  # its spool files go right after the waiters are told
    row = j.lookup("fast")
    assert row.state == "COMPLETED" and row.result == b"reply" and j.spool_used == 0
    with pytest.raises(AlreadyExists):  # finished, kept for result_retention
        j.claim("fast", 10)
    j.claim("lost", 10)
    j.finish("lost", "CANCELLED", "cancelled: the daemon could not journal it", "cancelled", None)
    j.release("lost", accepted=False)
    assert j.wait_recorded("lost", timeout=1) and j.lookup("lost") is None
    j.close()
