"""daemon/aggregation.py in process: the max_concurrent bound, SRS files kept resident (and read again once
changed), the proofs checked before anything is aggregated, and close()."""

from __future__ import annotations

import json
import shutil
import threading

import pytest

from snarkd.cli import main
from snarkd.daemon.aggregation import Aggregator, Item
from snarkd.engine.errors import Busy
from snarkd.errors import InputError
from snarkd.prover import prove
from snarkd.prover.proving_key import ProvingKey


@pytest.fixture(scope="module")
def case(chain_bn128, tmp_path_factory):
    circ, _ = chain_bn128
    d = tmp_path_factory.mktemp("aggregation")
    for name in ("a.srs", "b.srs"):
        assert main(["aggregation-srs", "--dev", "--curve", "bn128", "--max", "4", str(d / name)]) == 0
    from snarkd.formats.wtns import read_wtns

    key = ProvingKey.load(circ.zkey)
    proofs = [prove(key, read_wtns(circ.witness({"k": k, "x": 2})), threads=1) for k in (1, 2, 3, 4)]
    items = [Item(list(p.public), p.proof, f"proofs[{i}]") for i, p in enumerate(proofs)]
    return json.loads(circ.vk.read_text()), items, d


def test_one_past_max_concurrent_is_busy_until_it_finishes(case, monkeypatch):
    vk, items, d = case
    agg = Aggregator(max_concurrent=1, threads=1)
    gate, real = threading.Event(), agg._aggregate

    def held(*a):
        gate.wait(30)
        return real(*a)

    monkeypatch.setattr(agg, "_aggregate", held)
    first = agg.start("k", vk, items, d / "a.srs")
    assert agg.running == 1
    with pytest.raises(Busy, match=r"\[aggregate\] max_concurrent \(1\)"):
        agg.start("k", vk, items, d / "a.srs")
    gate.set()
    assert first.result(60).n == 4 and agg.running == 0
    assert agg.start("k", vk, items[:2], d / "a.srs").result(60).n == 2  # room again
    assert agg.close(10)


def test_srs_files_stay_resident_up_to_srs_resident_and_are_read_again_once_changed(case, tmp_path):
    vk, items, d = case
    results = []
    agg = Aggregator(max_concurrent=1, threads=1, srs_resident=1, observe=lambda *a: results.append(a[0]))
    a, b = tmp_path / "a.srs", tmp_path / "b.srs"
    shutil.copy(d / "a.srs", a)
    shutil.copy(d / "b.srs", b)
    first = agg.start("k", vk, items[:2], a).result(60)
    again = agg.start("k", vk, items[:2], a).result(60)
    assert first.timings["srs_load"] > 0 and again.timings["srs_load"] < first.timings["srs_load"]
    assert first.json == again.json and agg.resident_srs() == [str(a)]
    agg.start("k", vk, items[:2], b).result(60)
    assert agg.resident_srs() == [str(b)]  # srs_resident = 1: a was dropped
    shutil.copy(d / "a.srs", b)  # b rewritten in place with another SRS: read again, not served stale
    assert agg.start("k", vk, items[:2], b).result(60).json == first.json
    assert results == ["completed"] * 4
    agg.close()


def test_a_proof_that_does_not_verify_is_named_and_nothing_is_aggregated(case):
    vk, items, d = case
    agg = Aggregator(threads=1)
    bad = Item(items[1].public, items[2].proof, "job 'x' partition 1")
    with pytest.raises(InputError, match=r"1 of the 4 proofs do not verify .*: job 'x' partition 1$"):
        agg.start("k", vk, [items[0], bad, items[2], items[3]], d / "a.srs").result(60)
    with pytest.raises(InputError, match="3 proof"):
        agg.start("k", vk, items[:3], d / "a.srs")
    assert agg.running == 0
    agg.close()
    with pytest.raises(RuntimeError):  # closed: the daemon stops
        agg.start("k", vk, items, d / "a.srs")
    assert agg.running == 0


def test_backend_setting_picks_the_daemons_first_gpu(tmp_path):
    """[aggregate] backend: auto takes the first of the engine's devices with a GPU (Backend.gpu), else the CPU; cuda
    with no GPU is an error at start naming the setting; cpu never takes one."""
    from types import SimpleNamespace

    from snarkd.config import Config
    from snarkd.errors import DaemonError

    def cfg(backend):
        return Config.from_text(f'[aggregate]\nbackend = "{backend}"\n', str(tmp_path / "c.toml"), tmp_path, env={})

    dev0, dev1 = SimpleNamespace(index=0), SimpleNamespace(index=1)
    cpu, gpu0, gpu1 = SimpleNamespace(name="cpu", gpu=None), SimpleNamespace(name="cuda:0", gpu=dev0), \
        SimpleNamespace(name="cuda:1", gpu=dev1)
    assert Aggregator.from_config(cfg("auto"), None, devices=[cpu]).gpu is None
    assert Aggregator.from_config(cfg("auto"), None, devices=[gpu0, gpu1]).gpu is dev0
    assert Aggregator.from_config(cfg("cuda"), None, devices=[gpu1]).gpu is dev1
    assert Aggregator.from_config(cfg("cpu"), None, devices=[gpu0]).gpu is None
    with pytest.raises(DaemonError, match=r"\[aggregate\] backend"):
        Aggregator.from_config(cfg("cuda"), None, devices=[cpu])
    with pytest.raises(Exception, match="backend"):
        cfg("tpu")


def _swap_g2_powers_in_place(path, keep_mtime: bool = True) -> None:
    """Two G2 a-powers swapped, the body CRC recomputed, the file rewritten in place with its mtime restored
    (issue 33, finding 1: the resident SRS was not read again, and the aggregate returned did not verify)."""
    import os

    from snarkd.aggregate import srs as S
    from snarkd.formats import checked_header

    st = os.stat(path)
    data = path.read_bytes()
    hdr, off = checked_header.unpack(data, S.MAGIC, S.VERSION, "x", ValueError)
    s = S.read_srs(path, check_all=False)
    body = bytearray(data[off:])
    w, start = s.curve.g2_bytes, 4 * s.max_n * s.curve.g1_bytes
    i, j = start + 2 * w, start + 3 * w
    body[i : i + w], body[j : j + w] = body[j : j + w], body[i : i + w]
    hdr["body_crc32c"] = checked_header.crc32c(bytes(body))
    text = json.dumps(hdr, sort_keys=True, separators=(",", ":")).encode()  # padded to the old header's length
    new = checked_header.pack(S.MAGIC, S.VERSION, text.ljust(off - checked_header.PREFIX.size - 4)) + bytes(body)
    assert len(new) == len(data)
    with open(path, "r+b") as f:
        f.write(new)
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_resident_srs_rewritten_in_place_with_its_mtime_restored_is_read_again_and_refused(case, tmp_path):
    vk, items, d = case
    agg = Aggregator(threads=1)
    a = tmp_path / "a.srs"
    shutil.copy(d / "a.srs", a)
    first = agg.start("k", vk, items, a).result(60)
    assert "verify" in first.timings
    _swap_g2_powers_in_place(a)
    with pytest.raises(InputError, match=r"srs_path: .*G2 a-powers\[0\.\.4\) are not successive powers"):
        agg.start("k", vk, items, a).result(60)
    assert agg.resident_srs() == []
    agg.close()


def test_an_aggregate_that_does_not_verify_is_never_returned(case, monkeypatch):
    from snarkd.aggregate.files import AggregateNotVerified
    from snarkd.daemon import aggregation

    vk, items, d = case
    results = []
    agg = Aggregator(threads=1, observe=lambda *a: results.append(a[0]))
    real = aggregation.prover.aggregate

    def tampered(*a, **kw):
        out = real(*a, **kw)
        out.agg_c, out.final_c = out.final_c, out.agg_c
        return out

    monkeypatch.setattr(aggregation.prover, "aggregate", tampered)
    with pytest.raises(AggregateNotVerified, match="does not verify"):
        agg.start("k", vk, items, d / "a.srs").result(60)
    assert results == ["failed"]
    agg.close()


def test_more_proofs_than_the_srs_serves_are_refused_from_its_header(case, tmp_path):
    vk, items, d = case
    agg = Aggregator(threads=1)
    agg.check_size(4, d / "a.srs")
    with pytest.raises(InputError, match="serves powers of two from 2 to 4"):
        agg.check_size(1 << 18, d / "a.srs")
    with pytest.raises(InputError, match="power of two"):
        agg.check_size(3, d / "a.srs")
    agg.close()
