"""snarkd.ids: the one job-id format, shared by the daemon's service, its client and the engine's job table."""

from __future__ import annotations

import pytest

from snarkd.engine.jobtable import JobTable, no_such_job
from snarkd.errors import InputError
from snarkd.ids import MAX_ID, check_job_id, is_job_id, new_job_id

GOOD = ["a", "0", "job-1", "tenant_7.job:0001", "x" * MAX_ID, "0123456789abcdef01234567"]
BAD = ["", "-lead", ".hidden", "../etc/passwd", "a/b", "a b", "a\nb", "a\rb", "nul\0", "tab\t", "ünï", "x" * (MAX_ID + 1),
       "semi;colon", "q'uote", "a\u2028b"]


@pytest.mark.parametrize("text", GOOD)
def test_well_formed_job_ids(text):
    assert is_job_id(text) and check_job_id(text) == text and is_job_id(new_job_id())


@pytest.mark.parametrize("text", BAD)
def test_malformed_job_ids_are_refused_without_being_echoed(text):
    assert not is_job_id(text)
    with pytest.raises(InputError) as e:
        check_job_id(text)
    assert "letters, digits and _ . : -" in str(e.value)
    assert not text or text not in str(e.value)
    assert "\n" not in str(no_such_job(text)) and "\0" not in str(no_such_job(text))


def test_the_job_table_and_the_client_hold_to_it():
    from snarkd.daemon.client import Client

    table = JobTable(keys=None, notify=lambda *a: None)
    with pytest.raises(InputError, match="job id"):
        table.new_job(lk=None, job_id="a\nFAKE")
    assert is_job_id(table.new_job(lk=None).id) and table.new_job(lk=None, job_id="mine.1").id == "mine.1"
    with Client("127.0.0.1:1", timeout=1) as c:  # refused before anything is sent (nothing listens there)
        with pytest.raises(InputError, match="job id"):
            c.submit("k", b"w", job_id="../x")
        with pytest.raises(InputError, match="job id"):
            c.prove("k", b"w", job_id="a b")
