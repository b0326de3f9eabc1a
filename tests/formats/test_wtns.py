"""wtns reader/writer against `snarkjs wtns export json`, and check_witness."""

from __future__ import annotations

import numpy as np
import pytest

from fmt_helpers import patch_section, wtns_json
from snarkd.curves.params import BLS12_381, BN254, curve_by_name
from snarkd.errors import FormatError, MismatchError
from snarkd.formats import check_witness, parse_wtns, read_wtns, read_zkey, write_wtns


def test_values_match_snarkjs(all_circuits):
    for case in all_circuits:
        w = read_wtns(case.wtns)
        assert w.prime == curve_by_name(case.curve).r
        assert w.values.dtype == np.uint64 and w.values.shape == (len(w), 4)
        assert w.to_ints() == [int(v) for v in wtns_json(case.wtns)], case.name


def test_zero_witness(zero_witness, chain_circuit):
    w = read_wtns(zero_witness)
    assert w.to_ints() == [int(v) for v in wtns_json(zero_witness)]
    assert (w.values == 0).all(axis=1).sum() >= 3
    with read_zkey(chain_circuit.zkey) as z:
        check_witness(w, z, str(zero_witness))


def test_write_is_byte_identical(all_circuits, tmp_path):
    for case in all_circuits:
        w = read_wtns(case.wtns)
        out = tmp_path / f"{case.name}.wtns"
        write_wtns(out, w.prime, w.values)
        assert out.read_bytes() == case.wtns.read_bytes()
        write_wtns(out, w.prime, w.to_ints())  # ints work too
        assert out.read_bytes() == case.wtns.read_bytes()


def test_parse_bytes(chain_circuit):
    data = chain_circuit.wtns.read_bytes()
    a, b = parse_wtns(data), read_wtns(chain_circuit.wtns)
    assert a.prime == b.prime and np.array_equal(a.values, b.values)
    assert parse_wtns(memoryview(data)).to_ints() == b.to_ints()
    with pytest.raises(FormatError) as e:
        parse_wtns(data[:-7], name="client 42 witness")
    assert "client 42 witness" in str(e.value) and "section 2 (values)" in str(e.value)
    with pytest.raises(FormatError) as e:
        parse_wtns(b"zkey" + data[4:])
    assert "<witness bytes>" in str(e.value) and "magic" in str(e.value)
    with pytest.raises(FormatError):
        parse_wtns(b"wt")


def test_header_n8(chain_circuit, tmp_path):
    p = tmp_path / "bad.wtns"
    p.write_bytes(patch_section(chain_circuit.wtns, 1, lambda b: (8).to_bytes(4, "little") + b[4:]))
    with pytest.raises(FormatError) as e:
        read_wtns(p)
    assert str(p) in str(e.value) and "section 1 (header)" in str(e.value) and "field element size 8" in str(e.value)


def test_count_vs_values_size(chain_circuit, tmp_path):
    p = tmp_path / "bad.wtns"
    p.write_bytes(patch_section(chain_circuit.wtns, 1, lambda b: b[:36] + (1000).to_bytes(4, "little")))
    with pytest.raises(FormatError) as e:
        read_wtns(p)
    assert str(p) in str(e.value) and "section 2 (values)" in str(e.value) and "nWitness 1000" in str(e.value)


# -- check_witness -------------------------------------------------------------


def test_check_ok(all_circuits):
    for case in all_circuits:
        with read_zkey(case.zkey) as z:
            check_witness(read_wtns(case.wtns), z, str(case.wtns))


def test_wrong_field(chain_circuit, tmp_path):
    w = read_wtns(chain_circuit.wtns)
    other = BLS12_381.r if w.prime == BN254.r else BN254.r
    p = tmp_path / "other.wtns"
    write_wtns(p, other, w.values)
    with read_zkey(chain_circuit.zkey) as z, pytest.raises(MismatchError) as e:
        check_witness(read_wtns(p), z, str(p))
    msg = str(e.value)
    assert str(p) in msg and "witness is for field" in msg and str(other) in msg and z.curve.name in msg


def test_wrong_length(chain_circuit, many_public_circuit):
    """A witness for another circuit on the same curve."""
    w = read_wtns(many_public_circuit.wtns)
    with read_zkey(chain_circuit.zkey) as z, pytest.raises(MismatchError) as e:
        check_witness(w, z, "w.wtns")
    assert "w.wtns" in str(e.value) and f"nVars = {z.n_vars}" in str(e.value) and f"{len(w)} values" in str(e.value)


def test_w0_not_one(chain_circuit, tmp_path):
    w = read_wtns(chain_circuit.wtns)
    vals = w.values.copy()
    vals[0] = [2, 0, 0, 0]
    with read_zkey(chain_circuit.zkey) as z, pytest.raises(MismatchError) as e:
        check_witness(type(w)(w.prime, vals), z, "w.wtns")
    assert "w.wtns" in str(e.value) and "w[0]" in str(e.value)


@pytest.mark.parametrize("offset", [0, 1, 2**64])
def test_noncanonical_value(chain_circuit, offset):
    w = read_wtns(chain_circuit.wtns)
    ints = w.to_ints()
    ints[5] = w.prime + offset
    vals = np.frombuffer(b"".join(v.to_bytes(32, "little") for v in ints), dtype="<u8").reshape(-1, 4)
    with read_zkey(chain_circuit.zkey) as z, pytest.raises(MismatchError) as e:
        check_witness(type(w)(w.prime, vals), z, "w.wtns")
    assert "w.wtns" in str(e.value) and "w[5]" in str(e.value) and "not canonical" in str(e.value)


def test_max_value_is_canonical(chain_circuit):
    w = read_wtns(chain_circuit.wtns)
    ints = w.to_ints()
    ints[5] = w.prime - 1
    vals = np.frombuffer(b"".join(v.to_bytes(32, "little") for v in ints), dtype="<u8").reshape(-1, 4)
    with read_zkey(chain_circuit.zkey) as z:
        check_witness(type(w)(w.prime, vals), z, "w.wtns")
