"""A key file changed under a loaded key (rewritten or truncated in place): the jobs that held it fail with
kind "key" and an error naming the file, never a proof; new jobs wait for those to end; then the key is
dropped and reloaded from its path (refused while the file is not a valid key). In process, on the CPU
(tests/gpu/test_gpu_key_changes.py runs the same on a GPU)."""

from __future__ import annotations

import os

import pytest

from key_change import check_key_change, run_key_change
from snarkd.engine import COMPLETED


@pytest.fixture
def setup(tmp_path):
    made = run_key_change(tmp_path)
    yield made
    eng = made[0]
    eng.stop(0)
    assert eng.join_workers(10)
    eng.keys.close_all()


def test_a_key_rewritten_under_running_jobs_fails_them_alone_then_reloads(setup):
    check_key_change(*setup)


def test_an_untouched_key_is_never_spoiled(setup):
    eng, key, chain, *_ = setup
    os.rename(key, key.with_suffix(".moved"))  # mv: the mapped file is intact (its path names nothing now)
    job = eng.submit("chain", chain.wtns.read_bytes())
    assert job.done.wait(60) and job.state == COMPLETED and eng.keys.get("chain").reloads == 0


def test_without_node_or_cached_fixtures_the_gpu_variant_skips_with_the_reason(tmp_path, monkeypatch):
    """tests/gpu/test_gpu_key_changes.py on a GPU machine without Node.js (issue 33, finding 8): it errored;
    now cases_or_skip skips, naming the fixture cache and Node.js. Simulated: no `node` on PATH, an empty
    fixture cache, nothing built in this process yet."""
    import cases
    import oracle
    from key_change import cases_or_skip

    monkeypatch.setattr(oracle, "CACHE", tmp_path / "empty-cache")
    monkeypatch.setattr(cases, "_cache", {})
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(pytest.skip.Exception, match=r"fixture cache .*empty-cache.* Node\.js"):
        cases_or_skip()
