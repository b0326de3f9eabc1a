"""The engine actor's own calls, in this process (no Ray cluster): keys by path or shipped, proofs that
snarkjs accepts from read-only witnesses (as the object store hands them out), failures with their kind."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install -e '.[test,cluster]')")

import oracle  # noqa: E402
from snarkd.cluster.actor import EngineActor, ProveError  # noqa: E402
from snarkd.cluster.keys import missing_path, spec_of  # noqa: E402
from snarkd.config import EngineConfig  # noqa: E402
from snarkd.engine import KeyStore  # noqa: E402
from snarkd.formats.wtns import read_wtns, wtns_bytes  # noqa: E402


pytestmark = pytest.mark.slow  # Ray engine actors: the slow tier (pytest -m "not slow" leaves it out)


@pytest.fixture
def actor(tmp_path):
    settings = {**EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1).__dict__, "wasm_cache": "off"}
    a = EngineActor("a1@test", settings, key_cache=str(tmp_path / "cache"))
    yield a
    a.stop(0)


def front_spec(zkey):
    lk = KeyStore().load("k", str(zkey))
    try:
        return spec_of(lk)
    finally:
        lk.key.close()


def readonly(w):
    w.values.setflags(write=False)  # what an actor gets from the object store
    return w


def check(case, tmp_path, reply) -> bool:
    (tmp_path / "proof.json").write_text(json.dumps(reply["proof"]))
    (tmp_path / "public.json").write_text(json.dumps(reply["public"]))
    return oracle.snarkjs_verify(case.vk, tmp_path / "public.json", tmp_path / "proof.json")


def test_the_actor_applies_cpu_ifma_from_its_config(chain_circuit, tmp_path):
    """[cpu] ifma = off in the settings the front sends: the actor's process runs the scalar kernels (the core
    and native witnesses), and its proofs are still accepted."""
    from snarkd.native import _core, _witness

    before = _core.uses_simd52(), _witness.uses_simd52()
    settings = {**EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1).__dict__, "wasm_cache": "off",
                "ifma": "off"}
    a = EngineActor("a9@test", settings, key_cache=str(tmp_path / "cache"))
    try:
        assert not _core.uses_simd52() and not _witness.uses_simd52()
        a.load_key("k", front_spec(chain_circuit.zkey).plain())
        assert check(chain_circuit, tmp_path, a.prove("k", "job.0.1", witness=readonly(read_wtns(chain_circuit.wtns))))
    finally:
        a.stop(0)
        _core.set_ifma(before[0] or _core.cpu_has_simd52())
        _witness.set_ifma(before[1] or _core.cpu_has_simd52())


def test_the_actor_applies_cpu_huge_pages_from_its_config(tmp_path):
    """[cpu] huge_pages = off in the settings the front sends: the actor's process advises no huge pages, in the core
    and in compiled witnesses."""
    from snarkd.native import _core, _witness

    before = _core.uses_huge_pages(), _witness.huge_pages()
    settings = {**EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1).__dict__, "wasm_cache": "off",
                "huge_pages": "off"}
    a = EngineActor("a10@test", settings, key_cache=str(tmp_path / "cache"))
    try:
        assert not _core.uses_huge_pages() and not _witness.huge_pages()
    finally:
        a.stop(0)
        _core.set_huge_pages(before[0])
        _witness.set_huge_pages(before[1])


def test_key_by_path_and_a_proof_snarkjs_accepts(actor, chain_circuit, tmp_path):
    spec = front_spec(chain_circuit.zkey)
    info = actor.load_key("k", spec.plain())
    assert info["vk_digest"] == spec.vk_digest and not info["shipped"] and info["curve"] == chain_circuit.curve
    reply = actor.prove("k", "job.0.1", witness=readonly(read_wtns(chain_circuit.wtns)))
    assert check(chain_circuit, tmp_path, reply)
    assert reply["timings"]["total"] > 0 and all(s["worker"].startswith("a1@test/") for s in reply["spans"])
    assert actor.status()["engine"].jobs.completed == 1


def test_a_shipped_key_is_written_once_to_the_node_cache(actor, tmp_path):
    from cases import build_case

    case = build_case("chain", "bn128")
    spec = front_spec(case.zkey)
    data = np.fromfile(case.zkey, dtype=np.uint8)
    data.setflags(write=False)
    info = actor.load_key("s", spec.plain(), (data, None))
    cached = tmp_path / "cache" / f"{spec.vk_digest}-{spec.size}.zkey"
    assert info["shipped"] and info["path"] == str(cached) and cached.read_bytes() == case.zkey.read_bytes()
    mtime = cached.stat().st_mtime_ns
    actor.load_key("s", spec.plain(), (data, None))  # a second actor of the node (or a reload): no rewrite
    assert cached.stat().st_mtime_ns == mtime
    assert check(case, tmp_path, actor.prove("s", "t.0.1", witness=readonly(read_wtns(case.wtns))))


def test_a_key_missing_or_different_on_the_node_is_refused(actor, tmp_path):
    from cases import build_case

    bn, bls = build_case("chain", "bn128"), build_case("chain", "bls12381")
    spec = front_spec(bn.zkey).plain()
    with pytest.raises(ProveError) as exc:
        actor.load_key("k", {**spec, "path": str(tmp_path / "nowhere.zkey")})
    assert exc.value.kind == "key_absent" and missing_path(exc.value) and "nowhere.zkey" in str(exc.value)
    with pytest.raises(ProveError) as exc:
        actor.load_key("k", {**spec, "path": str(bls.zkey)})  # same path on this node, another key
    assert exc.value.kind == "key_differs" and missing_path(exc.value)
    assert actor.status()["keys"] == []  # never kept, never proved with


def test_failures_come_back_with_their_kind(actor):
    from cases import build_case

    case = build_case("chain", "bn128")
    actor.load_key("k", front_spec(case.zkey).plain())
    w = read_wtns(case.wtns)
    vals = w.to_ints()
    vals[2] = w.prime  # not canonical
    from snarkd.formats.wtns import parse_wtns

    with pytest.raises(ProveError) as exc:
        actor.prove("k", "bad.0.1", witness=parse_wtns(wtns_bytes(w.prime, vals)))
    assert exc.value.kind == "input" and "not canonical" in exc.value.message
    with pytest.raises(ProveError) as exc:
        actor.prove("nope", "x.0.1", witness=w)
    assert exc.value.kind == "not_found"  # the front routes it to another actor (front.ELSEWHERE)
    assert actor.unload_key("k") and not actor.unload_key("k")
