"""Groth16 is sequenced once (issue 35, item 1): prover/groth16.py's synthesize -> device_stage -> finalize is the
one order of the protocol's steps, which `snarkd prove` on the CPU (prover/oneshot.py over a MappedKey) and the
staged path (a resident ProvingKey: the engine, fullprove, a GPU) both run; the native core has steps, no
sequence of its own; the proof is blinded and assembled in one place."""

from __future__ import annotations

import re
from pathlib import Path

from snarkd.formats.wtns import read_wtns
from snarkd.native import _core
from snarkd.prover import ProvingKey, groth16, prove
from snarkd.prover.oneshot import prove_files

SRC = Path(__file__).resolve().parents[2] / "src" / "snarkd"
R, S = 0x1234567890ABCDEF, 0xFEDCBA0987654321


def test_the_native_core_has_no_prover_of_its_own():
    for curve in (_core.bn254, _core.bls12_381):
        assert not hasattr(curve, "groth16_prove")
        for step in ("first_noncanonical_point", "spmv_ab", "qap_h", "msm_h", "msm_w", "groth16_blind"):
            assert hasattr(curve, step), step
    native = SRC / "native"
    assert not (native / "groth16" / "prove.hpp").exists()
    assert "Groth16Prover" not in "".join(p.read_text() for p in native.rglob("*.[ch]pp"))


def _calls(pattern: str) -> set[str]:
    """The modules of src/snarkd whose code (comments left out) matches pattern."""
    found = set()
    for path in SRC.rglob("*.py"):
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        if re.search(pattern, code):
            found.add(path.relative_to(SRC).as_posix())
    return found


def test_one_place_sequences_assembles_and_blinds():
    assert _calls(r"\.groth16_blind\(") == {"prover/groth16.py"}
    assert _calls(r"\bproof_json\(") == {"prover/groth16.py", "prover/types.py"}  # its call, its definition
    assert _calls(r"\bsynthesize\(") <= {"prover/groth16.py", "engine/engine.py"}  # the engine stages it
    assert _calls(r"\.qap_h\(") == {"prover/cpu.py"}  # the H values: the CPU backend's device stage
    assert _calls(r"\.msm_w\(") == {"prover/cpu.py"}


def test_both_paths_run_the_same_steps(chain_circuit, monkeypatch):
    """The one-shot proof and the staged one each pass through groth16's synthesize and finalize, and give the
    same proof for the same r, s."""
    seen = []
    for name in ("synthesize", "finalize"):
        real = getattr(groth16, name)
        monkeypatch.setattr(groth16, name, lambda key, *a, _real=real, _name=name, **k: (
            seen.append((_name, type(key).__name__)), _real(key, *a, **k))[1])
    oneshot = prove_files(chain_circuit.zkey, chain_circuit.wtns, r=R, s=S)
    with ProvingKey.load(chain_circuit.zkey, prepared="off") as key:
        staged = prove(key, read_wtns(chain_circuit.wtns), r=R, s=S)
    assert seen == [("synthesize", "MappedKey"), ("finalize", "MappedKey"),
                    ("synthesize", "ProvingKey"), ("finalize", "ProvingKey")]
    assert oneshot.proof == staged.proof and oneshot.public == staged.public
    assert oneshot.points == staged.points


def test_the_one_shot_key_checks_before_first_use_and_releases_after_last(chain_circuit, monkeypatch):
    """On the one-shot path each bulk section is checked (use) just before the step that reads it and its pages
    are released (done: the core's drop_pages) right after: the key is never resident all at once."""
    from snarkd.prover.mapped import MappedKey

    events, dropped = [], []
    use, done = MappedKey.use, MappedKey.done
    monkeypatch.setattr(MappedKey, "use", lambda self, *n: (events.append(("use", n)), use(self, *n))[1])
    monkeypatch.setattr(MappedKey, "done", lambda self, *n: (events.append(("done", n)), done(self, *n))[1])
    native = getattr(_core, "bn254" if chain_circuit.curve == "bn128" else "bls12_381")
    real_drop = native.drop_pages
    monkeypatch.setattr(native, "drop_pages", lambda buf: (dropped.append(len(buf)), real_drop(buf))[1])
    prove_files(chain_circuit.zkey, chain_circuit.wtns, r=R, s=S)
    spmv = [("use", ("coefs",)), ("done", ("coefs",))]
    if events[1] == ("done", ("prepared",)):  # a valid sidecar beside the fixture's key: A, B come from it
        spmv = [("done", ("prepared",))]
    assert events == [("use", ("alpha1", "beta1", "delta1", "beta2", "delta2")), *spmv,
                      *[(kind, (name,)) for name in ("h", "a", "b1", "c", "b2") for kind in ("use", "done")]]
    assert len(dropped) >= 6 and all(dropped)
