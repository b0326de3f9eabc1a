"""Key against circuit (snarkd.verifier.key_circuit): snarkjs's and snarkd's setups
both copy the .r1cs A and B into §4; a changed coefficient or circuit is named."""

from __future__ import annotations

import struct

import numpy as np
from containers import section_offset

from snarkd.formats.r1cs import read_r1cs
from snarkd.formats.zkey import read_zkey
from snarkd.setup.groth16_setup import setup
from snarkd.verifier.key_circuit import first_coef_mismatch


def test_snarkjs_keys_match_their_circuits(all_circuits):
    for case in all_circuits:
        with read_zkey(case.zkey) as z:
            assert first_coef_mismatch(z, read_r1cs(case.r1cs)) is None, case.name


def test_snarkd_setup_keys_match_their_circuit(chain_circuit, tmp_path):
    setup(chain_circuit.r1cs, tmp_path / "k.zkey", tmp_path / "vk.json", seed=b"test", progress=False)
    with read_zkey(tmp_path / "k.zkey") as z:
        assert first_coef_mismatch(z, read_r1cs(chain_circuit.r1cs)) is None


def test_entry_order_does_not_matter_but_values_do(chain_circuit, tmp_path):
    data = bytearray(chain_circuit.zkey.read_bytes())
    off = section_offset(data, 4)
    n = struct.unpack_from("<I", data, off)[0]
    entries = np.frombuffer(bytes(data[off + 4 : off + 4 + 44 * n]), dtype=np.uint8).reshape(n, 44)
    shuffled = entries[np.random.default_rng(1).permutation(n)]
    data[off + 4 : off + 4 + 44 * n] = shuffled.tobytes()
    (tmp_path / "shuffled.zkey").write_bytes(bytes(data))
    r1cs = read_r1cs(chain_circuit.r1cs)
    with read_zkey(tmp_path / "shuffled.zkey") as z:
        assert first_coef_mismatch(z, r1cs) is None
    # a circuit whose coefficient differs in one term: the same sizes, another circuit
    rdata = bytearray(chain_circuit.r1cs.read_bytes())
    coef = np.array([3 if int(r1cs.a.coefs[0][0]) == 2 else 2, 0, 0, 0], dtype=np.uint64)
    pos = rdata.find(r1cs.a.coefs[0].tobytes())
    rdata[pos : pos + 32] = coef.tobytes()
    (tmp_path / "other.r1cs").write_bytes(bytes(rdata))
    with read_zkey(chain_circuit.zkey) as z:
        msg = first_coef_mismatch(z, read_r1cs(tmp_path / "other.r1cs"))
    assert msg is not None and "matrix A" in msg
