"""The one-shot CPU prover (prover/oneshot.py: the staged prover's steps over the mapped key, no numpy):
the same proof as the staged prover for the same r and s, accepted by snarkjs, and the same errors (file,
section, message) for bad keys and witnesses."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from contextlib import contextmanager

import pytest

import oracle
from snarkd.errors import FormatError, MismatchError
from snarkd.formats.binfile import BinFile
from snarkd.formats.wtns import read_wtns
from snarkd.prover import ProvingKey, prove, write_proof
from snarkd.prover.oneshot import KeyFile, prove_files
from snarkd.prover.timing import PROOF_STEPS, PhaseTimer

R, S = 0x1234567890ABCDEF, 0xFEDCBA0987654321


def _staged(zkey, wtns):
    with ProvingKey.load(zkey, prepared="off") as key:
        return prove(key, read_wtns(wtns), r=R, s=S, witness_name=str(wtns))


def test_same_proof_as_the_staged_prover(all_circuits, tmp_path):
    for case in all_circuits:
        got = prove_files(case.zkey, case.wtns, r=R, s=S)
        want = _staged(case.zkey, case.wtns)
        assert got.proof == want.proof, case.name
        assert got.public == want.public, case.name


@pytest.mark.slow
def test_snarkjs_accepts(chain_circuit, zero_witness, tmp_path):
    for i, wtns in enumerate((chain_circuit.wtns, zero_witness)):
        result = prove_files(chain_circuit.zkey, wtns)
        proof, public = tmp_path / f"p{i}.json", tmp_path / f"q{i}.json"
        write_proof(result, proof, public)
        assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
        for phase in ("load", "check", "spmv", "ntt", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2", "assemble"):
            assert result.timings[phase] >= 0.0


def test_the_one_shot_proof_reports_the_declared_proof_steps_in_order(chain_circuit):
    """Its phases are timing.PROOF_STEPS (the length of snarkd prove's progress bar); and a KeyFile
    opened once serves the proof (its header read once per `snarkd prove`) and stays open for its owner."""
    order = []

    class Recorder(PhaseTimer):
        @contextmanager
        def phase(self, name):
            order.append(name)
            with super().phase(name):
                yield

    with KeyFile(chain_circuit.zkey) as key:
        assert 1 << key.domain_power == key.layout.domain_size
        result = prove_files(key, chain_circuit.wtns, timer=Recorder(), r=R, s=S)
        assert key.file.buffer is not None  # left open: the caller closes it
    assert order == ["load", *PROOF_STEPS, "verify"]
    assert result.timings["h"] >= 0.0  # the QAP step's last part, inside "ntt" (recorded, not a bar step)
    assert result.proof == _staged(chain_circuit.zkey, chain_circuit.wtns).proof


def test_threads_do_not_change_the_proof(chain_circuit):
    one = prove_files(chain_circuit.zkey, chain_circuit.wtns, threads=1, r=R, s=S)
    two = prove_files(chain_circuit.zkey, chain_circuit.wtns, threads=3, r=R, s=S)
    assert one.proof == two.proof


def _section(path, sid):
    with BinFile.open(path, b"zkey", (1,)) as bf:
        return bf.offset(sid), bf.size(sid)


def _patch(path, offset, data):
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


def _both_errors(zkey, wtns):
    """(staged error, one-shot error) messages for a bad input."""
    errs = []
    for run in (lambda: _staged(zkey, wtns), lambda: prove_files(zkey, wtns, r=R, s=S)):
        with pytest.raises((FormatError, MismatchError)) as info:
            run()
        errs.append(info.value)
    return errs


@pytest.mark.parametrize("sid,coord", [(5, 0), (6, 1), (7, 2), (8, 0), (9, 1)])
def test_noncanonical_point_same_error(chain_circuit, tmp_path, sid, coord):
    zkey = tmp_path / "k.zkey"
    shutil.copy(chain_circuit.zkey, zkey)
    off, size = _section(zkey, sid)
    n8q = 32 if chain_circuit.curve == "bn128" else 48
    per = (4 if sid == 7 else 2) * n8q
    point = (size // per) - 1
    _patch(zkey, off + point * per + coord * n8q, b"\xff" * n8q)  # >= q
    staged, oneshot = _both_errors(zkey, chain_circuit.wtns)
    assert type(staged) is type(oneshot) is FormatError
    assert str(staged) == str(oneshot)
    assert f"point {point}: coordinate" in str(oneshot) and "not canonical" in str(oneshot)


@pytest.mark.parametrize("field,value,needle", [(0, 7, "matrix 7"), (1, 1 << 30, "outside the domain"),
                                                (2, 1 << 29, "out of range")])
def test_bad_coef_entry_same_error(chain_circuit, tmp_path, field, value, needle):
    zkey = tmp_path / "k.zkey"
    shutil.copy(chain_circuit.zkey, zkey)
    off, _ = _section(zkey, 4)
    entry = 3
    _patch(zkey, off + 4 + entry * 44 + 4 * field, struct.pack("<I", value))
    staged, oneshot = _both_errors(zkey, chain_circuit.wtns)
    assert str(staged) == str(oneshot)
    assert f"entry {entry}: " in str(oneshot) and needle in str(oneshot) and "section 4 (coefs)" in str(oneshot)


def test_bad_witness_same_error(chain_circuit, tmp_path):
    wtns = tmp_path / "w.wtns"
    shutil.copy(chain_circuit.wtns, wtns)
    with BinFile.open(wtns, b"wtns", (2,)) as bf:
        off = bf.offset(2)
    _patch(wtns, off + 32 * 5, b"\xff" * 32)
    staged, oneshot = _both_errors(chain_circuit.zkey, wtns)
    assert type(oneshot) is MismatchError
    assert str(staged) == str(oneshot)
    assert "w[5]" in str(oneshot)


def test_witness_of_another_circuit(chain_circuit, many_public_circuit):
    staged, oneshot = _both_errors(chain_circuit.zkey, many_public_circuit.wtns)
    assert type(oneshot) is MismatchError and str(staged) == str(oneshot)


# Start-up a `snarkd prove` without flags does without (bench/cpu-notes.md, round 7): numpy ~60 ms; the config
# layer ~50 ms (its validator, tomllib, one dataclass per section); dataclasses ~12 ms (inspect, ast, dis, tokenize);
# pathlib ~5-10 ms (with urllib.parse, ipaddress)
NOT_ON_THE_PROVE_PATH = ("numpy", "snarkd.config.loader", "snarkd.config.settings", "tomllib", "dataclasses", "inspect",
                         "pathlib")


def test_cli_prove_imports_no_numpy(chain_circuit, tmp_path):
    code = ("import sys; from snarkd.cli import main; "
            f"rc = main(['prove', {str(chain_circuit.zkey)!r}, {str(chain_circuit.wtns)!r}, "
            f"{str(tmp_path / 'p.json')!r}, {str(tmp_path / 'q.json')!r}]); "
            f"assert rc == 0, rc; loaded = [m for m in {NOT_ON_THE_PROVE_PATH!r} if m in sys.modules]; "
            "assert not loaded, f'imported: {loaded}'")
    env = {k: v for k, v in __import__("os").environ.items() if k != "SNARKD_BACKEND"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "p.json").read_text())["protocol"] == "groth16"


@pytest.mark.slow
def test_cli_auto_below_the_gpu_threshold_takes_the_lean_path(chain_circuit, tmp_path):
    """--backend auto that lands on the CPU (a domain under [prove] auto_cuda_min_domain) proves on the
    one-shot path (the key mapped), as --backend cpu does: no numpy, and snarkjs accepts the proof."""
    code = ("import sys; from snarkd.cli import main; "
            f"rc = main(['prove', '--backend', 'auto', '--timings', {str(chain_circuit.zkey)!r}, "
            f"{str(chain_circuit.wtns)!r}, {str(tmp_path / 'p.json')!r}, {str(tmp_path / 'q.json')!r}]); "
            "assert rc == 0, rc; assert 'numpy' not in sys.modules, 'numpy imported'")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "backend: cpu (auto: domain" in res.stderr and "auto_cuda_min_domain" in res.stderr, res.stderr
    assert oracle.snarkjs_verify(chain_circuit.vk, tmp_path / "q.json", tmp_path / "p.json")


def test_ifma_off_gives_the_same_proof(all_circuits):
    """The scalar path (no AVX-512 IFMA: what AVX2-class CPUs run) and the 8-lane one make the same proof
    bytes for the same r and s, on every fixture circuit (on a CPU without IFMA both runs are scalar)."""
    from snarkd.native import _core

    prev = _core._set_simd52(False)
    try:
        scalar = [prove_files(c.zkey, c.wtns, r=R, s=S).proof for c in all_circuits]
    finally:
        _core._set_simd52(prev)
    lanes = [prove_files(c.zkey, c.wtns, r=R, s=S).proof for c in all_circuits]
    for c, a, b in zip(all_circuits, scalar, lanes):
        assert a == b, c.name


def test_a_path_switch_waits_for_a_running_proof(chain_circuit):
    """[cpu] ifma's switch (_core.set_ifma, through snarkd.native.apply_ifma in production) asked for from another
    thread while a one-shot proof runs (at its first phase report, from inside the native call) returns only
    after the proof: the proof ran on one path throughout and equals the staged prover's. Asked for from inside
    the call itself (its callback) it raises instead of waiting for itself."""
    import threading

    from snarkd.native import _core

    before = _core.uses_simd52()
    state = {}

    class Switching(PhaseTimer):
        @contextmanager
        def phase(self, name):
            if name != "load" and "thread" not in state:
                with pytest.raises(RuntimeError, match="from inside a native call"):
                    _core.set_ifma(not before)
                done = threading.Event()
                state["thread"] = threading.Thread(target=lambda: (_core.set_ifma(not before), done.set()))
                state["thread"].start()
                state["done_early"] = done.wait(0.5)  # it cannot return while the proof runs
                state["during"] = _core.uses_simd52()
            with super().phase(name):
                yield

    try:
        result = prove_files(chain_circuit.zkey, chain_circuit.wtns, timer=Switching(), r=R, s=S)
        state["thread"].join()
        assert state["done_early"] is False and state["during"] == before
        assert _core.uses_simd52() == (not before and _core.cpu_has_simd52())  # switched once the proof ended
    finally:
        _core.set_ifma(before or _core.cpu_has_simd52())
    assert result.proof == _staged(chain_circuit.zkey, chain_circuit.wtns).proof


@pytest.mark.slow
def test_cli_with_ifma_off_is_accepted_by_snarkjs(chain_circuit, zero_witness, tmp_path):
    """SNARKD_CPU_IFMA=off on the lean `snarkd prove` path: the scalar kernels in use, no numpy imported,
    snarkjs accepts the proofs (full-size and mostly-zero witnesses)."""
    import os

    for i, wtns in enumerate((chain_circuit.wtns, zero_witness)):
        proof, public = tmp_path / f"p{i}.json", tmp_path / f"q{i}.json"
        code = ("import sys; from snarkd.cli import main; "
                f"rc = main(['prove', '--backend', 'cpu', {str(chain_circuit.zkey)!r}, {str(wtns)!r}, "
                f"{str(proof)!r}, {str(public)!r}]); assert rc == 0, rc; "
                "from snarkd.native import _core; assert not _core.uses_simd52(), 'IFMA still on'; "
                "assert 'numpy' not in sys.modules, 'numpy imported'")
        env = dict(os.environ, SNARKD_CPU_IFMA="off")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)


@pytest.mark.parametrize("name,coord", [("delta1", 1), ("beta2", 3)])
def test_noncanonical_header_point_same_error(chain_circuit, tmp_path, name, coord):
    """A header point the proof blinds with, checked in "check" (MappedKey.use) as read_zkey checks it."""
    zkey = tmp_path / "k.zkey"
    shutil.copy(chain_circuit.zkey, zkey)
    with KeyFile(zkey) as key:
        off, _ = key.layout.header_points[name]
        n8q = key.layout.n8q
    _patch(zkey, off + coord * n8q, b"\xff" * n8q)
    staged, oneshot = _both_errors(zkey, chain_circuit.wtns)
    assert type(staged) is type(oneshot) is FormatError
    assert str(staged) == str(oneshot)
    assert f"point {name}: coordinate {('x', 'y')[coord] if name == 'delta1' else 'y.c1'} is not canonical" in str(oneshot)
