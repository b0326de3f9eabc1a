"""A daemon job's module hops (tools/hop_trace.py over a real `snarkd serve`, one `snarkd prove --addr` of the
bundled example by reference through the witness spool, journal on): the service calls down into admission and
nothing in daemon/ calls back up into a module below it on the stack (issue 35). The proof is snarkjs's to judge."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest
from daemon_helpers import REPO, Reaper, Setup, env, free_port, oracle, snarkd, wait_serving

EXAMPLE = REPO / "examples" / "chain-bn128"
pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier
HOP = re.compile(r"\s*\d+  (\S+)\s+(\S+) (->|<-) (\S+)\s")


def test_a_daemon_job_never_calls_back_up_into_the_service(tmp_path):
    s = Setup(tmp_path, free_port())
    cfg = s.write(preload={"chain": EXAMPLE / "chain.zkey"})  # the journal on: beside the pid file
    reaper = Reaper()
    daemon = subprocess.Popen([sys.executable, str(REPO / "tools" / "hop_trace.py"), "--after", "Status", "--until",
                               "handle_exit", "serve", "--config", str(cfg)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env())
    reaper.procs.append(daemon)
    try:
        wait_serving(s.addr, daemon, timeout=120)
        r = snarkd("prove", "--addr", s.addr, "--key", "chain", EXAMPLE / "chain.wtns", tmp_path / "proof.json",
                   tmp_path / "public.json", timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=60)
        assert daemon.returncode == 0, err
    finally:
        reaper.collect()
    assert oracle.snarkjs_verify(EXAMPLE / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")
    hops = [m.groups() for m in map(HOP.match, err.splitlines()) if m]  # (thread, caller, arrow, callee)
    (tmp_path / "trace.txt").write_text(err)
    assert err.rstrip().endswith(f"{len(hops)} hops")
    pairs = [(caller, callee) for _, caller, _, callee in hops]
    # the request's way in: the service into admission, admission to the transport, the journal and the engine
    assert ("daemon/service", "daemon/admission") in pairs
    assert ("daemon/transport", "daemon/parallel_io") in pairs  # the witness read by reference, from the spool
    for callee in ("daemon/transport", "daemon/journal", "engine/contract"):
        assert ("daemon/admission", callee) in pairs
    assert pairs.index(("daemon/admission", "daemon/journal")) < pairs.index(("daemon/admission", "engine/contract"))
    assert ("daemon/service", "daemon/journal") in pairs  # the job's end, recorded (ProverService.on_job)
    # admission is handed what it needs: it never calls the service, and no call in daemon/ goes back up
    assert not [p for p in pairs if p[0] == "daemon/admission" and p[1] == "daemon/service"]
    assert [h for h in hops if h[2] == "<-"] == []  # nothing in the daemon or the engine calls back up
    assert len(set(pairs)) == len(pairs)  # each hop once
