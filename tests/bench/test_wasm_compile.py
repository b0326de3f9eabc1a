"""bench/wasm_compile (the bench driver of the package's compiled witness program, snarkd.witness.compiled, as an
executable: harness.cpp with the generated C++): the compiled witness of tests/witness/circuits/ops.circom (every operator, shifts by any amount, values near p) byte for
byte snarkjs's, for a few inputs. A g++ -O1 build of a small module (~3 s)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "witness", ROOT / "bench" / "wasm_compile"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from wfixtures import compiled  # noqa: E402

R = 21888242871839275222246405745257275088548364400416034343698204186575808495617

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def test_compiled_ops_witness_is_snarkjs_s(tmp_path):
    import run as wc_run

    c = compiled("ops.circom", "bn128")
    exe, info = wc_run.build(str(c.wasm), str(tmp_path), "-O1")
    assert info["cpp_bytes"] > 0
    for i, inputs in enumerate([{"a": 3, "b": 5, "k": 2}, {"a": str(R - 1), "b": 2, "k": 300},
                                {"a": str(R - 12345), "b": str(2**130 + 5), "k": str(R - 3)},
                                {"a": str(2**200 + 99), "b": "77", "k": "64"}]):
        inp = tmp_path / f"in{i}.json"
        inp.write_text(json.dumps(inputs))
        enc = tmp_path / f"in{i}.bin"
        enc.write_bytes(wc_run.encode_inputs(str(inp)))
        out = tmp_path / f"out{i}.wtns"
        subprocess.run([exe, str(enc), str(out)], check=True, capture_output=True)
        assert out.read_bytes() == c.snarkjs_witness(inputs).read_bytes(), inputs
