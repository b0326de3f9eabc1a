"""snarkd's proofs must pass `snarkjs groth16 verify`, on every fixture circuit and both curves."""

from __future__ import annotations

import json

import pytest

import oracle
from snarkd.formats.wtns import read_wtns
from snarkd.prover import ProvingKey, prove, write_proof


def _prove_to(tmp_path, zkey, wtns, **kw):
    with ProvingKey.load(zkey) as key:
        result = prove(key, read_wtns(wtns), **kw)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    write_proof(result, proof, public)
    return result, proof, public


@pytest.mark.slow
def test_every_fixture_circuit_verifies_with_snarkjs(all_circuits, tmp_path):
    for case in all_circuits:
        out = tmp_path / case.name
        out.mkdir()
        result, proof, public = _prove_to(out, case.zkey, case.wtns)
        assert oracle.snarkjs_verify(case.vk, public, proof), f"{case.name} ({case.curve}) rejected by snarkjs"
        assert result.proof["curve"] == case.curve
        assert result.proof["protocol"] == "groth16"


@pytest.mark.slow
def test_public_json_matches_snarkjs(all_circuits, tmp_path):
    for case in all_circuits:
        out = tmp_path / case.name
        out.mkdir()
        _, _, public = _prove_to(out, case.zkey, case.wtns)
        _, sj_public = case.circuit.snarkjs_prove(case.wtns, out)
        assert json.loads(public.read_text()) == json.loads(sj_public.read_text())


@pytest.mark.slow
def test_witness_with_zeros_verifies(chain_circuit, zero_witness, tmp_path):
    _, proof, public = _prove_to(tmp_path, chain_circuit.zkey, zero_witness)
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)


@pytest.mark.slow
def test_rows_filling_the_domain_exactly(exact_circuit, tmp_path):
    from snarkd.formats.r1cs import read_r1cs_header
    from snarkd.formats.zkey import read_zkey

    hdr = read_r1cs_header(exact_circuit.r1cs)
    zk = read_zkey(exact_circuit.zkey)
    assert hdr.n_constraints + zk.n_public + 1 == zk.domain_size
    _, proof, public = _prove_to(tmp_path, exact_circuit.zkey, exact_circuit.wtns)
    assert oracle.snarkjs_verify(exact_circuit.vk, public, proof)


def test_blinding_is_fresh_and_reproducible(chain_circuit, tmp_path):
    with ProvingKey.load(chain_circuit.zkey) as key:
        w = read_wtns(chain_circuit.wtns)
        p1 = prove(key, w).proof
        p2 = prove(key, w).proof
        p3 = prove(key, w, r=12345, s=678).proof
        p4 = prove(key, w, r=12345, s=678).proof
    assert p1["pi_a"] != p2["pi_a"], "r must come fresh from the CSPRNG on every proof"
    assert p3 == p4


@pytest.mark.slow
def test_blinding_edge_values_still_verify(chain_circuit, tmp_path):
    """r = s = 0 and r = s = order-1 exercise the infinity and wrap-around paths."""
    from snarkd.curves import curve_by_name

    order = curve_by_name(chain_circuit.curve).r
    for r, s in [(0, 0), (order - 1, order - 1), (1, 0)]:
        out = tmp_path / f"rs{r % 7}{s % 7}"
        out.mkdir()
        _, proof, public = _prove_to(out, chain_circuit.zkey, chain_circuit.wtns, r=r, s=s)
        assert oracle.snarkjs_verify(chain_circuit.vk, public, proof), (r, s)


def test_single_thread_equals_multi_thread(chain_circuit):
    with ProvingKey.load(chain_circuit.zkey) as key:
        w = read_wtns(chain_circuit.wtns)
        assert prove(key, w, threads=1, r=7, s=9).proof == prove(key, w, threads=3, r=7, s=9).proof


def test_timings_name_every_phase(chain_circuit):
    with ProvingKey.load(chain_circuit.zkey) as key:
        t = prove(key, read_wtns(chain_circuit.wtns)).timings
    for phase in ("check", "spmv", "ntt", "h", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h", "assemble"):
        assert phase in t and t[phase] >= 0.0


@pytest.mark.slow
def test_unsatisfying_witness_gives_a_proof_snarkjs_rejects(chain_circuit, tmp_path):
    """snarkjs's algorithm never reads C: a wrong witness yields a proof that fails verification."""
    from snarkd.formats.wtns import Witness

    w = read_wtns(chain_circuit.wtns)
    values = w.values.copy()
    values[-1, 0] ^= 1  # change one internal signal
    with ProvingKey.load(chain_circuit.zkey) as key:
        result = prove(key, Witness(prime=w.prime, values=values))
    write_proof(result, tmp_path / "p.json", tmp_path / "pub.json")
    assert not oracle.snarkjs_verify(chain_circuit.vk, tmp_path / "pub.json", tmp_path / "p.json")


@pytest.mark.parametrize("switch", ["glv", "gls"])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
def test_glv_split_gives_the_same_proof(chain_circuit, tmp_path, simd, switch):
    """The G1 MSMs (A, B1, C, H; switch glv) or the G2 MSM (B2; switch gls) with the
    endomorphism split forced on equal the plain ones byte for byte (fixed blinding), and
    snarkjs accepts the split proof."""
    from snarkd.native import _core

    set_split = _core._set_glv if switch == "glv" else _core._set_gls
    prev_simd, prev_split = _core._set_simd52(simd), set_split(0)
    try:
        with ProvingKey.load(chain_circuit.zkey) as key:
            w = read_wtns(chain_circuit.wtns)
            plain = prove(key, w, r=31, s=47).proof
            set_split(2)
            split = prove(key, w, r=31, s=47).proof
        assert split == plain
        _, proof, public = _prove_to(tmp_path, chain_circuit.zkey, chain_circuit.wtns)
        assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    finally:
        _core._set_simd52(prev_simd)
        set_split(prev_split)
