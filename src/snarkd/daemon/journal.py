"""Jobs that survive a crash: an SQLite journal (WAL) of accepted jobs and a spool of their requests.

    claim    before the engine sees a job: its id is free here and the spool has room (else
             ALREADY_EXISTS / RESOURCE_EXHAUSTED, and the engine never sees it). The engine then
             starts on it while the journal writes it down (a 2^20 witness's copy and the fsyncs
             take ~10 ms of the H200 host's j = 1 latency otherwise); an ending reported before
             `accept` commits is held back until it has (`release`).
    accept   right after: its request (the ProveRequest's bytes: inline
             witnesses or inputs, or its by-reference witnesses) is written to the spool directory
             beside the journal (fsync'd), and a row (id, key, client, priority, state QUEUED)
             is committed. Only then does the client get its job id or its result (a daemon that
             dies before has told nobody of the job). By-reference witnesses are
             kept (`keep`) as the daemon read them: a spool file nobody else has a name for is
             renamed in (no copy), anything else is written from the daemon's bytes (a client's
             hard link or a witness_dirs file can still change under its other names); the
             spooled request names these copies.
    finish   when the job ends: state, error and (COMPLETED) the ProveReply's bytes are
             committed and the spool file is removed. Done by a writer thread: the engine
             reports endings under its own lock, which must not wait for a disk.
    recover  at start: every row still QUEUED or RUNNING is submitted again from its spool
             file, under its own id (the daemon was killed, or stopped before it finished), with
             its deadline (spooled as an absolute time); one whose deadline passed meanwhile is
             recorded EXPIRED and never runs.
    lookup   Await / Cancel of a job the engine no longer holds read its row, ListJobs its rows;
             finished rows are deleted after [daemon] result_retention.

Locks and connections: the daemon's own bookkeeping (spool bytes, claims) under one lock that no disk
write is made under; writes on one connection (`_db_lock`); reads (claim's id check, look-ups, ListJobs,
status) on a second connection of their own, which in WAL mode sees every committed row without waiting for
a writer's fsync. Endings are committed in groups (one transaction and one fsync for whatever queued
meanwhile), and the WAL is checkpointed by a thread and a connection of their own, never inside a commit
that an admission or a result waits for.

Jobs cancelled by a shutdown's drain timeout are not recorded as cancelled: they stay
QUEUED and run after the next start. The spool is bounded by [daemon] spool_max (a job
that would pass it is refused with RESOURCE_EXHAUSTED). Durable against a killed
process (kill -9) and, with synchronous=FULL and fsync'd spool files, against power loss.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from snarkd.atomic import atomic_write_bytes
from snarkd.daemon.logsetup import private_file
from snarkd.engine import AlreadyExists, Busy
from snarkd.engine.errors import TooLarge
from snarkd.errors import DaemonError

log = logging.getLogger("snarkd")

PENDING = ("QUEUED", "RUNNING")
CHECKPOINT_EVERY = 1.0  # seconds between WAL checkpoints (the checkpoint thread's)
WRITE_GROUP = 512  # endings committed in one transaction at most (a flood still gets its results in steps)
SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    client TEXT NOT NULL,
    priority INTEGER NOT NULL,
    state TEXT NOT NULL,            -- QUEUED (accepted, not finished), COMPLETED, FAILED, CANCELLED, EXPIRED
    submitted REAL NOT NULL,        -- Unix time
    finished REAL,
    spool TEXT,                     -- the request's file in the spool directory (while unfinished)
    spool_bytes INTEGER NOT NULL DEFAULT 0,
    runs INTEGER NOT NULL DEFAULT 1,  -- 1 + times re-run after a restart
    error TEXT NOT NULL DEFAULT '',
    error_kind TEXT NOT NULL DEFAULT '',
    result BLOB,                    -- snarkd.v1.ProveReply bytes (COMPLETED)
    name TEXT NOT NULL DEFAULT '',  -- the id its client knows it by, when not `id` (per-token ids: service.py)
    lane TEXT NOT NULL DEFAULT ''   -- the lane it runs in ([scheduler.lanes]; also in its spooled request)
);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished);
"""


@dataclass
class Row:
    id: str
    key_id: str
    client: str
    priority: int
    state: str
    submitted: float
    finished: float | None
    spool: str | None
    runs: int
    error: str
    error_kind: str
    result: bytes | None
    name: str = ""  # the id its client knows it by ("" = id)
    lane: str = ""


def _write_new(path: Path, data) -> None:
    """A new file of the daemon's own (0600) holding `data` (not fsync'd: like the rename it stands for, it
    survives a killed process; after a power loss a re-run finds it short and fails the job, naming it)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _id_in_use(job_id: str) -> AlreadyExists:
    return AlreadyExists(f"job id {job_id!r} is already in use (a job with it is running or its result is kept for "
                         f"[daemon] result_retention)")


class Journal:
    def __init__(self, path: str, spool_max: int, retention: float):
        self.path = Path(path)
        self.spool_dir = self.path.with_name(self.path.name + ".spool")
        self.spool_max, self.retention = int(spool_max), float(retention)
        self.stopping = False  # set by the server before the drain: shutdown cancellations are not endings
        self._lock = threading.Lock()  # spool_used, _claimed: no disk is waited for under it
        self._db_lock = threading.Lock()  # the write connection (self.db)
        self._read_lock = threading.Lock()  # the read connection (self._reader)
        self._q: queue.Queue = queue.Queue()
        self._writer: threading.Thread | None = None
        self._checkpoints: threading.Thread | None = None
        self._closing = threading.Event()
        self._last_purge = 0.0
        self._cv = threading.Condition()
        self._recorded: OrderedDict[str, None] = OrderedDict()  # job ids whose ending is committed (recent ones)
        self._claimed: dict[str, tuple | None] = {}  # claimed, not yet accepted: id -> an ending held back, or None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.spool_dir.mkdir(mode=0o700, exist_ok=True)
            # private before SQLite opens it: it makes -wal and -shm with the database's mode, and all three
            # hold client names, errors and results
            for f in (self.path, *(self.path.with_name(self.path.name + x) for x in ("-wal", "-shm"))):
                if f == self.path or f.exists():
                    private_file(f)
            self.db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: a thread of their own (_checkpoint_loop)
            self.db.executescript(SCHEMA)
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(jobs)")}
            for col in ("name", "lane"):  # a journal of before
                if col not in columns:
                    self.db.execute(f"ALTER TABLE jobs ADD COLUMN {col} TEXT NOT NULL DEFAULT ''")
            self._reader = self._connect()
            self._checkpointer = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise DaemonError(f"cannot open [daemon] journal {self.path}: {exc}") from None
        self.spool_used = self._one("SELECT COALESCE(SUM(spool_bytes), 0) FROM jobs WHERE state IN (?, ?)", PENDING)

    # ------------------------------------------------------------------ plumbing

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        db.execute("PRAGMA synchronous=FULL")
        return db

    def _one(self, sql: str, args=()):
        return self._read(sql, args)[0][0]

    def _read(self, sql: str, args=()) -> list:
        """A query's rows, on the read connection: committed rows, with no wait for a write's fsync."""
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    def _checkpoint(self) -> None:
        """Copy the WAL into the database (PASSIVE: writers and readers go on meanwhile)."""
        try:
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:  # a later one catches up; the WAL keeps every commit meanwhile
            log.warning("journal: WAL checkpoint of %s failed: %s", self.path, exc)

    def _checkpoint_loop(self) -> None:
        """A checkpoint a second, on a thread of its own: its fsyncs delay neither a commit nor the endings' writer
        (on the writer, a result waited ~40 ms behind one under bulk load)."""
        while not self._closing.wait(CHECKPOINT_EVERY):
            self._checkpoint()

    def start(self) -> None:
        self._writer = threading.Thread(target=self._write_loop, name="journal", daemon=True)
        self._writer.start()
        self._checkpoints = threading.Thread(target=self._checkpoint_loop, name="journal-checkpoints", daemon=True)
        self._checkpoints.start()

    def close(self) -> None:
        """Write what is queued, then close."""
        if self._writer is not None:
            self._q.put(None)
            self._writer.join(30)
            self._writer = None
        self._closing.set()
        if self._checkpoints is not None:
            self._checkpoints.join(30)
            self._checkpoints = None
        self._checkpoint()
        with self._db_lock, self._read_lock:
            for db in (self._checkpointer, self._reader, self.db):
                db.close()

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every finish() queued so far is committed (tests, shutdown)."""
        done = threading.Event()
        self._q.put(done)
        done.wait(timeout)

    def _spool_path(self, job_id: str) -> Path:
        return self.spool_dir / (hashlib.sha256(job_id.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".req")

    def keep(self, job_id: str, witnesses) -> list[str]:
        """Keep a job's by-reference witnesses beside its request: [(a spool file to rename in, or None; the
        bytes the daemon read)]. A file is renamed in when it is given (nobody else has a name for it: no copy),
        else the bytes are written (0600). Returns the kept paths; they count toward spool_max and leave with
        the request."""
        stem, attempt = self._spool_path(job_id).stem, secrets.token_hex(4)  # a retry of the id never clashes
        self._fits_at_all(sum(len(data) for _, data in witnesses), "witnesses")
        out: list[str] = []
        try:
            for i, (src, data) in enumerate(witnesses):
                dst = self.spool_dir / f"{stem}.{attempt}.w{i}"
                n = len(data)
                with self._lock:
                    if self.spool_used + n > self.spool_max:
                        raise self._spool_full(n)
                    self.spool_used += n
                out.append(str(dst))
                try:
                    if src is not None:
                        os.rename(src, dst)
                        continue
                except OSError:  # another file system: written below
                    pass
                _write_new(dst, data)
        except BaseException:
            self.discard(out)  # all or nothing
            raise
        return out

    def _fits_at_all(self, n: int, what: str) -> None:
        """A job whose own bytes pass spool_max could never be kept, whatever finishes: refused as too large (not
        Busy, which tells the client to retry). A 10-partition 2^24 job's witnesses are 5 GiB."""
        if n > self.spool_max:
            raise TooLarge(f"the job's {what}: {n} bytes, more than the journal's spool can ever keep "
                           f"([daemon] spool_max, {self.spool_max} bytes): raise spool_max, or send fewer partitions "
                           f"per job")

    def _spool_full(self, n: int) -> Busy:
        return Busy(f"the journal's spool is full: {self.spool_used + n} bytes would pass [daemon] spool_max "
                    f"({self.spool_max} bytes); retry when jobs finish")

    def discard(self, adopted: list[str]) -> None:
        """Adopted witnesses of a job that accept() refused (its id in use, the spool full)."""
        n = 0
        for f in map(Path, adopted):
            try:
                n += f.stat().st_size
                f.unlink()
            except FileNotFoundError:
                pass
        with self._lock:
            self.spool_used = max(0, self.spool_used - n)

    def adopted(self, path: str) -> bool:
        """Whether a witness path names a file this journal kept (read back at a re-run, not confined)."""
        return Path(path).parent == self.spool_dir

    # ------------------------------------------------------------------ accept

    def accept(self, job_id: str, key_id: str, client: str, priority: int, request: bytes, name: str = "",
               lane: str = "") -> None:
        """Spool the request and record the job as QUEUED (committed when this returns); name: the id its client
        knows it by, when not job_id."""
        n = len(request)
        self._fits_at_all(n, "request")
        if self._read("SELECT 1 FROM jobs WHERE id = ?", (job_id,)):
            raise _id_in_use(job_id)
        with self._lock:
            if self.spool_used + n > self.spool_max:
                raise self._spool_full(n)
            self.spool_used += n
        spool = self._spool_path(job_id)
        try:
            atomic_write_bytes(spool, request)
            with self._db_lock:  # the primary key refuses an id taken meanwhile (IntegrityError, below)
                self.db.execute("INSERT INTO jobs (id, key_id, client, priority, state, submitted, spool, spool_bytes, "
                                "name, lane) VALUES (?, ?, ?, ?, 'QUEUED', ?, ?, ?, ?, ?)",
                                (job_id, key_id, client, int(priority), time.time(), spool.name, n, name, lane))
        except sqlite3.IntegrityError:
            self._unspool(spool, n)
            raise AlreadyExists(f"job id {job_id!r} is already in use") from None
        except (OSError, sqlite3.Error) as exc:
            self._unspool(spool, n)
            raise DaemonError(f"cannot journal job {job_id!r} in {self.path}: {exc}") from None

    def _unspool(self, spool: Path, n: int) -> None:
        for f in [spool, *spool.parent.glob(spool.stem + ".*.w*")]:  # the request, and witnesses adopted with it
            try:
                n += f.stat().st_size if f != spool else 0
                f.unlink()
            except FileNotFoundError:
                pass
        with self._lock:
            self.spool_used = max(0, self.spool_used - n)

    # ------------------------------------------------------------------ finish (writer thread)

    def finish(self, job_id: str, state: str, error: str, error_kind: str, result) -> None:
        """Queue a job's ending; result: a callable giving the ProveReply bytes (run in the writer). The ending
        of a job claimed and not yet accepted waits for release()."""
        item = (job_id, state, error, error_kind, result)
        with self._lock:
            if job_id in self._claimed:
                self._claimed[job_id] = item
                return
        self._q.put(item)

    def claim(self, job_id: str, nbytes: int) -> None:
        """Before the engine has the job: AlreadyExists when a journaled job (or one being journaled) has its id,
        Busy when about nbytes more would pass spool_max. accept() follows, then release()."""
        with self._lock:
            if job_id in self._claimed:
                raise _id_in_use(job_id)
            if self.spool_used + nbytes > self.spool_max:
                raise self._spool_full(nbytes)
            self._claimed[job_id] = None  # held while the rows are read: a second claim of the id sees it
        try:
            taken = bool(self._read("SELECT 1 FROM jobs WHERE id = ?", (job_id,)))
        except sqlite3.Error as exc:
            self._unclaim(job_id)
            raise DaemonError(f"cannot read [daemon] journal {self.path}: {exc}") from None
        if taken:
            self._unclaim(job_id)
            raise _id_in_use(job_id)

    def _unclaim(self, job_id: str) -> None:
        with self._lock:
            self._claimed.pop(job_id, None)

    def release(self, job_id: str, accepted: bool) -> None:
        """The claim ends: with the job accepted, an ending held back meanwhile is queued now; without (accept
        failed, or the engine refused the job), nothing of it is recorded and nobody waits for it."""
        with self._lock:
            held = self._claimed.pop(job_id, None)
        if held is not None and accepted:
            self._q.put(held)
        elif held is not None:
            self._mark_recorded(job_id)

    def _mark_recorded(self, *job_ids: str) -> None:
        with self._cv:
            for job_id in job_ids:
                self._recorded[job_id] = None
            while len(self._recorded) > 8192:
                self._recorded.popitem(last=False)
            self._cv.notify_all()

    def _write_loop(self) -> None:
        """Endings in groups: whatever queued while the last group was committed goes in one transaction (one
        fsync), in the order queued; a flush marker or the stop marker waits for the endings before it."""
        while True:
            group = [self._q.get()]
            while len(group) < WRITE_GROUP:
                try:
                    group.append(self._q.get_nowait())
                except queue.Empty:
                    break
            endings: list = []
            for item in group:
                if item is not None and not isinstance(item, threading.Event):
                    endings.append(item)
                    continue
                self._write_endings(endings)
                endings = []
                if item is None:
                    return
                item.set()
            self._write_endings(endings)
            if time.monotonic() - self._last_purge > 60:
                self.purge()

    def _write_endings(self, endings: list) -> None:
        """Each ending's reply made once (one that cannot be made is logged and left unrecorded: the job runs again
        after a restart), then the group committed; where the group fails, each alone, so that one bad ending does
        not lose the others. Every waiter is told either way."""
        if not endings:
            return
        rows = []
        for job_id, state, error, error_kind, result in endings:
            try:
                rows.append((job_id, state, error, error_kind, result() if result is not None else None))
            except Exception:  # noqa: BLE001 - the journal must never take the daemon down
                log.exception("journal: cannot record the end of job %s", job_id)
        try:
            spools = self._record_ends(rows)
        except Exception:  # noqa: BLE001 - as above
            spools = []
            for row in rows:
                try:
                    spools += self._record_ends([row])
                except Exception:  # noqa: BLE001 - as above
                    log.exception("journal: cannot record the end of job %s", row[0])
        self._mark_recorded(*(item[0] for item in endings))
        for spool in spools:  # after the waiters are told: freeing a 32 MiB witness's pages takes ~1-2 ms
            self._unspool(*spool)

    def wait_recorded(self, job_id: str, timeout: float = 30.0) -> bool:
        """Wait until the job's ending is committed: a result goes to a client only once it is durable
        (else a crash right after could run the job again and give it a second, different proof)."""
        with self._cv:
            return self._cv.wait_for(lambda: job_id in self._recorded, timeout)

    def _record_ends(self, rows: list) -> list[tuple[Path, int]]:
        """Commit jobs' endings [(id, state, error, error_kind, the reply's bytes or None)] in one transaction;
        returns their spools (request file, bytes) for the caller to remove. Once committed the spool files are no
        row's: a crash before they go leaves orphans() to remove. An ending of a job not journaled (the journal was
        off for it) or already ended changes nothing."""
        spools = []
        with self._db_lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for job_id, state, error, error_kind, blob in rows:
                    row = self.db.execute("SELECT spool, spool_bytes FROM jobs WHERE id = ? AND state IN (?, ?)",
                                          (job_id, *PENDING)).fetchone()
                    if row is None:
                        continue
                    self.db.execute("UPDATE jobs SET state = ?, finished = ?, error = ?, error_kind = ?, result = ?, "
                                    "spool = NULL, spool_bytes = 0 WHERE id = ?",
                                    (state, time.time(), error, error_kind, blob, job_id))
                    if row[0]:
                        spools.append((self.spool_dir / row[0], row[1]))
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # a COMMIT that failed may have ended it already
                    self.db.execute("ROLLBACK")
                raise
        return spools

    def _finish(self, job_id, state, error, error_kind) -> None:
        """An ending with no reply, committed at once on the caller's thread (recovery at start)."""
        for spool in self._record_ends([(job_id, state, error, error_kind, None)]):
            self._unspool(*spool)

    def purge(self, now: float | None = None) -> int:
        """Delete finished rows older than result_retention."""
        self._last_purge = time.monotonic()
        cutoff = (time.time() if now is None else now) - self.retention
        with self._db_lock:
            n = self.db.execute("DELETE FROM jobs WHERE finished IS NOT NULL AND finished < ?", (cutoff,)).rowcount
        if n:
            log.info("journal: %d finished job(s) older than result_retention (%gs) deleted", n, self.retention)
        return n

    # ------------------------------------------------------------------ lookup and recovery

    def _row(self, r) -> Row:
        return Row(*r)

    def lookup(self, job_id: str) -> Row | None:
        rs = self._read("SELECT id, key_id, client, priority, state, submitted, finished, spool, runs, error, "
                        "error_kind, result, name, lane FROM jobs WHERE id = ?", (job_id,))
        return self._row(rs[0]) if rs else None

    def named(self, name: str) -> list[Row]:
        """Rows of jobs whose client knows them as `name` (an admin's look-up across tokens)."""
        rs = self._read("SELECT id, key_id, client, priority, state, submitted, finished, spool, runs, error, "
                        "error_kind, result, name, lane FROM jobs WHERE name = ? OR (name = '' AND id = ?)", (name, name))
        return [self._row(r) for r in rs]

    def unfinished(self) -> list[Row]:
        rs = self._read("SELECT id, key_id, client, priority, state, submitted, finished, spool, runs, error, "
                        "error_kind, result, name, lane FROM jobs WHERE state IN (?, ?) ORDER BY submitted", PENDING)
        return [self._row(r) for r in rs]

    def request_bytes(self, row: Row) -> bytes:
        """The spooled request of an unfinished job (OSError when it is gone)."""
        if not row.spool:
            raise FileNotFoundError(f"job {row.id} has no spool file")
        return (self.spool_dir / row.spool).read_bytes()

    def rerun(self, job_id: str) -> None:
        with self._db_lock:
            self.db.execute("UPDATE jobs SET runs = runs + 1 WHERE id = ?", (job_id,))

    def rows(self, client: str | None, key_id: str = "", states=(), limit: int = 0, lane: str = "") -> list[Row]:
        """Rows for ListJobs, newest first: of `client` (None: anyone's), of key_id ("": any), in one of
        `states` (none: any), of `lane` ("": any), at most `limit` (0: all). Without their results."""
        sql, args = ("SELECT id, key_id, client, priority, state, submitted, finished, spool, runs, error, "
                     "error_kind, NULL, name, lane FROM jobs WHERE 1"), []
        if client is not None:
            sql, args = sql + " AND client = ?", args + [client]
        if key_id:
            sql, args = sql + " AND key_id = ?", args + [key_id]
        if lane:
            sql, args = sql + " AND lane = ?", args + [lane]
        if states:
            sql, args = sql + f" AND state IN ({', '.join('?' * len(states))})", args + list(states)
        sql += " ORDER BY submitted DESC" + (" LIMIT ?" if limit else "")
        rs = self._read(sql, args + ([int(limit)] if limit else []))
        return [self._row(r) for r in rs]

    def expire_now(self, job_id: str, error: str) -> None:
        """A job whose deadline passed while the daemon was down: recorded EXPIRED, never run."""
        self._finish(job_id, "EXPIRED", error, "expired")

    def fail_now(self, job_id: str, error: str) -> None:
        """A job that cannot be re-run after a restart (its key is gone, its spool unreadable)."""
        self._finish(job_id, "FAILED", error, "input")

    def counts(self) -> dict:
        rows = self._read("SELECT state, COUNT(*) FROM jobs GROUP BY state")
        return {"path": str(self.path), "spool_bytes": self.spool_used, "spool_max": self.spool_max,
                "jobs": dict(rows)}

    def orphans(self) -> int:
        """Spool files no unfinished row names (a crash between write and commit): removed."""
        named = {Path(r[0]).stem for r in self._read("SELECT spool FROM jobs WHERE spool IS NOT NULL")}
        n = 0
        for f in self.spool_dir.iterdir():
            if f.name.split(".")[0] not in named:
                try:
                    f.unlink()
                    n += 1
                except OSError:
                    pass
        return n
