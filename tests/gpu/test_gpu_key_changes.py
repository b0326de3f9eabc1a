"""A key file changed under a loaded key on a GPU engine: the host reads of the truncated mapping (the key's upload
to the device goes through the CUDA driver's copy from pageable memory) are caught by the SIGBUS guard; the jobs
that held the key fail naming the file, another key's jobs complete, and the key reloads (tests/key_change.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from gpu_helpers import require_gpu

require_gpu()

from key_change import check_key_change, run_key_change  # noqa: E402


@pytest.fixture
def setup(tmp_path):
    made = run_key_change(tmp_path, devices=(0,))
    yield made
    eng = made[0]
    eng.stop(0)
    assert eng.join_workers(10)
    eng.keys.close_all()


def test_a_key_rewritten_under_gpu_jobs_fails_them_alone_then_reloads(setup):
    eng = setup[0]
    assert [d.name for d in eng.devices] == ["cuda:0"]
    check_key_change(*setup)


def test_a_key_resident_on_the_gpu_then_truncated(setup):
    """The key's bases are on the device already (one proof first); the file is truncated: the next jobs fail
    naming it (what they read on the host cannot be trusted), the engine lives on, the restored key proves."""
    eng, key, chain, *_ = setup
    first = eng.submit("chain", chain.wtns.read_bytes())
    assert first.done.wait(120) and first.state == "COMPLETED", first.error
    jobs = [eng.submit("chain", chain.wtns.read_bytes()) for _ in range(2)]
    os.truncate(key, 100)
    for j in jobs:
        assert j.done.wait(120) and j.state == "FAILED" and j.error_kind == "key" and str(key) in j.error
    shutil.copyfile(chain.zkey, key)
    again = eng.submit("chain", chain.wtns.read_bytes())
    assert again.done.wait(120) and again.state == "COMPLETED", again.error
