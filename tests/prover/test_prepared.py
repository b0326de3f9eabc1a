"""The prepared sidecar (KEY.zkey.prep): used when valid, ignored with a warning and
rebuilt when stale or corrupt, and never the cause of a wrong proof -- every proof
here is compared with the one made without a sidecar (same r, s), one checked by snarkjs."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

import oracle
from snarkd.formats.prepared import PreparedFile, write
from snarkd.formats.wtns import read_wtns
from snarkd.prover import ProvingKey, prove, write_proof
from snarkd.prover import prepared as prep
from snarkd.prover.oneshot import prove_files

R, S = 0xABCDEF0123456789, 0x0F1E2D3C4B5A6978


@pytest.fixture
def key_copy(chain_circuit, tmp_path):
    """The chain key copied where a sidecar may be written, and its proof without one."""
    zkey = tmp_path / "chain.zkey"
    shutil.copy(chain_circuit.zkey, zkey)
    reference = prove_files(zkey, chain_circuit.wtns, r=R, s=S).proof
    assert not os.path.exists(prep.sidecar_path(zkey))  # a one-shot proof writes nothing unasked
    return zkey, reference


def _prove_both(zkey, wtns):
    """(one-shot proof, staged proof), both with R, S."""
    one = prove_files(zkey, wtns, r=R, s=S).proof
    with ProvingKey.load(zkey) as key:
        used = key.prepared is not None
        staged = prove(key, read_wtns(wtns), r=R, s=S).proof
    return one, staged, used


@pytest.mark.slow
def test_prepare_then_prove_uses_it(chain_circuit, key_copy, tmp_path):
    zkey, reference = key_copy
    path = prep.build(zkey)
    assert path == str(zkey) + ".prep"
    with PreparedFile(path) as pf:
        assert pf.meta["layout"] == prep.LAYOUT and set(pf.blocks) == set(prep.BLOCKS)
    one, staged, used = _prove_both(zkey, chain_circuit.wtns)
    assert used
    assert one == staged == reference
    result = prove_files(zkey, chain_circuit.wtns)
    write_proof(result, tmp_path / "p.json", tmp_path / "q.json")
    assert oracle.snarkjs_verify(chain_circuit.vk, tmp_path / "q.json", tmp_path / "p.json")


def test_all_fixture_keys(all_circuits, tmp_path):
    for case in all_circuits:
        zkey = tmp_path / f"{case.name}.zkey"
        shutil.copy(case.zkey, zkey)
        want = prove_files(zkey, case.wtns, r=R, s=S).proof
        prep.build(zkey)
        one, staged, used = _prove_both(zkey, case.wtns)
        assert used and one == staged == want, case.name


def _corrupt_block(path):
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    hdr_len = int.from_bytes(data[12:16], "little")
    header = json.loads(bytes(data[16 : 16 + hdr_len]))
    off, length, _ = header["blocks"]["ent_a"]
    data[off + length // 2] ^= 0x40
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("damage", ["block", "header", "truncate", "garbage", "version"])
def test_corrupt_sidecar_is_ignored_and_rebuilt(chain_circuit, key_copy, caplog, damage):
    zkey, reference = key_copy
    path = prep.build(zkey)
    if damage == "block":
        _corrupt_block(path)
    else:
        with open(path, "r+b") as fh:
            if damage == "header":
                fh.seek(20)
                fh.write(b"#")
            elif damage == "truncate":
                fh.truncate(os.path.getsize(path) // 2)
            elif damage == "garbage":
                fh.write(b"not a sidecar at all")
            else:
                fh.seek(8)
                fh.write((99).to_bytes(4, "little"))
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        one, staged, used = _prove_both(zkey, chain_circuit.wtns)
    assert one == staged == reference
    assert used  # rebuilt by the first load, used by the second
    assert any("rebuilding" in r.getMessage() for r in caplog.records), caplog.text
    with PreparedFile(path) as pf:  # the rebuilt file is valid again
        assert set(pf.blocks) == set(prep.BLOCKS)


def test_stale_sidecar_is_ignored_and_rebuilt(chain_circuit, exact_circuit, key_copy, caplog, tmp_path):
    zkey, reference = key_copy
    path = prep.build(zkey)
    # the zkey is rewritten (here: another key's bytes under the same name, newer mtime)
    other = tmp_path / "other.zkey"
    shutil.copy(exact_circuit.zkey, other)
    other_ref = prove_files(other, exact_circuit.wtns, r=R, s=S).proof
    shutil.copy(other, zkey)
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        one, staged, used = _prove_both(zkey, exact_circuit.wtns)
    assert one == staged == other_ref != reference
    assert any("stale" in r.getMessage() for r in caplog.records), caplog.text
    # touching the key (same bytes, new mtime) also makes it stale: rebuilt, same proof
    caplog.clear()
    st = os.stat(zkey)
    os.utime(zkey, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        assert prove_files(zkey, exact_circuit.wtns, r=R, s=S).proof == other_ref
    assert any("stale" in r.getMessage() for r in caplog.records)
    assert os.path.exists(path)


def test_inconsistent_arrays_with_valid_checksums(chain_circuit, key_copy, caplog):
    """A file that passes every checksum but whose arrays index out of range (a foreign
    or hand-made file): the native core refuses it, the proof is made without it."""
    zkey, reference = key_copy
    path = prep.build(zkey)
    with PreparedFile(path) as pf:
        blocks = {k: bytes(v) for k, v in pf.blocks.items()}
        meta = dict(pf.meta)
    from snarkd.formats.binfile import BinFile

    with BinFile.open(zkey, b"zkey", (1,)) as bf:
        identity = prep._identity(zkey, bf)
    ent = bytearray(blocks["ent_a"])
    ent[0:4] = (1 << 29).to_bytes(4, "little")  # a signal far out of range
    blocks["ent_a"] = bytes(ent)
    write(path, identity, meta, blocks)
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        assert prove_files(zkey, chain_circuit.wtns, r=R, s=S).proof == reference
    assert any("removed" in r.getMessage() for r in caplog.records), caplog.text
    assert not os.path.exists(path)
    write(path, identity, meta, blocks)
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        one, staged, _ = _prove_both(zkey, chain_circuit.wtns)
    assert one == staged == reference


def test_unwritable_directory_proves_without(chain_circuit, key_copy, caplog, monkeypatch):
    zkey, reference = key_copy
    path = prep.build(zkey)
    _corrupt_block(path)

    def refuse(*args, **kwargs):  # the directory is read-only (root would write anyway)
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(prep, "write", refuse)
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        assert prove_files(zkey, chain_circuit.wtns, r=R, s=S).proof == reference
    assert any("cannot (re)build" in r.getMessage() for r in caplog.records), caplog.text


def test_modes(chain_circuit, key_copy):
    zkey, reference = key_copy
    with ProvingKey.load(zkey, prepared="off") as key:
        assert key.prepared is None
    with ProvingKey.load(zkey) as key:  # "use": missing stays missing
        assert key.prepared is None
    assert not os.path.exists(prep.sidecar_path(zkey))
    with ProvingKey.load(zkey, prepared="build") as key:  # a daemon: built on first use
        assert key.prepared is not None
        assert prove(key, read_wtns(chain_circuit.wtns), r=R, s=S).proof == reference
    with pytest.raises(ValueError):
        ProvingKey.load(zkey, prepared="sometimes")


def test_cli_prepare(chain_circuit, key_copy, tmp_path):
    zkey, reference = key_copy
    res = subprocess.run([sys.executable, "-m", "snarkd", "prepare", str(zkey)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert os.path.exists(str(zkey) + ".prep") and "MiB" in res.stderr
    res = subprocess.run([sys.executable, "-m", "snarkd", "prepare", str(tmp_path / "missing.zkey")],
                         capture_output=True, text=True)
    assert res.returncode == 3 and "missing.zkey" in res.stderr


def test_a_sidecar_not_made_by_this_user_or_linked_is_refused(chain_circuit, key_copy, caplog, tmp_path, monkeypatch):
    """Issue 33, finding 2: every CRC right is not enough. A sidecar sealed under another user's secret (made
    elsewhere, or another key's blocks re-bound by hand), or a link to a good one, is refused with a warning
    naming the rule; the proof is the one made without it."""
    from snarkd.formats import file_trust

    zkey, reference = key_copy
    path = prep.build(zkey)
    good = open(path, "rb").read()
    monkeypatch.setitem(file_trust._secret, str(file_trust.secret_path()), b"\x01" * 32)  # another user's secret
    prep.build(zkey)
    monkeypatch.undo()
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        assert prove_files(zkey, chain_circuit.wtns, r=R, s=S).proof == reference
    assert "tag does not match" in caplog.text
    elsewhere = tmp_path / "elsewhere.prep"
    elsewhere.write_bytes(good)
    os.unlink(path)
    os.symlink(elsewhere, path)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="snarkd.prepared"):
        assert prove_files(zkey, chain_circuit.wtns, r=R, s=S).proof == reference
    assert "without following links" in caplog.text
