"""msm_w_beside (parallel.hpp BesideTasks): a proof's four witness MSMs started at once on a helper thread at
idle priority while the caller computes something else, the rest taken by the caller at finish(). Each sum must
equal the naive sum of native scalar multiplications, whichever thread ran it and whatever the caller did
meanwhile; a batch dropped unfinished (the stage failed) must not hang or leak its inputs."""
import gc
import mmap
import os
import threading
import time

import numpy as np
import pytest

from snarkd.native import _core
from test_msm import path  # noqa: F401  (autouse: every case on the IFMA and the scalar path)
from test_witness_cache import Proof, _witness, enc_many

ORDER = (("b2", True), ("a", False), ("c", False), ("b1", False))  # prover/cpu.py's order: B2 first


def _enc(w):
    return enc_many([s % (1 << 256) for s in w], 4)


def _jobs(p):
    return [(p.b2 if g2 else p.g1[k], p.start if k == "c" else 0, g2) for k, g2 in ORDER]


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "caller-busy"])
def test_sums_equal_naive_sums(curve, busy):
    p = Proof(curve, 500, 4)
    w = _witness(curve, p.n)
    want = p.want(w)
    run = curve.mod.msm_w_beside(_jobs(p), _enc(w))
    if busy:  # the caller's own regions meanwhile (as the QAP step and the H MSM): both threads compute
        other = p.run(_enc(_witness(curve, p.n)), threads=2, order=("a", "b1"))
        assert set(other) == {"a", "b1"}
    sums, ms, on_helper = run.finish()
    assert len(sums) == len(ms) == 4 and 0 <= on_helper <= 4 and all(t >= 0 for t in ms)
    for (k, _), got in zip(ORDER, sums):
        assert np.array_equal(np.frombuffer(got, dtype=np.uint64), want[k]), k
    assert run.finish()[0] == sums  # finished once: the same sums again


def test_the_helper_runs_at_idle_priority_and_is_lifted(curve):
    """On Linux the helper asks for SCHED_IDLE (a core no other thread wants); finish() lifts it back."""
    if not hasattr(os, "SCHED_IDLE") or not os.path.isdir("/proc/self/task"):
        pytest.skip("no SCHED_IDLE here")
    p = Proof(curve, 20000, 2)
    w = _witness(curve, p.n)
    run = curve.mod.msm_w_beside(_jobs(p), _enc(w))
    seen, deadline = set(), time.monotonic() + 5.0
    while os.SCHED_IDLE not in seen and time.monotonic() < deadline:
        for tid in os.listdir("/proc/self/task"):
            try:
                seen.add(os.sched_getscheduler(int(tid)))
            except OSError:
                pass  # a thread that ended meanwhile
    sums, ms, on_helper = run.finish()
    assert os.SCHED_IDLE in seen and on_helper >= 1
    assert len(sums) == 4


def test_dropped_unfinished_and_bad_input(curve):
    p = Proof(curve, 400, 3)
    w = _enc(_witness(curve, p.n))
    for _ in range(3):
        run = curve.mod.msm_w_beside(_jobs(p), w)
        del run  # the stage failed before finish: the running task ends, the rest are never started
        gc.collect()
    with pytest.raises(ValueError, match="witness values"):
        curve.mod.msm_w_beside([(p.g1["a"], p.n, False)], w)
    with pytest.raises(ValueError, match="tuples"):
        curve.mod.msm_w_beside([(p.g1["a"], 0)], w)
    sums, ms, on_helper = curve.mod.msm_w_beside([], w).finish()
    assert sums == [] and ms == [] and on_helper == 0


def test_drop_gives_back_a_file_mappings_pages_and_the_sums_stay(curve, tmp_path):
    """drop=True (a one-shot key's sections): each job's bases are a read-only file mapping whose pages its task
    releases when its sum is done; the sums are the naive ones and the mapping reads the same bytes after."""
    p = Proof(curve, 400, 3)
    w = _witness(curve, p.n)
    want = p.want(w)
    blobs = [np.ascontiguousarray(b).tobytes() for b, _, _ in _jobs(p)]
    path = tmp_path / "bases.bin"
    path.write_bytes(b"".join(blobs))
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view, jobs, at = memoryview(mm), [], 0
        for blob, (_, start, g2) in zip(blobs, _jobs(p)):
            jobs.append((view[at:at + len(blob)], start, g2))
            at += len(blob)
        sums = curve.mod.msm_w_beside(jobs, _enc(w), drop=True).finish()[0]
        for (k, _), got in zip(ORDER, sums):
            assert np.array_equal(np.frombuffer(got, dtype=np.uint64), want[k]), k
        assert bytes(view) == b"".join(blobs)  # read again from the page cache
        del view, jobs


def test_path_switches_flipped_while_a_batch_runs_and_finishes(curve):
    """A switch waits for the running calls and keeps new ones out. The batch holds the gate from its start to its
    end, its tasks never wait for it: a task waiting for a switch that waits for the caller (finish() joining the
    helper, or a proof's hold_paths around the stage) would deadlock."""
    p = Proof(curve, 300, 2)
    w = _witness(curve, p.n)
    want = p.want(w)
    before = _core.uses_adx()
    stop, flips, done = threading.Event(), [], []

    def flipper():
        i = 0
        while not stop.is_set():
            i += 1
            flips.append(_core._set_adx(i % 2 == 0))

    def batch():
        sums = curve.mod.msm_w_beside(_jobs(p), _enc(w)).finish()[0]
        done.append(all(np.array_equal(np.frombuffer(got, dtype=np.uint64), want[k])
                        for (k, _), got in zip(ORDER, sums)))

    def batches():
        for i in range(8):
            if i % 2:
                batch()
            else:  # inside a proof's hold (prover/groth16.py _one_path): a waiting switch waits for it
                with curve.mod.hold_paths():
                    batch()

    f, b = threading.Thread(target=flipper), threading.Thread(target=batches, daemon=True)
    f.start()
    b.start()
    b.join(120)
    stop.set()
    f.join()
    _core._set_adx(before)
    assert not b.is_alive(), "finish() waited for the helper while holding the path gate"
    assert done == [True] * 8 and flips


def _with_bad_coordinate(base, points, point, coord, coords):
    """a copy of a point section with one coordinate made all ones (not below q)"""
    raw = bytearray(np.ascontiguousarray(base).tobytes())
    size = len(raw) // points // coords
    at = (point * coords + coord) * size
    raw[at:at + size] = b"\xff" * size
    return bytes(raw)


def test_the_sections_checks_run_in_their_tasks(curve):
    """check=[...]: each flagged job's points are checked in its own task before its sum (first_noncanonical_point's
    verdict, per job, from checks()); a job that fails is not summed, the others are, and an unflagged job is not
    checked"""
    p = Proof(curve, 300, 4)
    w = _witness(curve, p.n)
    want = p.want(w)
    jobs = _jobs(p)
    b2, _, _ = jobs[0]
    bad_b2 = _with_bad_coordinate(b2, p.n, 17, 3, 4)
    bad_c = _with_bad_coordinate(jobs[2][0], p.n - p.start, 5, 1, 2)
    assert curve.mod.first_noncanonical_point(bad_b2, True) == (17, 3)
    jobs[0] = (bad_b2, 0, True)
    jobs[2] = (bad_c, p.start, False)
    run = curve.mod.msm_w_beside(jobs, _enc(w), check=[True, True, False, True])
    with pytest.raises(ValueError):
        run.checks()  # not before finish: the tasks write them
    sums, _, _ = run.finish()
    assert run.checks() == [(17, 3), None, None, None]  # C unflagged: not checked, summed over its bad point
    assert sums[0] == b""
    for (k, _), got in zip(ORDER[1:], sums[1:]):
        if k != "c":
            assert np.array_equal(np.frombuffer(got, dtype=np.uint64), want[k]), k
    assert len(sums[2]) == len(sums[1])
    run = curve.mod.msm_w_beside(jobs, _enc(w), check=[False, True, True, True])
    sums, _, _ = run.finish()
    assert run.checks() == [None, None, (5, 1), None] and sums[2] == b"" and len(sums[0]) > 0
    with pytest.raises(ValueError):
        curve.mod.msm_w_beside(jobs, _enc(w), check=[True])  # one flag per job
