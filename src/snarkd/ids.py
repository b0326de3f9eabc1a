"""The one format of the ids clients choose: job ids (and key ids, which the config also names).

An id travels into log lines, journal rows, metric labels and error messages, so it keeps to characters
that cannot break any of them: ASCII letters and digits, and _ . : - (no "/" or "..", no spaces, no
control characters that could forge a log line or make the log binary), starting with a letter or digit,
MAX_ID characters at most. The daemon's service, its client and the engine's job table all check job
ids with `check_job_id`; ids the daemon makes itself (`new_job_id`) keep to the same format.
"""

from __future__ import annotations

import re
import uuid

from snarkd.errors import InputError

MAX_ID = 128
JOB_ID_RULE = f"letters, digits and _ . : - only, starting with a letter or digit, {MAX_ID} characters at most"
JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
KEY_ID = re.compile(r"[A-Za-z0-9_.:-]+")  # what [keys.preload] has always accepted
KEY_ID_RULE = f"letters, digits and _ . : - only, {MAX_ID} characters at most"


def is_job_id(text) -> bool:
    return isinstance(text, str) and len(text) <= MAX_ID and JOB_ID.fullmatch(text) is not None


def check_job_id(text: str) -> str:
    """`text` when it is a well-formed job id; else InputError naming the rule (never echoing the text:
    it may be a forged log line)."""
    if not is_job_id(text):
        given = f"; the one given ({len(text)} characters) does not" if isinstance(text, str) else ""
        raise InputError(f"a job id may use {JOB_ID_RULE}{given}")
    return text


def is_key_id(text) -> bool:
    return isinstance(text, str) and len(text) <= MAX_ID and KEY_ID.fullmatch(text) is not None


def new_job_id() -> str:
    """A fresh job id (24 hex digits: random enough that ids never collide across restarts)."""
    return uuid.uuid4().hex[:24]
