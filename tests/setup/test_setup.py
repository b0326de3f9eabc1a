"""`snarkd setup`: keys that snarkjs's own prover/verifier and snarkd's prover accept."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import oracle
from snarkd.curves.params import curve_by_name
from snarkd.errors import FormatError, InputError
from snarkd.setup.chain_circuit import chain_r1cs_bytes, chain_witness, wtns_bytes
from snarkd.setup.groth16_setup import SetupError, WARNING, setup

REPO = Path(__file__).resolve().parents[2]

# circom circuits from tests/circuits compiled with circom2 (no ptau needed): name -> (file, params, inputs, circomlib)
CIRCOM = {
    "chain": ("chain.circom", {"N": 10}, {"k": 3, "x": 2}, False),
    "chain_exact": ("chain.circom", {"N": 13}, {"k": 5, "x": 11}, False),  # rows fill the domain exactly
    "no_public": ("no_public.circom", {}, {"a": 3, "b": 5}, False),
    "many_public": ("many_public.circom", {"N": 8}, {"in": [1, 2, 3, 4, 5, 6, 7, 8], "secret": 9}, False),
    "circomlib_cmp": ("circomlib_cmp.circom", {}, {"a": 300, "b": 1000}, True),
}


def _compiled(name: str, curve: str) -> tuple[Path, Path]:
    filename, params, inputs, lib = CIRCOM[name]
    d = oracle.compile_circuit(oracle.load_circuit_source(filename, **params), name, curve, include_circomlib=lib)
    wtns = oracle.Circuit(name, curve, d).witness(inputs)
    return d / "circuit.r1cs", wtns


def _vk_equal(a: Path, b: Path) -> bool:
    return json.loads(a.read_text()) == json.loads(b.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CIRCOM))
def test_snarkjs_prove_and_verify_with_our_key(name, curve, tmp_path):
    r1cs, wtns = _compiled(name, curve)
    zkey, vk = tmp_path / "k.zkey", tmp_path / "vk.json"
    setup(r1cs, zkey, vk, seed=b"test", progress=False)
    oracle.snarkjs("groth16", "prove", zkey, wtns, tmp_path / "proof.json", tmp_path / "public.json")
    assert oracle.snarkjs_verify(vk, tmp_path / "public.json", tmp_path / "proof.json")
    # snarkjs's own vk export of our zkey equals ours
    oracle.snarkjs("zkey", "export", "verificationkey", zkey, tmp_path / "vk_snarkjs.json")
    assert _vk_equal(vk, tmp_path / "vk_snarkjs.json")


@pytest.mark.slow
def test_snarkd_prover_with_our_key(curve, tmp_path):
    r1cs, wtns = _compiled("many_public", curve)
    zkey, vk = tmp_path / "k.zkey", tmp_path / "vk.json"
    setup(r1cs, zkey, vk, seed=b"test", progress=False)
    # in a subprocess: a native crash must fail this test, not the session
    proc = subprocess.run([sys.executable, "-m", "snarkd", "prove", zkey, wtns, tmp_path / "p.json", tmp_path / "pub.json"], capture_output=True, text=True)
    assert proc.returncode == 0, f"snarkd prove failed (rc {proc.returncode}): {proc.stderr[-2000:]}"
    assert oracle.snarkjs_verify(vk, tmp_path / "pub.json", tmp_path / "p.json")


def test_direct_chain_r1cs_matches_circom(curve):
    for n in (1, 2, 4, 13):
        d = oracle.compile_circuit(oracle.load_circuit_source("chain.circom", N=n), f"chain{n}", curve)
        assert chain_r1cs_bytes(n, curve_by_name(curve)) == (d / "circuit.r1cs").read_bytes(), n


@pytest.mark.slow
def test_direct_chain_witness_and_key(curve, tmp_path):
    c = curve_by_name(curve)
    n = 40
    (tmp_path / "c.r1cs").write_bytes(chain_r1cs_bytes(n, c))
    (tmp_path / "w.wtns").write_bytes(wtns_bytes(chain_witness(n, c, 7, 9), c))
    oracle.snarkjs("wtns", "check", tmp_path / "c.r1cs", tmp_path / "w.wtns")
    setup(tmp_path / "c.r1cs", tmp_path / "k.zkey", tmp_path / "vk.json", progress=False)  # OS randomness
    oracle.snarkjs("groth16", "prove", tmp_path / "k.zkey", tmp_path / "w.wtns", tmp_path / "p.json", tmp_path / "pub.json")
    assert oracle.snarkjs_verify(tmp_path / "vk.json", tmp_path / "pub.json", tmp_path / "p.json")


def test_seed_reproducible(curve, tmp_path):
    c = curve_by_name(curve)
    (tmp_path / "c.r1cs").write_bytes(chain_r1cs_bytes(20, c))
    for name, seed in (("a", b"\x01\x02"), ("b", b"\x01\x02"), ("c", b"\x01\x03")):
        setup(tmp_path / "c.r1cs", tmp_path / f"{name}.zkey", seed=seed, progress=False)
    a, b, d = ((tmp_path / f"{x}.zkey").read_bytes() for x in "abc")
    assert a == b
    assert a != d
    setup(tmp_path / "c.r1cs", tmp_path / "r1.zkey", progress=False)
    setup(tmp_path / "c.r1cs", tmp_path / "r2.zkey", progress=False)
    assert (tmp_path / "r1.zkey").read_bytes() != (tmp_path / "r2.zkey").read_bytes()


def test_layout_and_contribution_record(tmp_path):
    from snarkd.formats.binfile import BinFile
    from snarkd.formats.zkey import read_zkey

    c = curve_by_name("bn128")
    (tmp_path / "c.r1cs").write_bytes(chain_r1cs_bytes(10, c))
    setup(tmp_path / "c.r1cs", tmp_path / "k.zkey", seed=b"x", progress=False)
    bf = BinFile.open(tmp_path / "k.zkey", b"zkey", 1)
    assert bf.order == [1, 2, 4, 3, 9, 8, 5, 6, 7, 10]  # snarkjs groth16 setup's order
    s10 = bytes(bf.section(10))
    assert struct.unpack_from("<I", s10, 64)[0] == 1
    assert b"snarkd setup" in s10 and b"NOT for production" in s10
    bf.close()
    z = read_zkey(tmp_path / "k.zkey", check_points=True)
    assert (z.domain_size, z.n_public, z.n_vars) == (16, 2, 13)
    z.close()


def _r1cs_with_header(c, n_constraints_field: int | None = None, prime: int | None = None) -> bytes:
    data = bytearray(chain_r1cs_bytes(4, c))
    # sections: 2 (constraints) then 1 (header); find header payload
    off = 12
    while True:
        sid, size = struct.unpack_from("<IQ", data, off)
        if sid == 1:
            hdr = off + 12
            break
        off += 12 + size
    if prime is not None:
        data[hdr + 4 : hdr + 36] = prime.to_bytes(32, "little")
    if n_constraints_field is not None:
        struct.pack_into("<I", data, hdr + 4 + 32 + 24, n_constraints_field)
    return bytes(data)


def test_error_malformed_r1cs(tmp_path):
    c = curve_by_name("bn128")
    good = chain_r1cs_bytes(4, c)
    (tmp_path / "t.r1cs").write_bytes(good[:-10])
    with pytest.raises(FormatError, match="t.r1cs"):
        setup(tmp_path / "t.r1cs", tmp_path / "k.zkey", progress=False)
    (tmp_path / "m.r1cs").write_bytes(b"xxxx" + good[4:])
    with pytest.raises(FormatError, match="not a r1cs file"):
        setup(tmp_path / "m.r1cs", tmp_path / "k.zkey", progress=False)
    assert not (tmp_path / "k.zkey").exists()


def test_error_unsupported_prime(tmp_path):
    c = curve_by_name("bn128")
    p = (1 << 255) - 19
    (tmp_path / "p.r1cs").write_bytes(_r1cs_with_header(c, prime=p))
    with pytest.raises(FormatError, match="prime"):
        setup(tmp_path / "p.r1cs", tmp_path / "k.zkey", progress=False)


@pytest.mark.parametrize("curve_name,m", [("bn128", 1 << 28), ("bls12381", (1 << 31) + 5)])
def test_error_too_large_for_two_adicity(tmp_path, curve_name, m):
    c = curve_by_name(curve_name)
    (tmp_path / "big.r1cs").write_bytes(_r1cs_with_header(c, n_constraints_field=m))
    with pytest.raises(SetupError, match="too large"):
        setup(tmp_path / "big.r1cs", tmp_path / "k.zkey", progress=False)


def test_cli_warns_and_documents(tmp_path):
    c = curve_by_name("bn128")
    (tmp_path / "c.r1cs").write_bytes(chain_r1cs_bytes(8, c))
    run = lambda *a: subprocess.run([sys.executable, "-m", "snarkd", *map(str, a)], capture_output=True, text=True)
    h = run("setup", "--help")
    assert h.returncode == 0 and "NOT SECURE FOR PRODUCTION" in h.stdout
    p = run("setup", tmp_path / "c.r1cs", tmp_path / "k.zkey", "--vk", tmp_path / "vk.json", "--seed", "abcd", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "NOT secure for production" in p.stderr
    assert json.loads((tmp_path / "vk.json").read_text())["protocol"] == "groth16"
    bad = run("setup", tmp_path / "missing.r1cs", tmp_path / "k2.zkey")
    assert bad.returncode == 3 and "missing.r1cs" in bad.stderr
    bad_seed = run("setup", tmp_path / "c.r1cs", tmp_path / "k3.zkey", "--seed", "zz")
    assert bad_seed.returncode == 3 and "--seed" in bad_seed.stderr
