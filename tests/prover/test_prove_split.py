"""The prover's split API (synthesize / device_stage / finalize) on the CPU:
deferring the sparse products to the device stage (sparse=False, what the
engine does for GPU devices) gives the same proof."""

from __future__ import annotations

from pathlib import Path

import pytest

from snarkd.formats.wtns import read_wtns
from snarkd.prover import ProvingKey, device_stage, finalize, synthesize
from snarkd.prover.timing import PhaseTimer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("curve", ["bn128", "bls12381"])
def test_sparse_products_deferred_to_device_stage(curve):
    d = EXAMPLES / f"chain-{curve}"
    wtns = read_wtns(d / "chain.wtns")
    proofs = []
    with ProvingKey.load(d / "chain.zkey") as key:
        for sparse in (True, False):
            timer = PhaseTimer()
            synth = synthesize(key, wtns, timer, sparse=sparse)
            assert (synth.a is None) == (not sparse)
            sums = device_stage(key, synth, timer, 0, with_g2=False)
            assert synth.a is None and synth.b is None  # dropped once used
            assert "spmv" in timer.ms
            proofs.append(finalize(key, synth.witness, sums, timer, 0, 11, 22).proof)
    assert proofs[0] == proofs[1]
