"""The journal's writes (unit, fast tier): endings committed in groups, admission's id check never waiting for a
commit in progress, one bad ending not losing the others of its group, checkpoints off the commit path."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from snarkd.daemon.journal import Journal
from snarkd.engine import AlreadyExists


@pytest.fixture
def journal(tmp_path):
    j = Journal(str(tmp_path / "jobs.db"), spool_max=1 << 20, retention=60)
    j.start()
    yield j
    j.close()


def test_endings_queued_meanwhile_are_committed_in_one_transaction(journal):
    """While the write connection is busy (a commit's fsync), endings queue; they are then committed together,
    each with its own reply, every waiter told, every spool file gone."""
    for i in range(40):
        journal.accept(f"j{i}", "key", "alice", 0, b"r" * 10)
    commits = []
    journal.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    with journal._db_lock:  # the writer cannot commit: the endings pile up behind it
        for i in range(40):
            journal.finish(f"j{i}", "COMPLETED", "", "", lambda i=i: b"reply-%d" % i)
        time.sleep(0.2)
    assert all(journal.wait_recorded(f"j{i}", timeout=10) for i in range(40))
    journal.flush()  # the spool files go after the waiters are told
    journal.db.set_trace_callback(None)
    assert len(commits) <= 2, commits  # one group (two where the writer had taken the first before the lock)
    assert [journal.lookup(f"j{i}").result for i in range(40)] == [b"reply-%d" % i for i in range(40)]
    assert not journal.unfinished() and journal.spool_used == 0
    assert not list(journal.spool_dir.iterdir())


def test_a_flush_waits_for_the_endings_queued_before_it(journal):
    journal.accept("a", "key", "alice", 0, b"x")
    journal.finish("a", "FAILED", "bad witness", "input", None)
    journal.flush()
    row = journal.lookup("a")
    assert (row.state, row.error, row.error_kind) == ("FAILED", "bad witness", "input")


def test_claim_reads_ids_without_waiting_for_a_commit(journal):
    """Admission's claim checks the id on the read connection: a commit holding the write connection (a slow
    fsync under bulk load) does not delay it, and a committed id is still refused."""
    journal.accept("taken", "key", "alice", 0, b"x")
    held = threading.Event()
    release = threading.Event()

    def slow_commit():
        with journal._db_lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=slow_commit)
    t.start()
    try:
        assert held.wait(5)
        t0 = time.monotonic()
        journal.claim("fresh", 10)
        with pytest.raises(AlreadyExists):
            journal.claim("taken", 10)
        with pytest.raises(AlreadyExists):  # claimed, not yet accepted: a second claim of it is refused too
            journal.claim("fresh", 10)
        assert time.monotonic() - t0 < 1.0
        assert journal.lookup("taken").state == "QUEUED" and journal.counts()["jobs"] == {"QUEUED": 1}
    finally:
        release.set()
        t.join()
    journal.accept("fresh", "key", "alice", 0, b"y")
    journal.release("fresh", accepted=True)
    assert {r.id for r in journal.unfinished()} == {"taken", "fresh"}


def test_one_bad_ending_does_not_lose_the_others_of_its_group(journal):
    for name in ("a", "b", "c"):
        journal.accept(name, "key", "alice", 0, b"x")

    def broken():
        raise RuntimeError("cannot serialise the reply")

    with journal._db_lock:
        journal.finish("a", "COMPLETED", "", "", lambda: b"ra")
        journal.finish("b", "COMPLETED", "", "", broken)
        journal.finish("c", "COMPLETED", "", "", lambda: b"rc")
        time.sleep(0.1)
    assert all(journal.wait_recorded(x, timeout=10) for x in "abc")  # nobody waits forever
    assert (journal.lookup("a").result, journal.lookup("c").result) == (b"ra", b"rc")
    assert journal.lookup("b").state == "QUEUED"  # not recorded: it runs again after a restart


def test_the_wal_is_checkpointed_by_a_thread_of_its_own(journal, tmp_path):
    """Commits never checkpoint (wal_autocheckpoint off on the write connection), nor does the endings' writer; a
    thread of its own does, once a second, so the WAL's frames reach the database file while the daemon runs."""
    assert journal.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    for i in range(50):
        journal.accept(f"j{i}", "key", "alice", 0, b"x")
        journal.finish(f"j{i}", "COMPLETED", "", "", lambda: b"r" * 512)
    journal.flush()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        probe = sqlite3.connect(str(tmp_path / "jobs.db"))
        busy, log_frames, done = probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        probe.close()
        if log_frames == done:
            break
        time.sleep(0.3)
    assert (busy, log_frames == done) == (0, True)
    assert len(journal.rows(None, states=["COMPLETED"])) == 50
