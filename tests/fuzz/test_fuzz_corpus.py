"""Regression tests: the inputs that found bugs (tests/fuzz/corpus/<target>/NAME.bin,
with NAME.meta saying what each found and what it must give now)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import differential  # noqa: E402
import targets as T  # noqa: E402

CORPUS = sorted((HERE / "corpus").glob("*/*.bin"))


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    made = {}

    def get(name):
        if name not in made:
            made[name] = T.TARGETS[name](tmp_path_factory.mktemp(name))
        return made[name]

    return get


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_corpus_input(path, instances):
    meta = json.loads(path.with_suffix(".meta").read_text())
    target = instances(path.parent.name)
    case = T.Case(0, path.read_bytes(), path.stem, meta)
    assert target.run(case) == meta["expect"]
    if path.parent.name == "verify":
        texts = T.VerifyTarget.texts(case)
        [theirs] = differential.snarkjs_verify([texts])
        assert theirs == meta["snarkjs"]
        if theirs == "valid" and meta["expect"] != "valid":
            assert differential.classify(texts, _q(target, meta)) != "unexplained"


def _q(target, meta) -> int:
    from snarkd.curves.params import curve_by_name

    return curve_by_name(target.seeds[meta["seed"]][0]).q


@pytest.mark.slow
def test_prove_corpus_would_have_been_silent_wrong_proofs(instances, tmp_path):
    """What each prove corpus input did before the self-check: exit 0 and a proof snarkjs rejects."""
    from snarkd.cli import main

    target = instances("prove")
    results = []
    for path in sorted((HERE / "corpus" / "prove").glob("*.bin")):
        meta = json.loads(path.with_suffix(".meta").read_text())
        c, zk, wt, _, _ = target.seeds[meta["seed"]]
        key, wtns = tmp_path / "k.zkey", tmp_path / "w.wtns"
        key.write_bytes(path.read_bytes() if meta["part"] == "key" else zk)
        wtns.write_bytes(path.read_bytes() if meta["part"] == "wtns" else wt)
        proof, public = tmp_path / f"{path.stem}.proof.json", tmp_path / f"{path.stem}.public.json"
        assert main(["prove", "--no-verify", str(key), str(wtns), str(proof), str(public)]) == 0
        results.append({"vk": c.vk.read_bytes(), "public": public.read_bytes(), "proof": proof.read_bytes()})
    assert results
    assert differential.snarkjs_verify(results) == ["invalid"] * len(results)
