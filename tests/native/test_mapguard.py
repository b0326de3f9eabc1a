"""native._mapguard: a file truncated under its mapping reads as zeros (counted, reported by changed()) instead of
killing the process with SIGBUS, for every reader (numpy, the native core, threads); a SIGBUS anywhere else is
still fatal; the guard's slots come back when mappings go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np

from snarkd.native import _mapguard, _scan

PAGE = os.sysconf("SC_PAGESIZE")


def _mapped(path, data: bytes) -> _mapguard.Mapping:
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return _mapguard.Mapping(fd)
    finally:
        os.close(fd)


def test_reads_past_a_truncated_end_return_zeros_and_are_reported(tmp_path):
    f = tmp_path / "f.bin"
    m = _mapped(f, b"\x01" * (10 * PAGE))
    view = np.frombuffer(m, dtype=np.uint8)
    assert m.guarded and m.changed() == "" and int(view.sum()) == 10 * PAGE and not view.flags.writeable
    os.truncate(f, PAGE + 100)
    assert int(view.sum()) == PAGE + 100  # what is left of the file; from the faulting page on, zeros
    assert m.faults() == 1
    assert m.changed().startswith(f"truncated from {10 * PAGE} to {PAGE + 100} bytes") and "SIGBUS caught" in m.changed()


def test_the_native_core_and_threads_read_a_truncated_mapping_safely(tmp_path):
    f = tmp_path / "values.bin"
    m = _mapped(f, b"\x05" * (64 * PAGE))
    values = np.frombuffer(m, dtype="<u8").reshape(-1, 4)
    os.truncate(f, 3 * PAGE)
    sums = []
    threads = [threading.Thread(target=lambda: sums.append(int(values[:, 0].sum()))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _scan.first_not_below(values, (1).to_bytes(32, "little"), 4, 2) == 0  # native, the GIL released
    assert len(set(sums)) == 1 and m.faults() >= 1


def test_rewrites_and_resizes_are_reported(tmp_path):
    f = tmp_path / "k.zkey"
    m = _mapped(f, b"a" * 5000)
    os.utime(f, ns=(1, 1))
    assert m.changed() == "rewritten in place (same size, new modification time)"
    with open(f, "ab") as fh:
        fh.write(b"b")
    assert m.changed() == "size changed from 5000 to 5001 bytes"
    g = tmp_path / "g"
    m2 = _mapped(g, b"x" * 100)
    os.rename(tmp_path / "k.zkey", tmp_path / "moved")  # a rename (mv over it) leaves the mapped file intact
    assert m2.changed() == ""


def test_slots_are_reused_when_mappings_go(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"z" * 10)
    for _ in range(20000):  # more than the table holds at once
        fd = os.open(f, os.O_RDONLY)
        m = _mapguard.Mapping(fd)
        os.close(fd)
        assert m.guarded
        del m


def test_a_sigbus_outside_guarded_mappings_is_still_fatal(tmp_path):
    program = textwrap.dedent(f"""
        import mmap, os
        from snarkd.native import _mapguard
        p = {str(tmp_path / "plain")!r}
        open(p, "wb").write(b"q" * 3 * {PAGE})
        fd = os.open(p, os.O_RDONLY)
        guarded = _mapguard.Mapping(fd)          # installs the handler
        plain = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        os.truncate(p, 10)
        print(sum(memoryview(guarded)), flush=True)  # repaired
        print(plain[2 * {PAGE}], flush=True)         # not ours: SIGBUS kills the process as before
        """)
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGBUS, (r.returncode, r.stdout, r.stderr)
    assert r.stdout.split() == [str(ord("q") * 10)]
