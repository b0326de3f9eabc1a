"""`snarkd prove / verify / export-vk` as users run them: files, exit codes, messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import oracle


def snarkd(*args, check=False):
    return subprocess.run([sys.executable, "-m", "snarkd", *map(str, args)], capture_output=True, text=True)


def test_prove_then_snarkjs_and_snarkd_verify(chain_circuit, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("prove", chain_circuit.zkey, chain_circuit.wtns, proof, public, "--timings")
    assert res.returncode == 0, res.stderr
    for phase in ("load", "spmv", "ntt", "msm_a", "msm_b2", "msm_h", "total"):
        assert phase in res.stderr
    # snarkjs writes one-space indented JSON; so do we
    assert proof.read_text().startswith('{\n "pi_a": [\n  "')
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    res = snarkd("verify", chain_circuit.vk, public, proof)
    assert res.returncode == 0, res.stdout + res.stderr
    bad = json.loads(proof.read_text())
    bad["pi_a"][1] = str(int(bad["pi_a"][1]) ^ 2)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert snarkd("verify", chain_circuit.vk, public, tmp_path / "bad.json").returncode == 1


@pytest.mark.slow
def test_export_vk_equals_snarkjs(all_circuits, tmp_path):
    for case in all_circuits:
        out = tmp_path / f"{case.name}.json"
        res = snarkd("export-vk", case.zkey, out)
        assert res.returncode == 0, res.stderr
        assert json.loads(out.read_text()) == json.loads(case.vk.read_text()), case.name


def test_missing_key_is_bad_input(chain_circuit, tmp_path):
    res = snarkd("prove", tmp_path / "nope.zkey", chain_circuit.wtns, tmp_path / "p.json", tmp_path / "q.json")
    assert res.returncode == 3
    assert "nope.zkey" in res.stderr
    assert not (tmp_path / "p.json").exists()


def test_witness_of_another_curve_is_rejected(curve, tmp_path):
    from cases import build_case

    other = "bls12381" if curve == "bn128" else "bn128"
    key = build_case("chain", curve)
    wrong = build_case("chain", other)
    res = snarkd("prove", key.zkey, wrong.wtns, tmp_path / "p.json", tmp_path / "q.json")
    assert res.returncode == 3, res.stderr
    assert str(wrong.wtns) in res.stderr
    assert not list(tmp_path.iterdir()), "nothing may be half-written"


def test_witness_of_another_circuit_is_rejected(curve, tmp_path):
    from cases import build_case

    key = build_case("chain", curve)
    other = build_case("many_public", curve)
    res = snarkd("prove", key.zkey, other.wtns, tmp_path / "p.json", tmp_path / "q.json")
    assert res.returncode == 3, res.stderr
    assert "witness" in res.stderr.lower()
    assert not list(tmp_path.iterdir())


def test_output_directory_missing(chain_circuit, tmp_path):
    res = snarkd("prove", chain_circuit.zkey, chain_circuit.wtns, tmp_path / "no" / "p.json", tmp_path / "q.json")
    assert res.returncode == 3
    assert "does not exist" in res.stderr


def test_verify_bad_json_is_bad_input(chain_circuit, tmp_path):
    (tmp_path / "garbage.json").write_text("{not json")
    res = snarkd("verify", chain_circuit.vk, tmp_path / "garbage.json", tmp_path / "garbage.json")
    assert res.returncode == 3
    assert "garbage.json" in res.stderr


@pytest.mark.slow
def test_verify_public_value_not_below_r_is_invalid(chain_circuit, tmp_path):
    from snarkd.curves import curve_by_name

    proof, public = chain_circuit.circuit.snarkjs_prove(chain_circuit.wtns, tmp_path)
    pub = json.loads(public.read_text())
    pub[0] = str(int(pub[0]) + curve_by_name(chain_circuit.curve).r)
    (tmp_path / "pub2.json").write_text(json.dumps(pub))
    assert snarkd("verify", chain_circuit.vk, tmp_path / "pub2.json", proof).returncode == 1


def test_help_and_docs_document_the_exit_codes():
    from snarkd.errors import EXIT_CODES

    res = snarkd("--help")
    assert res.returncode == 0
    assert "exit codes" in res.stdout and "bad input" in res.stdout
    res = snarkd("prove", "--help")
    assert "exit codes" in res.stdout
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    table = dict(re.findall(r"^\| (\d) \| (.*) \|$", page, re.M))
    assert {int(k): v for k, v in table.items()} == EXIT_CODES


@pytest.mark.slow
def test_backend_cpu_and_unavailable_cuda(chain_circuit, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("prove", "--backend", "cpu", chain_circuit.zkey, chain_circuit.wtns, proof, public)
    assert res.returncode == 0, res.stderr
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    from snarkd.prover.backend import cuda_device_count

    if cuda_device_count() == 0:
        # asking for a GPU this machine lacks: a usage error that says why, nothing written
        res = snarkd("prove", "--backend", "cuda", chain_circuit.zkey, chain_circuit.wtns, tmp_path / "p2.json", tmp_path / "q2.json")
        assert res.returncode == 2, res.stderr
        assert "cuda backend" in res.stderr
        assert not (tmp_path / "p2.json").exists()
        # auto falls back to the CPU
        res = snarkd("prove", "--backend", "auto", chain_circuit.zkey, chain_circuit.wtns, tmp_path / "p3.json", tmp_path / "q3.json")
        assert res.returncode == 0, res.stderr
        assert oracle.snarkjs_verify(chain_circuit.vk, tmp_path / "q3.json", tmp_path / "p3.json")


def test_backend_is_local_only(chain_circuit, tmp_path):
    res = snarkd("prove", "--backend", "cpu", "--addr", "127.0.0.1:1", "--key", "k", chain_circuit.wtns, tmp_path / "p", tmp_path / "q")
    assert res.returncode == 3 and "--backend is for local proving" in res.stderr
