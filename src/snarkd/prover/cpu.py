"""The CPU backend: the device stage on the native core (snarkd.native), all cores by default."""

from __future__ import annotations

import contextlib
import time

from snarkd.prover.qap import sparse_products
from snarkd.prover.types import G1Sums, Synthesized


class CpuBackend:
    name = "cpu"
    spmv_on_device = False  # synthesis computes A·w, B·w on the CPU (the device stage does them if it did not)
    g2_on_device = False  # on the CPU the G2 MSM is left to finalize, off the device worker
    max_concurrent = 1  # one device stage at a time: each uses every core
    gpu = None  # no GPU: aggregation on this backend's machine runs its Miller loops on the CPU
    urgent_share = 0.0  # host memory: the engine's budget and lane shares bound it

    def __repr__(self) -> str:
        return "CpuBackend()"

    def pin(self) -> None:
        pass

    def with_urgent_share(self, share: float) -> "CpuBackend":
        return self  # host memory: the engine's budget and lane shares bound it, not a device plan

    def release(self, key) -> None:
        pass

    def residency(self, key) -> None:
        return None  # nothing of a key lives here beyond the host's map

    def make_resident(self, key, timer=None) -> bool:
        return False

    def work_bytes(self, key) -> int:
        return 0  # host memory: counted by the engine's budget

    def kernel_seconds(self) -> None:
        return None  # no separate device clock: its device stage is all native CPU work

    def host_spmv(self, key) -> bool:
        return True

    def batch_limit(self, key) -> int:
        return 1

    def urgent(self):
        return contextlib.nullcontext()  # one device stage at a time on the cores: nothing to put first

    def preempt_blocker(self, key) -> str:
        return ""  # host memory: a stage's was reserved in the engine's budget when its partition was admitted

    def device_stage_batch(self, key, synths: list, timers: list, threads: int = 0, with_g2: bool = False,
                           yield_point=None) -> list:
        return [self.device_stage(key, s, t, threads, with_g2, yield_point) for s, t in zip(synths, timers)]

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False,
                     yield_point=None) -> G1Sums:
        """yield_point: called before each MSM (the engine's preemption boundary: engine/preempt.py), or None.
        key: any SectionKey (snarkd.prover.types): each section checked before its first use and done with
        after its last (a one-shot key's pages released), the sums bytes: no numpy.
        Without a yield point, on 2 to BESIDE_MAX_THREADS threads and for a witness of few values other than 0
        and 1 (_few_full_values), the witness MSMs (B2's too) run beside the rest (WitnessSums: a one-shot
        key's head_start if it has one); otherwise
        after the H MSM, each on all threads, a yield point before each."""
        pause = yield_point or (lambda: 0.0)
        native, w = key.native, synth.witness
        # a one-shot proof's, started before its modules were imported (head_start), for this witness
        beside = getattr(key, "head_start", None)
        if beside is not None:
            key.head_start = None
            if beside.w is not w or yield_point is not None:
                beside.stop()  # not this stage's: run as without one
                beside = None
        if (beside is None and yield_point is None and self.overlap
                and 1 < (threads or native_threads()) <= BESIDE_MAX_THREADS and _few_full_values(w, key.domain_size)):
            beside = WitnessSums.for_key(key, w)
        try:
            a, b = synth.a, synth.b
            synth.a = synth.b = None
            if a is None:  # synthesized without the sparse products
                with timer.phase("spmv"):
                    a, b = sparse_products(key, w, threads)
            with timer.phase("ntt"):  # the H values (prover/qap.py); a key read once gives a, b back as soon as read
                h, h_ms = native.qap_h(a, b, threads, release=key.read_once)
            timer.split("ntt", "h", h_ms)  # qap_h's last step, the H values, is a phase of its own
            del a, b
            pause()
            with timer.phase("msm_h"):
                key.use("h")
                sum_h = native.msm_h(key.section("h"), h, threads)
                key.done("h")
            del h
            if beside is not None:
                return beside.finish(key, timer, sum_h)
        finally:
            if beside is not None:
                beside.close(key)
        # msm_w: the witness's zeros skipped and ones summed directly (real circuits are full of both), the
        # rest through 8-lane batch-affine Pippenger; one at a time, each on all threads
        sums = {}
        for name, start in (("a", 0), ("b1", 0), ("c", key.n_public + 1)):
            pause()
            with timer.phase(f"msm_{name}"):
                key.use(name)
                sums[name] = native.msm_w(key.section(name), w, start, False, threads)
                key.done(name)
        out = G1Sums(h=sum_h, **sums)
        if with_g2:
            pause()
            out.b2 = msm_b2(key, w, timer, threads)
        return out

    # The witness MSMs beside the QAP step and the H MSM (off: after it, as with a yield point; tests compare)
    overlap = True


# Beside the rest each witness MSM runs whole on one thread: on many cores the one still running when the H
# MSM ends would keep the others waiting longer than running the four on all of them takes (at 16 threads each
# is ~1-2 ms of wall on all cores against 3-11 ms on one), so there they run after it as before
BESIDE_MAX_THREADS = 4

# Beside the rest only where the witness's values other than 0 and 1 (those its MSMs run Pippenger over; zeros
# are skipped, ones summed) are at most the domain size / BESIDE_FULL_SHARE: then the four MSMs fit the idle time
# of the QAP step and the H MSM (SHA-256 2^17: none such), and the one running on one thread when the H MSM ends
# is short. A witness of full field elements (the chain circuits) makes each as long as the H MSM: run beside, its
# one-thread tail cost chain 2^16 +7% and chain 2^20 +43% of wall (cpu36-paired-chain16-rt.txt, -chain20.txt)
BESIDE_FULL_SHARE = 16
_SAMPLE = 16  # every 16th value's first two bytes read: ~1/256 of the witness's bytes


def _few_full_values(w, domain_size: int) -> bool:
    """Whether the witness has at most domain_size / BESIDE_FULL_SHARE values other than 0 and 1, estimated from
    every _SAMPLE-th value's bytes 0 and 1 (32-byte little-endian values: a 0 or 1 has byte 0 < 2 and byte 1 = 0;
    a full field element almost never both)"""
    m = memoryview(w).cast("B")
    step = _SAMPLE if len(m) >= 32 * 64 * _SAMPLE else 1  # a small witness read whole (a sample of a few misleads)
    b0, b1 = bytes(m[0::32 * step]), bytes(m[1::32 * step])
    full = max(len(b1) - b1.count(0), len(b0) - b0.count(0) - b0.count(1))
    return full * step * BESIDE_FULL_SHARE <= domain_size


# The witness MSMs in the order a helper thread takes them: the largest first (B2: G2 points), so that
# what is left when the caller's own work ends, and is shared by both, is small
_BESIDE = (("b2", True), ("a", False), ("c", False), ("b1", False))
# The order their sections' checks are reported in: the order the stage without the overlap checks them
_CHECK_ORDER = ("a", "b1", "c", "b2")


class WitnessSums:
    """A proof's four witness MSMs (A, B1, C and B2: they read only the witness and the key) run beside the
    proof's other steps: a helper thread below the caller's priority takes them one at a time, each on one
    thread, in the time those steps leave a core idle; what is left when the H MSM ends runs on that thread and
    the caller (native parallel.hpp BesideTasks). Same sums, same work: each MSM whole on one thread.
    Started by the device stage (for_key) or, for a one-shot proof, before the prover's modules are imported
    (head_start). The sections in `check` are checked in their own tasks (first_noncanonical_point's check,
    before their points are read) and their verdicts given to the key at finish (key.checked: the FormatError
    the key's own check raises, in the order the stage without the overlap meets them: after the H section's);
    a one-shot key's pages are dropped by each task as it ends. No yield point falls between them: the engine
    passes one where it may preempt, and then the stage runs them after the H MSM as before."""

    def __init__(self, native, sections: dict, n_public: int, w, drop: bool, check=()):
        start = {"a": 0, "b1": 0, "c": n_public + 1, "b2": 0}
        self.w, self.check = w, tuple(check)
        self.run = native.msm_w_beside([(sections[n], start[n], g2) for n, g2 in _BESIDE], w, drop=drop,
                                       check=[n in self.check for n, _ in _BESIDE])

    @classmethod
    def for_key(cls, key, w) -> "WitnessSums":
        """Started at the device stage's start over a SectionKey: a key that checks its sections lazily (one
        with unchecked(), the one-shot MappedKey) has them checked in the tasks; any other is asked to check
        them here (key.use)."""
        names = [name for name, _ in _BESIDE]
        lazy = getattr(key, "unchecked", None)
        if lazy is not None:
            check = [n for n in names if lazy(n)]
        else:
            key.use(*names)
            check = ()
        # a one-shot key's sections' pages given back as each sum ends (key.done's drop_pages, in the task)
        return cls(key.native, {n: key.section(n) for n in names}, key.n_public, w, key.read_once, check)

    def finish(self, key, timer, sum_h) -> G1Sums:
        """The sums, and the phases msm_a ... msm_b2: the stage's wait for them after the H MSM, shared out
        by each task's own wall time (the rest of their time ran inside the steps before). A section whose
        check failed raises its FormatError here (key.checked)."""
        t0 = time.perf_counter()
        sums, task_ms, _ = self.run.finish()
        wait = (time.perf_counter() - t0) * 1e3
        names = [name for name, _ in _BESIDE]
        verdicts = dict(zip(names, self.run.checks()))
        for name in _CHECK_ORDER:
            if name in self.check:
                key.checked(name, verdicts[name])
        whole = sum(task_ms) or 1.0
        for name, ms in zip(names, task_ms):
            timer.record(f"msm_{name}", wait * ms / whole)
        out = dict(zip(names, sums))
        return G1Sums(h=sum_h, a=out["a"], b1=out["b1"], c=out["c"], b2=out["b2"])

    def stop(self) -> None:
        """An unfinished run stopped (its running task ends, the rest are dropped; the helper joined), and
        its hold on the key's and the witness's buffers let go. Idempotent."""
        self.run = None

    def close(self, key) -> None:
        """Stopped if unfinished, and the sections done with."""
        self.stop()
        key.done(*(name for name, _ in _BESIDE))


def head_start(key_file, witness, threads: int = 0) -> WitnessSums | None:
    """A one-shot proof's witness MSMs started as soon as its key's layout (formats.zkey_layout.KeyFile) and its
    witness (formats.wtns.MappedWitness) are open, before the rest of the prover is imported: the helper thread
    runs them (and their sections' checks) on the core the interpreter's imports leave idle, and the device
    stage finishes them (its key's head_start). None where the stage would not run them beside the rest
    (threads, the witness rule) or where the witness does not fit the key (its check, in the proof, says why);
    the caller stop()s it if the proof does not reach its device stage."""
    lay = key_file.layout
    if not 1 < (threads or native_threads()) <= BESIDE_MAX_THREADS or not CpuBackend.overlap:
        return None
    values = witness.values
    # its bounds (the MSMs read values 0 .. n_vars - 1) and its field; values not below r are reduced by the
    # MSMs and refused by the proof's witness check before any sum is used
    if witness.prime != lay.curve.r or len(values) != lay.n_vars or not _few_full_values(values, lay.domain_size):
        return None
    from snarkd.native import _core  # not importlib (~0.4 ms with warnings): the prover imports it later

    native = getattr(_core, lay.curve.native)
    buf = key_file.file.buffer
    sections = {n: buf[off : off + nbytes] for n, (off, nbytes) in lay.sections.items() if n in dict(_BESIDE)}
    return WitnessSums(native, sections, lay.n_public, values, True, [n for n, _ in _BESIDE])


def native_threads() -> int:
    from snarkd.native import _core  # the key's curve module is its submodule (head_start: its first import)
    return _core.hardware_threads()


def msm_b2(key, w, timer, threads: int = 0):
    """The G2 sum Σ w_i·B2_i on the CPU: in the device stage (with_g2) or, where a device leaves it, in
    finalize (prover/groth16.py)."""
    with timer.phase("msm_b2"):
        key.use("b2")
        b2 = key.native.msm_w(key.section("b2"), w, 0, True, threads)
        key.done("b2")
    return b2


CPU = CpuBackend()
