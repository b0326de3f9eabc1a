"""A key file changed under a loaded key, in process (shared by tests/engine/test_key_changes.py on the CPU
and tests/gpu/test_gpu_key_changes.py on a GPU): chain jobs in flight, the chain key overwritten with a
shorter key (`cp`), another key's jobs beside them; then truncated; then restored."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from cases import build_case
from snarkd.engine import COMPLETED, FAILED, Engine, EngineConfig
from snarkd.engine.errors import KeyChanged
from snarkd.errors import InputError
from snarkd.verifier import verify


CASES = ("chain", "many_public", "no_public")


def cases_or_skip() -> list:
    """The three cases, from the fixture cache (oracle.CACHE) or built with circom2 and snarkjs; on a machine
    without Node.js or node_modules (a GPU machine given only the repository), a skip saying so instead of an
    error (issue 33, finding 8)."""
    import oracle

    try:
        return [build_case(n, "bn128") for n in CASES]
    except (FileNotFoundError, RuntimeError, pytest.fail.Exception) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        pytest.skip(f"the key-change circuits are neither in the fixture cache ({oracle.CACHE}) nor buildable here: "
                    f"circom2/snarkjs need Node.js and `npm ci` ({first})")


def run_key_change(tmp_path, devices=(), delay=0.3):
    """(engine started with chain and other loaded, chain's key path, the chain, other and shorter cases)."""
    # on a GPU machine (devices given) missing oracles skip; in CPU CI, where Node.js is a requirement, they fail
    chain, other, shorter = cases_or_skip() if devices else (build_case(n, "bn128") for n in CASES)
    key = tmp_path / "chain.zkey"
    shutil.copyfile(chain.zkey, key)
    eng = Engine(EngineConfig(synthesis_workers=2, threads=1, memory_budget="256MiB", debug_delay_s=delay,
                              devices=tuple(devices)))
    eng.keys.load("chain", str(key))
    eng.keys.load("other", str(other.zkey))
    eng.start()
    return eng, key, chain, other, shorter


def check_key_change(eng, key, chain, other, shorter):
    mine = [eng.submit("chain", chain.wtns.read_bytes()) for _ in range(3)]
    theirs = [eng.submit("other", other.wtns.read_bytes()) for _ in range(2)]
    shutil.copyfile(shorter.zkey, key)  # what `cp shorter.zkey chain.zkey` does: O_TRUNC, then the new bytes
    if not all(j.done.wait(0) for j in mine):
        with pytest.raises(KeyChanged, match="reloaded from its path once"):  # while they hold the bad mapping
            eng.submit("chain", chain.wtns.read_bytes())
    for j in mine:
        assert j.done.wait(60) and j.state == FAILED and j.error_kind == "key", (j.state, j.error)
        assert str(key) in j.error and "changed on disk" in j.error and j.result is None
    vk = json.loads(other.vk.read_text())
    for j in theirs:
        assert j.done.wait(60) and j.state == COMPLETED and verify(vk, j.result.public, j.result.proof)
    with pytest.raises(InputError, match="nVars"):  # reloaded: another circuit's key now, W1 does not fit
        eng.submit("chain", chain.wtns.read_bytes())
    os.truncate(key, 100)
    with pytest.raises(InputError, match="cannot be reloaded"):  # refused while broken
        eng.submit("chain", chain.wtns.read_bytes())
    shutil.copyfile(chain.zkey, key)
    job = eng.submit("chain", chain.wtns.read_bytes())
    assert job.done.wait(60) and job.state == COMPLETED, job.error
    assert verify(json.loads(chain.vk.read_text()), job.result.public, job.result.proof)
    lk = eng.keys.get("chain")
    assert lk.reloads == 2 and not lk.spoiled and lk.meta["n_vars"] == eng.keys.get("chain").key.n_vars
