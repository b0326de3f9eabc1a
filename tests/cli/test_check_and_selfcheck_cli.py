"""`snarkd check` and the self-check of `snarkd prove`, as users run them: exit codes,
messages, nothing written. Proofs are judged by `snarkjs groth16 verify`."""

from __future__ import annotations

import pytest

import oracle
from clirun import snarkd
from containers import section_offset

from snarkd.formats.wtns import read_wtns, write_wtns


def n8q(case) -> int:
    return 48 if case.curve == "bls12381" else 32


def damaged_key(case, tmp_path, sid: int, index: int, how: str = "flip"):
    """The key with point `index` of section `sid` (a G1 section) damaged."""
    data = bytearray(case.zkey.read_bytes())
    w = 2 * n8q(case)
    p = section_offset(data, sid) + index * w
    if how == "flip":
        data[p + 1] ^= 0x10  # x changes: off the curve
    else:  # swap with the next point: both stay on the curve
        data[p : p + 2 * w] = data[p + w : p + 2 * w] + data[p : p + w]
    path = tmp_path / f"{how}-{sid}-{index}.zkey"
    path.write_bytes(bytes(data))
    return path


def edited_witness(case, tmp_path, index: int):
    w = read_wtns(case.wtns)
    values = w.to_ints()
    values[index] = (values[index] + 1) % w.prime
    path = tmp_path / f"edited-{index}.wtns"
    write_wtns(path, w.prime, values)
    return path


def test_check_sound_key_and_witness(chain_circuit):
    res = snarkd("check", chain_circuit.zkey, chain_circuit.r1cs, chain_circuit.wtns)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "satisfies all 10 constraints" in res.stdout
    assert res.stdout.count("  ok    section") == 8  # 7 of points, 1 of coefficients against the circuit


@pytest.mark.slow
def test_check_names_the_damaged_point(chain_circuit, tmp_path):
    key = damaged_key(chain_circuit, tmp_path, 8, 4)  # C[4]
    res = snarkd("check", key)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL  section 8 (C): 10 G1 points: point 4 is not on the" in res.stdout
    quiet = snarkd("check", "-q", key)
    assert quiet.returncode == 1 and quiet.stdout.splitlines() == [ln for ln in res.stdout.splitlines() if "FAIL " in ln]


def test_check_names_the_first_failing_constraint(chain_circuit, tmp_path):
    # s[i+1] = s[i]^2 + k + i: editing the last signal breaks only the last constraint it enters
    w = edited_witness(chain_circuit, tmp_path, 12)
    res = snarkd("check", chain_circuit.zkey, chain_circuit.r1cs, w)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL: does not satisfy" in res.stdout and "constraint " in res.stdout
    assert "(A·w)·(B·w) != C·w" in res.stdout


@pytest.mark.slow
def test_check_bad_input_and_usage(chain_circuit, many_public_circuit, tmp_path):
    res = snarkd("check", chain_circuit.zkey, many_public_circuit.r1cs, chain_circuit.wtns)
    assert res.returncode == 3 and "nWires" in res.stderr, res.stderr
    res = snarkd("check", tmp_path / "none.zkey")
    assert res.returncode == 3 and "none.zkey" in res.stderr
    res = snarkd("check", chain_circuit.zkey, chain_circuit.r1cs)
    assert res.returncode == 2 and "usage" in res.stderr


def test_prove_refuses_a_key_with_a_point_off_the_curve(chain_circuit, tmp_path):
    key = damaged_key(chain_circuit, tmp_path, 5, 3)  # A[3]
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("prove", key, chain_circuit.wtns, proof, public)
    assert res.returncode == 4, res.stderr
    assert "self-check failed" in res.stderr and "key is damaged" in res.stderr
    assert "section 5 (A): point 3 is not on the" in res.stderr
    assert not proof.exists() and not public.exists()


@pytest.mark.slow
def test_prove_refuses_an_unsatisfying_witness_and_no_verify_shows_why(chain_circuit, tmp_path):
    w = edited_witness(chain_circuit, tmp_path, 7)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("prove", chain_circuit.zkey, w, proof, public)
    assert res.returncode == 4, res.stderr
    assert "does not satisfy the circuit" in res.stderr and "snarkd check" in res.stderr
    assert not proof.exists() and not public.exists()
    # without the self-check the same inputs give exit 0 and a proof snarkjs rejects
    res = snarkd("prove", "--no-verify", chain_circuit.zkey, w, proof, public)
    assert res.returncode == 0, res.stderr
    assert not oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    # and `snarkd check` tells which of the two causes it was
    res = snarkd("check", chain_circuit.zkey, chain_circuit.r1cs, w)
    assert res.returncode == 1 and "does not satisfy" in res.stdout


def test_prove_refuses_a_key_damaged_on_the_curve(chain_circuit, tmp_path):
    key = damaged_key(chain_circuit, tmp_path, 9, 2, how="swap")  # H[2] <-> H[3]
    res = snarkd("prove", key, chain_circuit.wtns, tmp_path / "p.json", tmp_path / "q.json")
    assert res.returncode == 4, res.stderr
    assert "Likely cause" in res.stderr
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.slow
def test_prove_self_check_is_timed_and_proofs_verify(chain_circuit, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("prove", "--timings", chain_circuit.zkey, chain_circuit.wtns, proof, public)
    assert res.returncode == 0, res.stderr
    assert "verify" in res.stderr
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)


@pytest.mark.slow
def test_check_names_a_key_not_made_from_the_circuit(chain_circuit, tmp_path):
    data = bytearray(chain_circuit.zkey.read_bytes())
    e = section_offset(data, 4) + 4 + 44 * 3  # coefficient entry 3: its value
    data[e + 12 : e + 44] = (5).to_bytes(32, "little")
    key = tmp_path / "coef.zkey"
    key.write_bytes(bytes(data))
    res = snarkd("check", key, chain_circuit.r1cs, chain_circuit.wtns)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL  section 4 (coefs)" in res.stdout and "the key's coefficient is not the circuit's" in res.stdout
    assert "satisfies all 10 constraints" in res.stdout  # the witness is fine: the key is not
    # and prove's self-check refuses the proof this key gives
    res = snarkd("prove", key, chain_circuit.wtns, tmp_path / "p.json", tmp_path / "q.json")
    assert res.returncode == 4 and "self-check failed" in res.stderr
