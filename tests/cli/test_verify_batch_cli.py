"""`snarkd verify --batch VK PUBLIC PROOF [PUBLIC PROOF ...]`: exit codes 0/1/2/3 and the names printed."""

from __future__ import annotations

import json

import pytest

from clirun import snarkd
from snarkd.prover.oneshot import prove_files


@pytest.fixture(scope="module")
def files(chain_circuit, tmp_path_factory):
    """vk.json and three valid (public, proof) file pairs, plus a bad proof and a broken file."""
    d = tmp_path_factory.mktemp("batch-cli")
    vk = d / "vk.json"
    vk.write_text(chain_circuit.vk.read_text())
    pairs = []
    for i in range(3):
        p = prove_files(chain_circuit.zkey, chain_circuit.wtns)
        (d / f"public{i}.json").write_text(json.dumps(p.public))
        (d / f"proof{i}.json").write_text(json.dumps(p.proof))
        pairs += [d / f"public{i}.json", d / f"proof{i}.json"]
    bad = json.loads((d / "proof1.json").read_text())
    bad["pi_c"] = json.loads((d / "proof2.json").read_text())["pi_c"]
    (d / "bad_proof.json").write_text(json.dumps(bad))
    public = json.loads((d / "public0.json").read_text())
    public[0] = str(int(public[0]) + 1)
    (d / "bad_public.json").write_text(json.dumps(public))
    (d / "broken.json").write_text('{"pi_a": [')
    return d, vk, pairs


def test_all_valid_exit_0(files):
    _, vk, pairs = files
    out = snarkd("verify", "--batch", vk, *pairs)
    assert out.returncode == 0, out.stderr
    assert "OK: all 3 proofs are valid" in out.stdout
    assert out.stderr == ""


def test_bad_pairs_named_exit_1(files):
    d, vk, pairs = files
    args = [*pairs[:2], d / "public1.json", d / "bad_proof.json", *pairs[4:], d / "bad_public.json", d / "proof2.json"]
    out = snarkd("verify", "--batch", vk, *args)
    assert out.returncode == 1
    named = [line for line in out.stderr.splitlines() if line.startswith("INVALID:")]
    assert named == [f"INVALID: {d / 'public1.json'} {d / 'bad_proof.json'}: proof does not verify",
                     f"INVALID: {d / 'bad_public.json'} {d / 'proof2.json'}: proof does not verify"]
    assert "2 of 4 proofs do not verify" in out.stdout


def test_malformed_file_exit_3_naming_it(files):
    d, vk, pairs = files
    out = snarkd("verify", "--batch", vk, *pairs, d / "public0.json", d / "broken.json")
    assert out.returncode == 3
    assert "broken.json" in out.stderr
    out = snarkd("verify", "--batch", vk, *pairs, d / "public0.json", d / "missing.json")
    assert out.returncode == 3 and "missing.json" in out.stderr


def test_usage_errors_exit_2(files):
    _, vk, pairs = files
    out = snarkd("verify", "--batch", vk, *pairs[:3])
    assert out.returncode == 2 and "odd number" in out.stderr
    out = snarkd("verify", vk, *pairs[:4])  # several pairs without --batch
    assert out.returncode == 2 and "--batch" in out.stderr


def test_plain_verify_unchanged(files):
    d, vk, pairs = files
    out = snarkd("verify", vk, *pairs[:2])
    assert out.returncode == 0 and out.stdout.strip() == "OK: proof is valid"
    out = snarkd("verify", vk, d / "public1.json", d / "bad_proof.json")
    assert out.returncode == 1 and out.stdout.strip() == "INVALID: proof does not verify"
