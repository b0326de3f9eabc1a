"""prover/groth16.prove's end work beside the proof (_start_the_end): for a key read once (the one-shot path) the
self-check's imports and its prepared verification key are made on a thread started after the device stage (past
the proof's memory peak) while the G2 MSM runs; the self-check then finds that key in the verifier's cache, the
proof is snarkjs's, and the thread never decides anything."""

from __future__ import annotations

import sys
import time

import pytest

import oracle
from snarkd.formats.wtns import read_wtns
from snarkd.prover import ProvingKey, groth16, prove
from snarkd.prover.mapped import MappedKey
from snarkd.prover.oneshot import KeyFile, prove_files
from snarkd.prover.timing import PhaseTimer
from snarkd.verifier import groth16 as verifier

R, S = 0x1234567890ABCDEF, 0xFEDCBA0987654321


def _prepared_by_the_thread(monkeypatch):
    """An empty verifier cache, and the list of curves whose verification key the verifier builds (cache misses)."""
    monkeypatch.setattr(verifier, "_PREPARED", type(verifier._PREPARED)())
    built, native = [], verifier.native_for
    monkeypatch.setattr(verifier, "native_for", lambda curve: (built.append(curve.name), native(curve))[1])
    return built


def _until(cond, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "the thread did not finish"
        time.sleep(0.001)


def test_the_thread_prepares_the_key_the_self_check_uses(chain_circuit, monkeypatch, tmp_path):
    built = _prepared_by_the_thread(monkeypatch)
    with KeyFile(chain_circuit.zkey) as key_file:
        key = MappedKey(key_file)
        try:
            groth16._start_the_end(key)
            _until(lambda: len(verifier._PREPARED) == 1)
            assert built == [key.curve.name]
            # the self-check's own call (verify_on_sections passes the mapped sections) finds it
            sections = [key.section(name) for name in groth16.VK_POINTS]
            assert verifier.prepared_vk(key.curve, *sections) is next(iter(verifier._PREPARED.values()))
            assert built == [key.curve.name]
        finally:
            key.release()
    # a whole one-shot proof with the thread: its self-check passed, and snarkjs accepts the proof it wrote
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    prove_files(chain_circuit.zkey, chain_circuit.wtns, verify=True, write=(proof, public))
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    assert "_json" in sys.modules and "snarkd.verifier.groth16" in sys.modules


def test_only_a_key_read_once_starts_it(chain_circuit, monkeypatch):
    started, timer = [], PhaseTimer()
    # the phases done when it starts: the whole device stage, not finalize's G2 MSM (the proof's memory peak past)
    monkeypatch.setattr(groth16._thread, "start_new_thread",
                        lambda fn, args: started.append((fn, args, sorted(timer.ms))))
    with ProvingKey.load(chain_circuit.zkey, prepared="off") as resident:  # a daemon's key: its process has them
        resident_proof = prove(resident, read_wtns(chain_circuit.wtns), r=R, s=S)
    assert started == []
    one_shot = prove_files(chain_circuit.zkey, chain_circuit.wtns, r=R, s=S, verify=False, timer=timer)
    assert [fn for fn, _, _ in started] == [groth16._before_the_end]
    curve, points = started[0][1]
    assert started[0][2] == sorted({"load", "check", "spmv", "ntt", "h", "msm_h", "msm_a", "msm_b1", "msm_c"})
    assert "msm_b2" in one_shot.timings
    with KeyFile(chain_circuit.zkey) as key_file:
        views = key_file.views()
        assert points == tuple(bytes(views[name]) for name in groth16.VK_POINTS)  # copies, no view of the mapping
        for view in views.values():
            view.release()
    assert one_shot.proof == resident_proof.proof and one_shot.public == resident_proof.public


def test_the_thread_never_raises(chain_circuit, monkeypatch):
    # a key whose points are not on the curve: prepared_vk raises, the thread returns, nothing is cached
    built = _prepared_by_the_thread(monkeypatch)
    with KeyFile(chain_circuit.zkey) as key_file:
        curve = key_file.layout.curve
        views = key_file.views()
        points = [bytes(views[name]) for name in groth16.VK_POINTS]
        for view in views.values():
            view.release()
    bad = list(points)
    bad[1] = bytes([7]) * len(points[1])  # beta2: canonical coordinates, not a point of G2
    assert groth16._before_the_end(curve, tuple(bad)) is None
    assert len(verifier._PREPARED) == 0 and built  # tried, and nothing kept
    # a verifier that does not import: the thread returns; the main thread's own import raises it in its place
    monkeypatch.setitem(sys.modules, "snarkd.verifier.groth16", None)
    assert groth16._before_the_end(curve, tuple(points)) is None


def test_a_one_shot_proof_still_writes_nothing_when_its_self_check_fails(chain_circuit, tmp_path):
    # the self-check's verdict stays the main thread's: a witness that does not satisfy the circuit (one value
    # changed) fails it, with the thread's prepared key in the cache, and no file is written
    from snarkd.verifier.self_check import SelfCheckError

    data = bytearray(chain_circuit.wtns.read_bytes())
    data[-32] ^= 1
    bad = tmp_path / "bad.wtns"
    bad.write_bytes(bytes(data))
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    with pytest.raises(SelfCheckError):
        prove_files(chain_circuit.zkey, bad, verify=True, write=(proof, public))
    assert not proof.exists() and not public.exists()
