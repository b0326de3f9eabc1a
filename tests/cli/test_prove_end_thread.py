"""`snarkd prove`'s end work run beside the proof (cli/prove._end_timer): the verifier's imports and the self-check's
prepared key made on a thread when the NTT step begins, used by the self-check, and never deciding anything."""

from __future__ import annotations

import _thread
import sys

import oracle

from snarkd.cli import prove as cli_prove
from snarkd.formats.zkey_layout import KeyFile


def _wait(lock) -> None:
    assert lock.acquire(timeout=60), "the thread did not finish"


def test_thread_prepares_the_key_the_self_check_uses(chain_circuit, monkeypatch, tmp_path):
    from snarkd.prover.oneshot import prove_files
    from snarkd.verifier import groth16 as verifier

    monkeypatch.setattr(verifier, "_PREPARED", type(verifier._PREPARED)())
    made = []
    native = verifier.native_for
    monkeypatch.setattr(verifier, "native_for", lambda curve: (made.append(curve.name), native(curve))[1])
    with KeyFile(chain_circuit.zkey) as key:
        done = _thread.allocate_lock()
        done.acquire()
        real = cli_prove._before_the_end
        monkeypatch.setattr(cli_prove, "_before_the_end", lambda *a: (real(*a), done.release()))
        timer = cli_prove._end_timer(True, key)
        with timer.phase("check"):
            pass
        assert not timer.started  # nothing before the NTT step
        with timer.phase("ntt"):
            _wait(done)
        assert timer.started and len(verifier._PREPARED) == 1 and made == [key.layout.curve.name]
        with timer.phase("ntt"):  # once per proof
            pass
        proof, public = tmp_path / "proof.json", tmp_path / "public.json"
        prove_files(key, chain_circuit.wtns, timer=timer, verify=True, write=(proof, public))
        # the self-check found the thread's key in the cache (no second preparation); snarkjs accepts the proof
        assert len(verifier._PREPARED) == 1 and made == [key.layout.curve.name]
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)


def test_thread_never_raises(chain_circuit, tmp_path):
    # a module that does not import, a key whose points cannot be prepared: the thread returns quietly, and the
    # main thread's own import / self-check meets and reports them, as without it
    cli_prove._before_the_end(("snarkd.no_such_module_here",), None)
    assert "snarkd.no_such_module_here" not in sys.modules
    broken = tmp_path / "broken.zkey"
    data = bytearray(chain_circuit.zkey.read_bytes())
    with KeyFile(chain_circuit.zkey) as key:
        off, n = key.layout.header_points["beta2"]
    data[off : off + n] = bytes([7]) * n  # canonical coordinates, not a curve point
    broken.write_bytes(bytes(data))
    with KeyFile(broken) as key:
        cli_prove._before_the_end(cli_prove.END_MODULES, key)


def test_no_verify_imports_no_verifier(chain_circuit, monkeypatch):
    calls = []
    monkeypatch.setattr(_thread, "start_new_thread", lambda fn, args: calls.append(args))
    timer = cli_prove._end_timer(False, None)
    with timer.phase("ntt"):
        pass
    assert calls == [(tuple(n for n in cli_prove.END_MODULES if not n.startswith("snarkd.verifier")), None)]
