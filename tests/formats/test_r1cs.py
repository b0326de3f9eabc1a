"""r1cs reader against `snarkjs r1cs info` / `snarkjs r1cs export json`."""

from __future__ import annotations

import re

import numpy as np
import pytest

import oracle
from fmt_helpers import join, patch_section, r1cs_json, split
from snarkd.curves.params import curve_by_name
from snarkd.errors import FormatError
from snarkd.formats import read_r1cs, read_r1cs_header


def _info(r1cs) -> dict:
    out = oracle.snarkjs("r1cs", "info", r1cs).stdout
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"# of (\w[\w ]*?): (\d+)", out)}


@pytest.mark.slow
def test_header_matches_snarkjs_info(chain_circuit):
    hdr = read_r1cs_header(chain_circuit.r1cs)
    info = _info(chain_circuit.r1cs)
    assert hdr.n_wires == info["Wires"]
    assert hdr.n_constraints == info["Constraints"]
    assert hdr.n_prv_in == info["Private Inputs"]
    assert hdr.n_pub_in == info["Public Inputs"]
    assert hdr.n_pub_out == info["Outputs"]
    assert hdr.n_labels == info["Labels"]
    assert hdr.curve is curve_by_name(chain_circuit.curve)
    assert hdr.prime == hdr.curve.r and hdr.field_size == 32


def test_constraint_counts(all_circuits):
    """circom --O1 keeps N quadratic constraints of the chain (signal = signal ones go)."""
    by = {c.name: read_r1cs_header(c.r1cs) for c in all_circuits}
    from cases import CHAIN_N, EXACT_CHAIN_N, MANY_PUBLIC_N

    assert by["chain"].n_constraints == CHAIN_N
    assert (by["chain"].n_pub_out, by["chain"].n_pub_in, by["chain"].n_prv_in) == (1, 1, 1)
    assert by["chain_exact"].n_constraints == EXACT_CHAIN_N
    assert by["no_public"].n_public == 0
    assert by["many_public"].n_pub_in == MANY_PUBLIC_N and by["many_public"].n_pub_out == 4
    assert by["circomlib_cmp"].n_constraints > 30  # LessThan(16) + Num2Bits(16)


def test_exact_fill(exact_circuit):
    """m + nPublic + 1 == domain size, the edge the prover must handle."""
    from snarkd.formats import read_zkey

    hdr = read_r1cs_header(exact_circuit.r1cs)
    rows = hdr.n_constraints + hdr.n_public + 1
    assert rows & (rows - 1) == 0, rows
    with read_zkey(exact_circuit.zkey) as z:
        assert z.domain_size == rows
    # set up at the minimal ptau power that snarkjs accepts
    assert oracle.ptau_power_for(exact_circuit.r1cs) == z.domain_power
    assert exact_circuit.circuit.dir.name.endswith(f"-{z.domain_power}")


def test_ptau_power_for_matches_domain(all_circuits):
    from snarkd.formats import read_zkey

    for case in all_circuits:
        with read_zkey(case.zkey) as z:
            assert oracle.ptau_power_for(case.r1cs) == max(z.domain_power, 2), case.name


def test_constraints_match_snarkjs_export(all_circuits):
    for case in all_circuits:
        r = read_r1cs(case.r1cs)
        js = r1cs_json(case.r1cs)
        assert js["nConstraints"] == r.header.n_constraints
        assert int(js["prime"]) == r.header.prime
        assert len(js["constraints"]) == r.header.n_constraints
        for i, con in enumerate(js["constraints"]):
            for mat, lc in zip(r.matrices, con):
                assert dict(mat.row(i)) == {int(w): int(v) for w, v in lc.items()}, (case.name, i)
        for mat in r.matrices:
            assert mat.row_ptr.shape == (r.header.n_constraints + 1,)
            assert mat.wires.dtype == np.uint32 and mat.coefs.dtype == np.uint64
            assert mat.coefs.shape == (mat.nnz, 4)


def test_sections_by_id_not_position(chain_circuit, tmp_path):
    magic, version, secs = split(chain_circuit.r1cs)
    assert [s for s, _ in secs][:3] == [2, 1, 3]  # circom's order
    p = tmp_path / "reordered.r1cs"
    p.write_bytes(join(magic, version, sorted(secs, key=lambda s: -s[0])))
    a, b = read_r1cs(chain_circuit.r1cs), read_r1cs(p)
    assert a.header == b.header
    for x, y in zip(a.matrices, b.matrices):
        assert np.array_equal(x.row_ptr, y.row_ptr) and np.array_equal(x.wires, y.wires) and np.array_equal(x.coefs, y.coefs)


def _bad(tmp_path, data: bytes):
    p = tmp_path / "bad.r1cs"
    p.write_bytes(data)
    return p


def test_unknown_prime(chain_circuit, tmp_path):
    p = _bad(tmp_path, patch_section(chain_circuit.r1cs, 1, lambda b: b[:4] + (7).to_bytes(32, "little") + b[36:]))
    with pytest.raises(FormatError) as e:
        read_r1cs_header(p)
    assert str(p) in str(e.value) and "section 1 (header)" in str(e.value) and "prime 7" in str(e.value)


def test_truncated_constraints(chain_circuit, tmp_path):
    magic, version, secs = split(chain_circuit.r1cs)
    secs = [[s, b[:-40] if s == 2 else b] for s, b in secs]
    p = _bad(tmp_path, join(magic, version, secs))
    with pytest.raises(FormatError) as e:
        read_r1cs(p)
    assert str(p) in str(e.value) and "section 2 (constraints)" in str(e.value) and "truncated" in str(e.value)


def test_wire_out_of_range(chain_circuit, tmp_path):
    # first constraint, matrix A: u32 count, then u32 wire
    p = _bad(tmp_path, patch_section(chain_circuit.r1cs, 2, lambda b: b[:4] + (999).to_bytes(4, "little") + b[8:]))
    with pytest.raises(FormatError) as e:
        read_r1cs(p)
    assert "section 2 (constraints)" in str(e.value) and "wire 999" in str(e.value)


def test_noncanonical_coefficient(chain_circuit, tmp_path):
    r = read_r1cs_header(chain_circuit.r1cs).prime
    p = _bad(tmp_path, patch_section(chain_circuit.r1cs, 2, lambda b: b[:8] + (r + 1).to_bytes(32, "little") + b[40:]))
    with pytest.raises(FormatError) as e:
        read_r1cs(p)
    assert "section 2 (constraints)" in str(e.value) and "not below the prime" in str(e.value)
