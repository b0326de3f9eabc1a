"""snarkd.atomic.atomic_open: a reader sees the old file or the whole new one; a failure leaves the old file and no
temporary behind; the new file gets the mode a plain open() gives; fsync only when durable. (A class since round 21:
contextlib stays out of `snarkd witness`'s imports.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from snarkd import atomic
from snarkd.atomic import atomic_open, atomic_write_bytes


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_clean_exit_replaces_the_file_with_a_plain_opens_mode(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    umask = os.umask(0o027)
    try:
        with atomic_open(target, "wb") as fh:
            fh.write(b"new ")
            fh.write(b"contents")
            assert target.read_bytes() == b"old"  # not replaced before the block ends
            assert len(leftovers(tmp_path)) == 1
    finally:
        os.umask(umask)
    assert target.read_bytes() == b"new contents"
    assert target.stat().st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


def test_an_exception_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(KeyError, match="boom"):
        with atomic_open(target, "w") as fh:
            fh.write("half")
            raise KeyError("boom")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []
    # and a file that did not exist is not created
    with pytest.raises(RuntimeError):
        with atomic_open(tmp_path / "never.txt", "w") as fh:
            fh.write("x")
            raise RuntimeError
    assert not (tmp_path / "never.txt").exists() and leftovers(tmp_path) == []


def test_fsync_only_when_durable(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    atomic_write_bytes(tmp_path / "a", b"1", durable=False)
    assert synced == []
    atomic_write_bytes(tmp_path / "b", b"2")
    assert len(synced) == 1
    assert (tmp_path / "a").read_bytes() == b"1" and (tmp_path / "b").read_bytes() == b"2"


def test_a_failed_rename_removes_the_temporary(tmp_path):
    folder = tmp_path / "target-is-a-folder"
    folder.mkdir()
    (folder / "inside").write_text("x")  # a non-empty folder: os.replace of a file over it fails
    with pytest.raises(OSError):
        with atomic_open(folder, "wb") as fh:
            fh.write(b"data")
    assert (folder / "inside").read_text() == "x"
    assert leftovers(tmp_path) == []


def test_a_bad_mode_closes_and_removes_the_temporary(tmp_path):
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with pytest.raises(ValueError):
        with atomic_open(tmp_path / "x", "not-a-mode"):
            pass
    assert leftovers(tmp_path) == []
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


def test_snarkd_witness_imports_no_contextlib():
    """The one-shot witness path's imports (the modules `snarkd witness` loads, its step bar under --quiet) leave
    contextlib, functools, collections and prover.progress out, as measured in round 21."""
    code = ("import sys\nimport snarkd.cli.witness, snarkd.formats.wtns, snarkd.witness, snarkd.witness.native, "
            "snarkd.witness.program_file, snarkd.formats.file_trust\n"
            "from snarkd.cli.witness import _progress, quick_args\n"
            "with _progress(quick_args(['c.wasm', 'i.json', 'o.wtns', '--quiet']), 3) as bar:\n"
            "    with bar.step('compile'):\n"
            "        pass\n"
            "print(sorted(m for m in ('contextlib', 'functools', 'collections', 'snarkd.prover.progress') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "[]"
