"""A loaded key overwritten under the daemon (`cp` over it, truncation) fails only the jobs that were using it,
with an error naming the file; the key is marked bad, logged, and reloaded from its path at its next job (refused
while the file is not a valid key); another tenant's jobs on another key complete; the daemon lives on."""

from __future__ import annotations

import os

import grpc
import pytest
from fault_helpers import Daemon, all_valid, cp, place

from snarkd.daemon.client import RemoteInputError


@pytest.fixture
def daemon(tmp_path, chain, other):
    keys = tmp_path / "keys"
    d = Daemon(tmp_path, preload={"chain": place(chain.zkey, keys / "chain.zkey"),
                                  "other": place(other.zkey, keys / "other.zkey")}, delay="0.5s").start()
    try:
        yield d
    finally:
        d.stop()


def _in_flight_then(d, chain, other, change):
    """Three jobs on chain and two on the other tenant's key in flight, then the chain key file changed."""
    with d.client(transport="inline") as c:
        mine = [c.submit("chain", chain.witnesses[0].read_bytes()) for _ in range(3)]
        theirs = [c.submit("other", other.witnesses[0].read_bytes()) for _ in range(2)]
        change()
        return [c.await_(i, wait_s=120) for i in mine], [c.await_(i, wait_s=120) for i in theirs]


def _assert_only_mine_failed(d, mine, theirs, other, key_path):
    d.assert_alive()
    assert [r.state for r in theirs] == ["COMPLETED"] * 2, [r.error for r in theirs]
    assert all_valid(other.vk, [r.reply for r in theirs])
    for r in mine:
        assert r.state == "FAILED" and r.reply is None, r
        assert str(key_path) in r.error and "changed on disk" in r.error, r.error
    warned = [ln for ln in d.log().splitlines() if "WARNING" in ln and str(key_path) in ln]
    assert warned and "changed on disk" in warned[0], d.log()[-3000:]


def test_cp_of_a_shorter_key_over_a_loaded_key(daemon, chain, other, shorter):
    key = daemon.dir / "keys" / "chain.zkey"
    mine, theirs = _in_flight_then(daemon, chain, other, lambda: cp(shorter.zkey, key))
    _assert_only_mine_failed(daemon, mine, theirs, other, key)
    with daemon.client(transport="inline") as c:
        # the next job reloads the key from its path: now another circuit's key, so W1 does not fit it
        with pytest.raises(RemoteInputError) as e:
            c.prove("chain", chain.witnesses[0].read_bytes())
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and "nVars" in str(e.value), str(e.value)
        cp(chain.zkey, key)  # the operator puts the right key back: the next job reloads it and proves
        reply = c.prove("chain", chain.witnesses[0].read_bytes())
    assert reply.public == chain.publics[0] and all_valid(chain.vk, [reply])
    daemon.assert_alive()


def test_truncated_key_is_refused_until_it_is_whole_again(daemon, chain, other):
    key = daemon.dir / "keys" / "chain.zkey"
    mine, theirs = _in_flight_then(daemon, chain, other, lambda: os.truncate(key, 100))
    _assert_only_mine_failed(daemon, mine, theirs, other, key)
    with daemon.client(transport="inline") as c:
        for _ in range(2):  # refused while broken, every time, naming the file
            with pytest.raises(RemoteInputError) as e:
                c.prove("chain", chain.witnesses[0].read_bytes())
            assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and str(key) in str(e.value), str(e.value)
        cp(chain.zkey, key)
        reply = c.prove("chain", chain.witnesses[0].read_bytes())
        assert reply.public == chain.publics[0] and all_valid(chain.vk, [reply])
        assert [k["reloads"] for k in c.status()["keys"] if k["id"] == "chain"] == [1]
    daemon.assert_alive()


def test_key_rewritten_in_place_with_the_same_size(daemon, chain, other):
    """`cp` of a file of the same size (here the same bytes): no SIGBUS, but the jobs that read the key while it
    was being rewritten cannot be trusted: they fail, and the next job proves on the key reloaded."""
    key = daemon.dir / "keys" / "chain.zkey"
    mine, theirs = _in_flight_then(daemon, chain, other, lambda: cp(chain.zkey, key))
    _assert_only_mine_failed(daemon, mine, theirs, other, key)
    with daemon.client(transport="inline") as c:
        reply = c.prove("chain", chain.witnesses[1].read_bytes())
    assert reply.public == chain.publics[1] and all_valid(chain.vk, [reply])
