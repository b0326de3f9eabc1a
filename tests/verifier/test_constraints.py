"""Witness against circuit (snarkd.verifier.constraints, native _check), judged by
`snarkjs wtns check` (its verdict and the constraint where it stops) and Python integers."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import oracle
from snarkd.errors import MismatchError
from snarkd.formats.r1cs import read_r1cs
from snarkd.formats.wtns import Witness, read_wtns, write_wtns
from snarkd.verifier.constraints import check_witness_fits_r1cs, first_unsatisfied


def snarkjs_wtns_check(r1cs, wtns) -> int | None:
    """None if snarkjs says the witness is correct, else the constraint it stops at."""
    proc = oracle.snarkjs("wtns", "check", r1cs, wtns, check=False)
    text = proc.stdout + proc.stderr
    if "WITNESS IS CORRECT" in text:
        return None
    m = re.search(r"aborting checking process at constraint (\d+)", text)
    assert m, text
    return int(m.group(1))


def reference_first_unsatisfied(r1cs, values: list[int]) -> int | None:
    p = r1cs.header.prime
    for i in range(r1cs.header.n_constraints):
        a, b, c = (sum(coef * values[w] for w, coef in m.row(i)) % p for m in r1cs.matrices)
        if a * b % p != c:
            return i
    return None


def test_fixture_witnesses_satisfy_their_circuits(all_circuits):
    for case in all_circuits:
        r1cs, w = read_r1cs(case.r1cs), read_wtns(case.wtns)
        check_witness_fits_r1cs(r1cs, w)
        assert first_unsatisfied(r1cs, w, threads=2) is None, case.name


@pytest.mark.slow
def test_edited_witness_names_the_constraint_snarkjs_names(circomlib_circuit, many_public_circuit, tmp_path):
    rng = random.Random(5)
    failing = 0
    for case in (circomlib_circuit, many_public_circuit):
        r1cs, w = read_r1cs(case.r1cs), read_wtns(case.wtns)
        for k in range(2):
            values = w.to_ints()
            i = rng.randrange(1, len(values))
            values[i] = (values[i] + rng.randrange(1, 1000)) % w.prime
            path = tmp_path / f"{case.name}-{k}.wtns"
            write_wtns(path, w.prime, values)
            got = first_unsatisfied(r1cs, read_wtns(path), threads=2)
            ref = reference_first_unsatisfied(r1cs, values)
            assert (got.index if got else None) == ref
            assert snarkjs_wtns_check(case.r1cs, path) == ref
            if got:
                failing += 1
                p = w.prime
                assert got.a * got.b % p != got.c
                assert (got.a, got.b, got.c) == tuple(
                    sum(coef * values[x] for x, coef in m.row(got.index)) % p for m in r1cs.matrices)
    assert failing >= 2  # the edits hit constrained signals


def test_misfit_witness_is_a_mismatch(chain_circuit, many_public_circuit):
    r1cs = read_r1cs(chain_circuit.r1cs)
    with pytest.raises(MismatchError, match="nWires"):
        check_witness_fits_r1cs(r1cs, read_wtns(many_public_circuit.wtns))
    w = read_wtns(chain_circuit.wtns)
    with pytest.raises(MismatchError, match=r"w\[0\]"):
        check_witness_fits_r1cs(r1cs, Witness(w.prime, np.zeros_like(w.values)))


def test_native_scan_refuses_inconsistent_arrays(chain_circuit):
    from snarkd.native import _check

    r1cs, w = read_r1cs(chain_circuit.r1cs), read_wtns(chain_circuit.wtns)
    mod = getattr(_check, r1cs.header.curve.native)
    mats = [(m.row_ptr, m.wires, m.coefs) for m in r1cs.matrices]
    with pytest.raises(ValueError, match="wire"):
        mod.r1cs_first_unsatisfied(*mats, w.values[:-3])  # witness too short for the wires
    bad_ptr = mats[0][0].copy()
    bad_ptr[-1] += 1
    with pytest.raises(ValueError, match="row_ptr"):
        mod.r1cs_first_unsatisfied((bad_ptr, *mats[0][1:]), *mats[1:], w.values)
    big = w.values.copy()
    big[1] = [2**64 - 1] * 4
    with pytest.raises(ValueError, match="not below r"):
        mod.r1cs_first_unsatisfied(*mats, big)
