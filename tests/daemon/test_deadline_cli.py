"""Deadlines and ListJobs from the command line against a real daemon: `snarkd prove --addr --deadline` exits 6
(refused with the estimate, or expired), a far deadline gives a proof snarkjs accepts, `snarkd jobs list` and
`snarkd status` show the jobs, the EXPIRED state and the completion model."""

from __future__ import annotations

import json

import pytest
from daemon_helpers import snarkd, start_daemon, wait_gone

import oracle

pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier (pytest -m "not slow" leaves it out)


def test_prove_with_a_deadline_and_list_jobs(setup, reaper, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    cfg = setup.write(preload={"chain": circ.zkey})
    pid = start_daemon(cfg, reaper, extra_env={"SNARKD_DEBUG_PROVE_DELAY_MS": "1000"})  # 1 s in synthesis
    out = [tmp_path / "proof.json", tmp_path / "public.json"]

    def prove(*extra):
        return snarkd("prove", "--addr", setup.addr, "--key", "chain", *extra, wtns, *out)

    r = prove("--deadline", "@1")  # long past
    assert r.returncode == 6 and "already passed" in r.stderr, r.stderr
    r = prove("--deadline", "0.3")  # no service time measured yet: admitted, then stopped at its deadline
    assert r.returncode == 6 and "expired" in r.stderr and "DEADLINE" not in r.stderr, r.stderr
    r = prove("--deadline", "600")
    assert r.returncode == 0, r.stderr
    assert oracle.snarkjs_verify(circ.vk, out[1], out[0])
    r = prove("--deadline", "0.01")  # the estimate (about a second per proof) misses it
    assert r.returncode == 6 and "estimated" in r.stderr and "'chain'" in r.stderr, r.stderr
    r = prove("--deadline", "soon")
    assert r.returncode == 3 and "deadline" in r.stderr

    r = snarkd("jobs", "list", "--addr", setup.addr, "--json")
    assert r.returncode == 0, r.stderr
    jobs = json.loads(r.stdout)
    assert [j["state"] for j in jobs] == ["COMPLETED", "EXPIRED"]  # newest first; refused ones never were jobs
    assert all(j["deadline_unix"] > 0 and j["key_id"] == "chain" for j in jobs)
    r = snarkd("jobs", "list", "--addr", setup.addr, "--state", "expired")
    assert r.returncode == 0 and r.stdout.count("EXPIRED") == 1 and "COMPLETED" not in r.stdout, r.stdout
    r = snarkd("status", "--config", cfg)
    assert r.returncode == 0, r.stderr
    assert "1 completed" in r.stdout and "1 expired" in r.stdout and "deadlines: backlog" in r.stdout
    assert "chain " in r.stdout.split("deadlines:")[1]
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0 and wait_gone(pid), r.stderr
