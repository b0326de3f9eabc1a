"""The CPU backend's device stage with the witness MSMs beside the QAP step and the H MSM (prover/cpu.py
WitnessSums): the same sums byte for byte as the stage that runs them after the H MSM, B2's included (then
finalize does not run it again); a yield point keeps the old order, one pause before each MSM. A one-shot
proof's started before the proof (prover.cpu.head_start, with the sections' checks in the tasks): the same
proof, and the same errors in the same order, as the staged prover."""
from __future__ import annotations

import pytest

import shutil

from snarkd.errors import FormatError, MismatchError
from snarkd.formats.binfile import BinFile
from snarkd.formats.wtns import MappedWitness, read_wtns
from snarkd.prover import ProvingKey, groth16, prove
from snarkd.prover import cpu
from snarkd.prover.cpu import CpuBackend, _few_full_values, msm_b2
from snarkd.prover.oneshot import KeyFile, prove_files
from snarkd.prover.timing import PhaseTimer

R, S = 0x1234567890ABCDEF, 0xFEDCBA0987654321


def _stage(key, w, threads, overlap, yield_point=None):
    be = CpuBackend()
    be.overlap = overlap
    timer = PhaseTimer()
    synth = groth16.synthesize(key, w, timer, threads)
    return be.device_stage(key, synth, timer, threads, yield_point=yield_point), timer, synth


@pytest.fixture
def any_witness(monkeypatch):
    """the fixture chain's witness is full field elements: let it run beside anyway"""
    monkeypatch.setattr(cpu, "BESIDE_FULL_SHARE", 0)


@pytest.mark.parametrize("threads", [2, 3])
def test_beside_gives_the_same_sums(chain_circuit, threads, any_witness):
    with ProvingKey.load(chain_circuit.zkey, prepared="off") as key:
        w = read_wtns(chain_circuit.wtns)
        after, _, synth = _stage(key, w, threads, overlap=False)
        assert after.b2 is None
        b2 = msm_b2(key, synth.witness, PhaseTimer(), threads)
        beside, timer, _ = _stage(key, w, threads, overlap=True)
        for name in ("h", "a", "b1", "c"):
            assert bytes(getattr(beside, name)) == bytes(getattr(after, name)), name
        assert bytes(beside.b2) == bytes(b2)  # computed beside: finalize skips it
        for phase in ("spmv", "ntt", "h", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2"):
            assert timer.ms[phase] >= 0.0, phase


def test_a_yield_point_keeps_the_order_and_one_thread_runs_them_after(chain_circuit, any_witness):
    with ProvingKey.load(chain_circuit.zkey, prepared="off") as key:
        w = read_wtns(chain_circuit.wtns)
        calls = []
        sums, _, _ = _stage(key, w, 2, overlap=True, yield_point=lambda: calls.append(1) or 0.0)
        assert len(calls) == 4 and sums.b2 is None  # before H, A, B1, C: as before; B2 left to finalize
        one, _, _ = _stage(key, w, 1, overlap=True)
        assert one.b2 is None  # one thread: nothing to run beside
        assert bytes(one.a) == bytes(sums.a) and bytes(one.h) == bytes(sums.h)


def test_only_a_witness_of_few_full_values_runs_beside():
    """zeros and ones (a bit-heavy circuit such as SHA-256) run beside; full field elements (the chain) do not"""
    n = 1 << 12
    bits = b"".join((i % 3 == 1).to_bytes(32, "little") for i in range(n))
    assert _few_full_values(bits, n)
    full = b"".join(((i + 2) * 0x1234567890ABCDEF1234567).to_bytes(32, "little") for i in range(n))
    assert not _few_full_values(full, n)
    mixed = bytearray(bits)  # one value in 8 full: more than 1 / BESIDE_FULL_SHARE of the domain
    for i in range(0, n, 8):
        mixed[32 * i:32 * i + 32] = full[32 * i:32 * i + 32]
    assert not _few_full_values(bytes(mixed), n) and _few_full_values(bytes(mixed), 8 * n * cpu.BESIDE_FULL_SHARE)
    small = b"".join(v.to_bytes(32, "little") for v in (1, 0, 1, 0xABCDEF1234567, 1, 0xFEDCBA987654321))
    assert not _few_full_values(small, 8)  # read whole: its one sampled value (the constant 1) would say few


def _one_shot(zkey, wtns, threads=2, early=True, write=None):
    """prove_files, with (early) or without its head start (prover.cpu.head_start: the witness MSMs started as
    soon as the key and the witness are open): asserts one was started exactly when asked for"""
    real, started = cpu.head_start, []

    def spy(key_file, witness, threads):
        started.append(real(key_file, witness, threads) if early else None)
        return started[-1]

    cpu.head_start = spy
    try:
        return prove_files(zkey, wtns, threads=threads, r=R, s=S, write=write)
    finally:
        cpu.head_start = real
        assert len(started) == 1 and (started[0] is not None) == early


def _staged(zkey, wtns):
    with ProvingKey.load(zkey, prepared="off") as key:
        return prove(key, read_wtns(wtns), r=R, s=S, witness_name=str(wtns))


@pytest.mark.parametrize("early", [True, False], ids=["head-start", "at-the-stage"])
@pytest.mark.parametrize("threads", [2, 3])
def test_a_one_shot_proof_with_the_sums_beside_is_the_staged_proof(chain_circuit, threads, early, any_witness):
    got = _one_shot(chain_circuit.zkey, chain_circuit.wtns, threads, early)
    want = _staged(chain_circuit.zkey, chain_circuit.wtns)
    assert got.points == want.points and got.proof == want.proof and got.public == want.public
    for phase in ("load", "msm_a", "msm_b1", "msm_c", "msm_b2"):
        assert got.timings[phase] >= 0.0, phase


def test_no_head_start_where_the_stage_would_not_run_them_beside(chain_circuit, many_public_circuit):
    with KeyFile(chain_circuit.zkey) as kf:
        w = MappedWitness.open(chain_circuit.wtns, "w")
        try:
            assert cpu.head_start(kf, w, 2) is None  # the chain's witness: full field elements (the rule)
            assert cpu.head_start(kf, w, 1) is None  # one thread: nothing beside
            assert cpu.head_start(kf, w, 5) is None  # more than BESIDE_MAX_THREADS
        finally:
            w.close()
        other = MappedWitness.open(many_public_circuit.wtns, "other")
        try:
            cpu.BESIDE_FULL_SHARE, share = 0, cpu.BESIDE_FULL_SHARE
            assert cpu.head_start(kf, other, 2) is None  # not this key's count of values: its check says why
        finally:
            cpu.BESIDE_FULL_SHARE = share
            other.close()


def _section(path, sid):
    with BinFile.open(path, b"zkey", (1,)) as bf:
        return bf.offset(sid), bf.size(sid)


def _spoil_point(zkey, sid, n8q, point=-1, coord=0):
    off, size = _section(zkey, sid)
    per = (4 if sid == 7 else 2) * n8q
    point = point % (size // per)
    with open(zkey, "r+b") as fh:
        fh.seek(off + point * per + coord * n8q)
        fh.write(b"\xff" * n8q)
    return point


@pytest.mark.parametrize("early", [True, False], ids=["head-start", "at-the-stage"])
@pytest.mark.parametrize("sids", [(5,), (6,), (7,), (8,), (9, 5), (7, 8), (8, 6), (5, 7)])
def test_a_bad_section_checked_in_its_task_raises_the_same_error(chain_circuit, tmp_path, sids, early,
                                                                 any_witness, monkeypatch):
    """the checks run in the tasks are reported after the H section's and in the order a, b1, c, b2: the error
    of the one-shot proof without the overlap (each section checked at its first use), whichever the tasks met
    first, and for one bad section the staged prover's; nothing written"""
    zkey = tmp_path / "k.zkey"
    shutil.copy(chain_circuit.zkey, zkey)
    n8q = 32 if chain_circuit.curve == "bn128" else 48
    for i, sid in enumerate(sids):
        _spoil_point(zkey, sid, n8q, point=-1 - i, coord=i)
    monkeypatch.setattr(CpuBackend, "overlap", False)
    with pytest.raises(FormatError) as before:
        _one_shot(zkey, chain_circuit.wtns, 2, early=False)
    monkeypatch.setattr(CpuBackend, "overlap", True)
    out = (tmp_path / "proof.json", tmp_path / "public.json")
    with pytest.raises(FormatError) as oneshot:
        _one_shot(zkey, chain_circuit.wtns, 2, early, write=out)
    assert str(oneshot.value) == str(before.value) and "not canonical" in str(oneshot.value)
    assert not out[0].exists() and not out[1].exists()
    if len(sids) == 1:
        with pytest.raises(FormatError) as staged:
            _staged(zkey, chain_circuit.wtns)
        assert str(oneshot.value) == str(staged.value)


def test_a_bad_witness_stops_the_head_start(chain_circuit, tmp_path, any_witness):
    """a witness value not below r: the head start's sums are never used; the witness check's error as before"""
    wtns = tmp_path / "w.wtns"
    shutil.copy(chain_circuit.wtns, wtns)
    with BinFile.open(wtns, b"wtns", (2,)) as bf:
        off = bf.offset(2)
    with open(wtns, "r+b") as fh:
        fh.seek(off + 32 * 5)
        fh.write(b"\xff" * 32)
    with pytest.raises(MismatchError) as staged:
        _staged(chain_circuit.zkey, wtns)
    with pytest.raises(MismatchError) as oneshot:
        _one_shot(chain_circuit.zkey, wtns, 2, True)
    assert str(oneshot.value) == str(staged.value) and "w[5]" in str(oneshot.value)
