"""The verifier's input rules where snarkd and snarkjs could part ways, each run
through snarkjs's own groth16.verify (tests/fuzz/snarkjs_verify.mjs, one node process)."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest

from snarkd.curves.params import curve_by_name
from snarkd.errors import InputError
from snarkd.verifier.groth16 import load_json, parse_json, verify

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import differential  # noqa: E402


@pytest.fixture(scope="module")
def triple(request, tmp_path_factory):
    """(vk, public, proof) of the chain circuit on BN254, proof by snarkjs."""
    from cases import build_case

    case = build_case("chain", "bn128")
    out = tmp_path_factory.mktemp("rules")
    proof, public = case.circuit.snarkjs_prove(case.wtns, out)
    return json.loads(case.vk.read_text()), json.loads(public.read_text()), json.loads(proof.read_text())


def ours(vk, public, proof) -> str:
    try:
        return "valid" if verify(vk, public, proof) else "invalid"
    except InputError:
        return "error"


def _cases(triple):
    vk, public, proof = triple
    q = curve_by_name("bn128").q
    x = int(proof["pi_a"][0])

    def edit(fn, what="proof"):
        t = copy.deepcopy([vk, public, proof])
        idx = {"vk": 0, "public": 1, "proof": 2}[what]
        t[idx] = fn(t[idx]) or t[idx]
        return t

    z = 5
    jac = [str(x * z * z % q), str(int(proof["pi_a"][1]) * z**3 % q), str(z)]
    return {
        # name: (case, snarkd's answer, snarkjs's answer)
        "control": ([vk, public, proof], "valid", "valid"),
        "proof protocol plonk": (edit(lambda p: p.update(protocol="plonk")), "error", "valid"),
        "proof curve bls12381": (edit(lambda p: p.update(curve="bls12381")), "error", "valid"),
        "proof curve alias BN254": (edit(lambda p: p.update(curve="BN254")), "valid", "valid"),
        "vk curve alias alt_bn128": (edit(lambda v: v.update(curve="alt_bn128"), "vk"), "valid", "valid"),
        "vk protocol changed": (edit(lambda v: v.update(protocol="plonk"), "vk"), "error", "valid"),
        "vk nPublic off by one": (edit(lambda v: v.update(nPublic=v["nPublic"] + 1), "vk"), "error", "valid"),
        "coordinate + q": (edit(lambda p: p["pi_a"].__setitem__(0, str(x + q))), "invalid", "valid"),
        "0x hex coordinate": (edit(lambda p: p["pi_a"].__setitem__(0, hex(x))), "valid", "valid"),
        "0X hex coordinate": (edit(lambda p: p["pi_a"].__setitem__(0, "0X" + format(x, "X"))), "error", None),  # snarkjs: depends on the value
        "Jacobian proof point": (edit(lambda p: p.__setitem__("pi_a", jac)), "valid", "valid"),
        "negated proof point": (edit(lambda p: p["pi_a"].__setitem__(1, str(q - int(p["pi_a"][1])))), "invalid", "invalid"),
        "public + r": (edit(lambda s: s.__setitem__(0, str(int(s[0]) + curve_by_name("bn128").r)), "public"), "invalid", "invalid"),
        "big JSON number": (edit(lambda p: p["pi_a"].__setitem__(0, x)), "error", "invalid"),
        "projective IC point": (edit(lambda v: v["IC"].__setitem__(1, [str(int(v["IC"][1][0]) * 4 % q),
                                                                       str(int(v["IC"][1][1]) * 8 % q), "2"]), "vk"),
                                "error", "invalid"),
    }


@pytest.mark.slow
def test_rules_against_snarkjs(triple):
    cases = _cases(triple)
    texts = [{k: json.dumps(v).encode() for k, v in zip(("vk", "public", "proof"), t)} for t, _, _ in cases.values()]
    theirs = differential.snarkjs_verify(texts)
    for (name, (t, want_ours, want_theirs)), th in zip(cases.items(), theirs):
        assert ours(*t) == want_ours, name
        assert th == want_theirs or want_theirs is None, name
        if th == "valid" and want_ours != "valid":
            # every place snarkd is stricter is one the fuzz harness names
            assert differential.classify(texts[list(cases).index(name)], curve_by_name("bn128").q) != "unexplained", name


def test_json_as_javascript_reads_it(tmp_path):
    for data, what in [(b"\xef\xbb\xbf[]", "BOM"), (b'{"a": NaN}', "NaN"), (b"[" * 100000 + b"]" * 100000, "deep"),
                       (b'["\xff"]', "not UTF-8")]:
        with pytest.raises(InputError, match="p.json"):
            parse_json(data, "p.json", "proof")
    assert parse_json(b'{"a": 1e999}', "p.json", "proof") == {"a": float("inf")}  # JSON.parse gives Infinity too


def test_json_files_that_are_not_files(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        load_json(fifo, "proof")  # and does not wait for a writer
    with pytest.raises(InputError, match="directory"):
        load_json(tmp_path, "proof")


def test_deep_json_does_not_crash_with_a_raised_recursion_limit(tmp_path):
    """py_ecc raises the recursion limit to 100,000 on import; Python's json parser
    then overflows the C stack on deep text. The depth is bounded before parsing."""
    import subprocess

    deep = tmp_path / "proof.json"
    deep.write_text("[" * 200000 + "]" * 200000)
    code = ("import py_ecc, sys\nfrom snarkd.cli import main\n"
            f"sys.exit(main(['verify', {str(deep)!r}, {str(deep)!r}, {str(deep)!r}]))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 3, res.stderr[-2000:]
    assert "nests arrays or objects 200000 deep" in res.stderr


def test_json_readers_close_every_descriptor(tmp_path):
    """Directories, FIFOs, devices and missing paths: an error naming the path, and no fd left open."""
    import psutil

    from snarkd.witness.inputs import load_input_json

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    proc = psutil.Process()
    before = proc.num_fds()
    for path in (tmp_path, fifo, "/dev/null", tmp_path / "missing.json"):
        for _ in range(3):
            with pytest.raises(InputError, match=str(path)):
                load_json(path, "proof")
            with pytest.raises(InputError, match=str(path)):
                load_input_json(path)
    assert proc.num_fds() == before
