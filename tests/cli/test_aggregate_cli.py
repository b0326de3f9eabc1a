"""`snarkd aggregation-srs`, `snarkd aggregate`, `snarkd verify-aggregate` on real proofs: snarkd's CPU
prover on the bundled example keys (one proof checked by snarkjs), exit codes 0 / 1 / 2 / 3."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import oracle
from snarkd.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module", params=["bn128", "bls12381"])
def proved(request, tmp_path_factory):
    curve = request.param
    ex = EXAMPLES / f"chain-{curve}"
    d = tmp_path_factory.mktemp(f"agg-{curve}")
    pairs = []
    wasm = d / "chain.wasm"
    shutil.copy(ex / "chain.wasm", wasm)  # the witness program (.wprog) is written beside the wasm: not in examples/
    for i in range(4):
        (d / f"in{i}.json").write_text(json.dumps({"x": str(i + 2), "k": "7"}))
        assert main(["witness", str(wasm), str(d / f"in{i}.json"), str(d / f"w{i}.wtns"), "-q"]) == 0
        assert main(["prove", str(ex / "chain.zkey"), str(d / f"w{i}.wtns"), str(d / f"p{i}.json"), str(d / f"pub{i}.json"), "-q"]) == 0
        pairs.append((str(d / f"pub{i}.json"), str(d / f"p{i}.json")))
    assert oracle.snarkjs_verify(ex / "vk.json", Path(pairs[3][0]), Path(pairs[3][1]))
    srs = d / "dev.srs"
    assert main(["aggregation-srs", "--dev", "--curve", curve, "--max", "4", str(srs)]) == 0
    return curve, ex / "vk.json", srs, pairs, d


def flat(pairs):
    return [f for pair in pairs for f in pair]


def test_aggregate_then_verify(proved, capsys):
    curve, vk, srs, pairs, d = proved
    out = d / "agg.json"
    assert main(["aggregate", str(vk), str(srs), str(out), *flat(pairs)]) == 0
    err = capsys.readouterr().err
    assert "NOT SECURE FOR PRODUCTION" in err
    doc = json.loads(out.read_text())
    assert doc["protocol"] == "snarkpack" and doc["curve"] == curve and doc["n"] == 4 and doc["srs"]["dev"] is True
    assert doc["public"] == [json.loads(Path(p).read_text()) for p, _ in pairs]
    assert main(["verify-aggregate", str(vk), str(srs), str(out)]) == 0
    assert "OK" in capsys.readouterr().out
    # two proofs given in the other order than their public inputs: refused before aggregating (exit 3, the
    # two named, nothing written), as the daemon does (issue 33: the CLI used to write an aggregate that
    # cannot verify, exit 0)
    swapped = [(pairs[1][0], pairs[0][1]), (pairs[0][0], pairs[1][1])] + pairs[2:]
    capsys.readouterr()
    assert main(["aggregate", str(vk), str(srs), str(d / "bad.json"), *flat(swapped), "-q"]) == 3
    err = capsys.readouterr().err
    assert "2 of the 4 proofs do not verify" in err and pairs[0][1] in err and pairs[1][1] in err
    assert not (d / "bad.json").exists()
    # a public input edited in the aggregate file
    doc["public"][2][0] = str(int(doc["public"][2][0]) + 1)
    (d / "edited.json").write_text(json.dumps(doc))
    assert main(["verify-aggregate", str(vk), str(srs), str(d / "edited.json")]) == 1
    # another SRS: invalid
    assert main(["aggregation-srs", "--dev", "--curve", curve, "--max", "4", str(d / "other.srs")]) == 0
    assert main(["verify-aggregate", str(vk), str(d / "other.srs"), str(out)]) == 1


def _rewritten_srs(src: Path, dst: Path, edit) -> None:
    """src's SRS with its body edited by edit(bytearray, curve) and its CRC (and id) recomputed: a file an
    attacker made, every checksum right."""
    from snarkd.aggregate import srs as S
    from snarkd.formats import checked_header

    data = src.read_bytes()
    hdr, off = checked_header.unpack(data, S.MAGIC, S.VERSION, "x", ValueError)
    body = bytearray(data[off:])
    edit(body, S.read_srs(src, check_all=False))
    hdr["body_crc32c"] = checked_header.crc32c(bytes(body))
    dst.write_bytes(checked_header.pack(S.MAGIC, S.VERSION, json.dumps(hdr).encode()) + bytes(body))


def test_an_srs_of_inconsistent_powers_is_refused(proved, capsys):
    """Issue 33, finding 1: two G2 powers swapped (the id, of the powers 0 and 1, unchanged; the CRC
    recomputed): `snarkd aggregate` wrote an aggregate that does not verify, exit 0; now exit 3, nothing written."""
    curve, vk, srs, pairs, d = proved

    def swap(body, s):
        w, start = s.curve.g2_bytes, 4 * s.max_n * s.curve.g1_bytes
        i, j = start + 2 * w, start + 3 * w
        body[i : i + w], body[j : j + w] = body[j : j + w], body[i : i + w]

    evil = d / "evil.srs"
    _rewritten_srs(srs, evil, swap)
    capsys.readouterr()
    assert main(["aggregate", str(vk), str(evil), str(d / "evil-agg.json"), *flat(pairs), "-q"]) == 3
    assert str(evil) in capsys.readouterr().err and not (d / "evil-agg.json").exists()


def test_an_aggregate_that_does_not_verify_is_never_written(proved, capsys, monkeypatch):
    """Whatever went wrong in the prover (here: a commitment tampered after it was made), the aggregate is
    verified before it is written: exit 4, nothing written."""
    from snarkd.aggregate import files, prover

    curve, vk, srs, pairs, d = proved
    real = prover.aggregate

    def tampered(*a, **kw):
        agg = real(*a, **kw)
        agg.agg_c, agg.final_c = agg.final_c, agg.agg_c
        return agg

    monkeypatch.setattr(files.prover, "aggregate", tampered)
    assert main(["aggregate", str(vk), str(srs), str(d / "t.json"), *flat(pairs), "-q"]) == 4
    assert "does not verify" in capsys.readouterr().err and not (d / "t.json").exists()


def test_bad_input_and_usage(proved, capsys):
    curve, vk, srs, pairs, d = proved
    assert main(["aggregate", str(vk), str(srs), str(d / "x.json"), *flat(pairs[:3])]) == 3  # 3 proofs
    assert main(["aggregate", str(vk), str(srs), str(d / "x.json"), *flat(pairs)[:-1]]) == 2  # odd file count
    assert not (d / "x.json").exists()
    small = d / "small.srs"
    assert main(["aggregation-srs", "--dev", "--curve", curve, "--max", "2", str(small)]) == 0
    assert main(["aggregate", str(vk), str(small), str(d / "x.json"), *flat(pairs)]) == 3  # n above max_n
    other = "bls12381" if curve == "bn128" else "bn128"
    assert main(["aggregation-srs", "--dev", "--curve", other, "--max", "4", str(d / "o.srs")]) == 0
    assert main(["aggregate", str(vk), str(d / "o.srs"), str(d / "x.json"), *flat(pairs)]) == 3
    (d / "garbage.json").write_text("{not json")
    assert main(["verify-aggregate", str(vk), str(srs), str(d / "garbage.json")]) == 3
    (d / "short.json").write_text(json.dumps({"protocol": "snarkpack"}))
    assert main(["verify-aggregate", str(vk), str(srs), str(d / "short.json")]) == 3
    (d / "bad.srs").write_bytes(b"SNKDAGGS" + bytes(20))
    assert main(["verify-aggregate", str(vk), str(d / "bad.srs"), str(d / "short.json")]) == 3
    assert main(["aggregation-srs", "--dev", "--curve", curve, "--max", "3", str(d / "y.srs")]) == 3
    assert main(["aggregation-srs", "--dev", str(d / "y.srs")]) == 2
    err = capsys.readouterr().err
    assert "power of two" in err


def test_production_srs_from_two_snarkjs_ptau_files(proved, capsys):
    """`snarkd aggregation-srs A.ptau B.ptau OUT.srs` on two real snarkjs ceremonies (formats/ptau.py read,
    verifier/ptau_check.py checks): no development warning, and the proofs aggregate and verify under it; one
    ceremony given twice, or a ptau of tau = 1, is refused (exit 3, naming the file)."""
    curve, vk, _, pairs, d = proved
    a, b = oracle.contributed_ptau(curve, "ceremony A", 4), oracle.contributed_ptau(curve, "ceremony B", 4)
    srs = d / "prod.srs"
    assert main(["aggregation-srs", str(a), str(b), str(srs), "--max", "4"]) == 0
    assert main(["aggregate", str(vk), str(srs), str(d / "prod-agg.json"), *flat(pairs)]) == 0
    assert main(["verify-aggregate", str(vk), str(srs), str(d / "prod-agg.json")]) == 0
    captured = capsys.readouterr()
    assert "NOT SECURE" not in captured.err and "OK" in captured.out
    assert json.loads((d / "prod-agg.json").read_text())["srs"]["dev"] is False
    assert main(["aggregation-srs", str(a), str(a), str(d / "same.srs")]) == 3
    assert str(a) in capsys.readouterr().err
    assert main(["aggregation-srs", str(a), str(oracle.contributed_ptau(curve, None, 4)), str(d / "one.srs")]) == 3
    assert not (d / "same.srs").exists() and not (d / "one.srs").exists()


def test_backends_make_the_same_aggregate(proved, capsys):
    """--backend cpu / auto / cuda: the same aggregate file; cuda without a usable GPU exits 2, writing nothing."""
    from snarkd.prover.backend import cuda_device_count

    curve, vk, srs, pairs, d = proved
    made = {}
    for backend in ("cpu", "auto", "cuda"):
        out = d / f"agg-{backend}.json"
        code = main(["aggregate", str(vk), str(srs), str(out), *flat(pairs), "--backend", backend, "-q"])
        if backend == "cuda" and cuda_device_count() == 0:
            assert code == 2 and not out.exists()
            assert "CUDA device 0 does not exist" in capsys.readouterr().err
            continue
        assert code == 0
        made[backend] = out.read_bytes()
    assert len(set(made.values())) == 1


def test_aggregate_through_a_daemon_usage_errors(tmp_path):
    """`snarkd aggregate --addr` (tests/daemon/test_aggregate_rpc.py runs it against a daemon): what is refused
    before any connection, as usage errors (exit 2)."""
    out = str(tmp_path / "agg.json")
    assert main(["aggregate", "--addr", "127.0.0.1:1", out, "--jobs", "a", "b"]) == 2  # no --key
    assert main(["aggregate", "--key", "k", out, "--jobs", "a", "b"]) == 2  # no --addr
    assert main(["aggregate", "--addr", "127.0.0.1:1", "--key", "k", out, "p.json", "q.json", "--jobs", "a"]) == 2
    assert main(["aggregate", "--addr", "127.0.0.1:1", "--key", "k", out]) == 2  # nothing to aggregate
    assert main(["aggregate", "--addr", "127.0.0.1:1", "--key", "k", out, "p.json"]) == 2  # odd file count
    assert main(["aggregate", str(tmp_path / "vk.json"), out]) == 2  # local: VK SRS OUT at least
    assert main(["aggregate", "--addr", "127.0.0.1:1", "--key", "k", "--backend", "cpu", out, "--jobs", "a"]) == 2


def test_whatever_the_srs_or_proofs_an_aggregate_written_with_exit_0_verifies(proved, capsys):
    """Property (issue 33): hostile SRS files (powers swapped, replaced, bits flipped: every checksum
    recomputed) and invalid proof sets; `snarkd aggregate` either refuses (exit 3 or 4, nothing written) or
    writes an aggregate that `snarkd verify-aggregate` accepts under that same SRS. No other outcome."""
    import random

    from snarkd.aggregate.group import Group
    from snarkd.curves.params import CURVES

    curve, vk, srs, pairs, d = proved
    G = Group(next(c for c in CURVES if c.name == curve))
    rnd = random.Random(33)

    def edit(kind):
        def apply(body, s):
            g1, g2, n = G.g1_bytes, G.g2_bytes, s.max_n
            if kind == "flip":
                i = rnd.randrange(len(body) * 8)
                body[i // 8] ^= 1 << (i % 8)
            elif kind == "swap g1":
                i, j = rnd.sample(range(2, 4 * n), 2)
                body[i * g1 : (i + 1) * g1], body[j * g1 : (j + 1) * g1] = body[j * g1 : (j + 1) * g1], body[i * g1 : (i + 1) * g1]
            elif kind == "swap g2":
                base = 4 * n * g1
                i, j = rnd.sample([k for k in range(2 * n) if k % n >= 2], 2)
                a, b = base + i * g2, base + j * g2
                body[a : a + g2], body[b : b + g2] = body[b : b + g2], body[a : a + g2]
            else:  # a power replaced by another valid point
                i = rnd.choice([k for k in range(4 * n) if k % (2 * n) >= 2])
                body[i * g1 : (i + 1) * g1] = G.g1_mul(G.generator_g1(), rnd.randrange(2, 1 << 30))
        return apply

    outcomes = []
    for k in range(16):
        evil = d / f"hostile-{k}.srs"
        _rewritten_srs(srs, evil, edit(["flip", "swap g1", "swap g2", "replace"][k % 4]))
        chosen = list(pairs)
        if k % 3 == 0:  # and an invalid proof set
            chosen[1] = (pairs[1][0], pairs[2][1])
        out = d / f"hostile-agg-{k}.json"
        code = main(["aggregate", str(vk), str(evil), str(out), *flat(chosen), "-q"])
        outcomes.append(code)
        if code == 0:
            assert main(["verify-aggregate", str(vk), str(evil), str(out)]) == 0
        else:
            assert code in (3, 4) and not out.exists()
    capsys.readouterr()
    assert 3 in outcomes  # the hostile cases were refused, not all silently harmless
