"""A witness the daemon accepted is the daemon's: truncating or rewriting the file after Submit (a witness
put in the spool by hard link, or one named in witness_dirs) neither kills the daemon (SIGBUS) nor changes
what is proved; a re-run from the journal after a crash proves the bytes that were accepted."""

from __future__ import annotations

import os
import signal

import pytest
from daemon_helpers import wait_gone
from fault_helpers import Daemon, all_valid, place


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain):
    tmp = tmp_path_factory.mktemp("witness-faults")
    (tmp / "witnesses").mkdir()
    d = Daemon(tmp, preload={"chain": chain.zkey}, delay="0.4s", witness_dirs=[tmp / "witnesses"]).start()
    try:
        yield d
    finally:
        d.stop()


def _submit_then(daemon, chain, transport: str, path, change) -> list:
    """Submit W1 (at `path`) four times, change the file, await all four."""
    with daemon.client(transport=transport) as c:
        ids = [c.submit("chain", witness_paths=[str(path)]) for _ in range(4)]
        assert c.last_transport == transport
        change(path)
        return [c.await_(i, wait_s=120) for i in ids]


def _changes(chain):
    w2 = chain.witnesses[1].read_bytes()

    def truncate(p):
        os.truncate(p, 0)

    def rewrite(p):  # in place, the same inode: what a pipeline writing each witness to one path does
        with open(p, "r+b") as fh:
            fh.write(w2)

    return {"truncated": truncate, "rewritten": rewrite}


@pytest.mark.parametrize("change", ["truncated", "rewritten"])
@pytest.mark.parametrize("transport", ["spool", "path"])
def test_a_witness_changed_after_submit_proves_what_was_submitted(daemon, chain, tmp_path, transport, change):
    where = daemon.dir / "witnesses" if transport == "path" else tmp_path
    path = place(chain.witnesses[0], where / f"{transport}-{change}.wtns")
    results = _submit_then(daemon, chain, transport, path, _changes(chain)[change])
    daemon.assert_alive()
    assert [r.state for r in results] == ["COMPLETED"] * 4, [r.error for r in results]
    assert all(r.reply.public == chain.publics[0] for r in results), "a proof of another witness than the one given"
    assert all_valid(chain.vk, [r.reply for r in results])


def test_a_journaled_witness_rewritten_before_a_restart_runs_as_accepted(tmp_path, chain):
    """kill -9 with jobs queued, the client's file rewritten, the daemon started again: the re-run proves W1."""
    d = Daemon(tmp_path, preload={"chain": chain.zkey}, workers=1, delay="3s")
    d.start()
    src = place(chain.witnesses[0], tmp_path / "w.wtns")
    try:
        with d.client(transport="spool") as c:
            ids = [c.submit("chain", witness_paths=[str(src)], job_id=f"j{i}") for i in range(2)]
        d.proc.send_signal(signal.SIGKILL)
        assert wait_gone(d.proc.pid, 10)
        d.proc.wait(10)
        _changes(chain)["rewritten"](src)
        d.start()
        with d.client() as c:
            results = [c.await_(i, wait_s=120) for i in ids]
        assert [r.state for r in results] == ["COMPLETED"] * 2, [r.error for r in results]
        assert all(r.reply.public == chain.publics[0] for r in results)
        assert all_valid(chain.vk, [r.reply for r in results])
    finally:
        d.stop()
