"""Differential fuzz: batch verification against the single verifier on mutated proofs and
public lists (tests/fuzz/mutate.py's JSON mutations). For every batch, either some item is bad
input for `verify` and the batch is InputError, or the batch names exactly the items `verify`
calls invalid."""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path

import pytest

from snarkd.errors import InputError
from snarkd.prover.oneshot import prove_files
from snarkd.verifier import verify
from snarkd.verifier.batch import verify_batch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import mutate  # noqa: E402

CASES = 100  # batches per curve (4 items, 2 mutated each): ~1.5 s of CPU


@pytest.fixture(scope="module")
def proofs(chain_circuit):
    vk = json.loads(chain_circuit.vk.read_text())
    items = []
    for _ in range(3):
        p = prove_files(chain_circuit.zkey, chain_circuit.wtns)
        items.append((p.public, p.proof))
    return vk, items


def _single(vk, public, proof):
    try:
        return verify(vk, public, proof)
    except InputError:
        return None


def test_batch_agrees_with_single_on_mutations(curve, proofs):
    vk, good = proofs
    q, r = mutate.Q[32 if curve == "bn128" else 48], mutate.R_BN if curve == "bn128" else mutate.R_BLS
    rng = random.Random(f"batch-fuzz-{curve}")
    kinds: dict[str, int] = {}
    for _ in range(CASES):
        items = [copy.deepcopy(good[i % len(good)]) for i in range(4)]
        for i in rng.sample(range(4), 2):
            public, proof = items[i]
            if rng.random() < 0.3:
                public, kind = mutate.mutate_json(public, rng, q, r)
            else:
                proof, kind = mutate.mutate_json(proof, rng, q, r)
            kinds[kind] = kinds.get(kind, 0) + 1
            items[i] = (public, proof)
        single = [_single(vk, p, pr) for p, pr in items]
        if None in single:
            with pytest.raises(InputError):
                verify_batch(vk, items)
        else:
            assert verify_batch(vk, items).bad == [i for i, ok in enumerate(single) if not ok], items
    assert len(kinds) >= 8  # the mutations reached many kinds
