"""Witness-calculation fixtures (imported by the test modules; not a conftest, so it
cannot shadow tests/conftest.py): circuits compiled with circom2 (cached by oracle),
and witnesses from `snarkjs wtns calculate` as the reference."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import oracle

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "circuits"


@dataclass(frozen=True)
class Compiled:
    name: str
    curve: str
    dir: Path

    @property
    def wasm(self) -> Path:
        return self.dir / "circuit_js" / "circuit.wasm"

    @property
    def sym(self) -> Path:
        return self.dir / "circuit.sym"

    def snarkjs_witness(self, inputs: dict) -> Path:
        """`snarkjs wtns calculate` (circom_runtime), cached."""
        return oracle.Circuit(self.name, self.curve, self.dir).witness(inputs)

    def circom_witness(self, inputs: dict, out_dir: Path) -> Path:
        """circom's own generated generate_witness.js (knows bus inputs)."""
        inp, out = out_dir / "circom_input.json", out_dir / "circom_witness.wtns"
        inp.write_text(json.dumps(inputs))
        js = self.dir / "circuit_js" / "generate_witness.js"
        proc = subprocess.run(["node", str(js), str(self.wasm), str(inp), str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"generate_witness.js failed: {proc.stdout}\n{proc.stderr}")
        return out


def compiled(filename: str, curve: str, include_circomlib: bool = False, compiler: str = "circom2",
             **params) -> Compiled:
    """tests/witness/circuits/FILENAME compiled for CURVE by COMPILER (one of oracle.COMPILERS), cached."""
    source = (SOURCES / filename).read_text()
    for k, v in params.items():
        source = source.replace("{{" + k + "}}", str(v))
    name = "w_" + filename.removesuffix(".circom") + ("" if compiler == "circom2" else "-" + compiler)
    return Compiled(name, curve, oracle.compile_circuit(source, name, curve, include_circomlib, compiler))


@pytest.fixture(autouse=True)
def wasm_cache(tmp_path_factory, monkeypatch):
    """Compiled-module cache in a per-session temp folder, not the user's ~/.cache: the declared default the
    library's cache=True means, and the environment subprocesses (the CLI, an entry point) resolve it from."""
    from snarkd.config.sections import ENGINE_DEFAULTS

    global _CACHE_DIR
    if _CACHE_DIR is None:
        _CACHE_DIR = tmp_path_factory.mktemp("wasm-cache")
    monkeypatch.setenv("SNARKD_WASM_CACHE", str(_CACHE_DIR))
    monkeypatch.setitem(ENGINE_DEFAULTS, "wasm_cache", str(_CACHE_DIR))
    return _CACHE_DIR


_CACHE_DIR = None

ARRAYS_N = 3
POSEIDON_N = 3


@pytest.fixture(scope="session")
def arrays(curve) -> Compiled:
    return compiled("arrays.circom", curve, N=ARRAYS_N)


@pytest.fixture(scope="session")
def poseidon(curve) -> Compiled:
    return compiled("poseidon.circom", curve, include_circomlib=True, N=POSEIDON_N)


@pytest.fixture(scope="session")
def constraint_circuit(curve) -> Compiled:
    return compiled("constraint.circom", curve)


@pytest.fixture(scope="session")
def noinput(curve) -> Compiled:
    return compiled("noinput.circom", curve)


@pytest.fixture(scope="session")
def bus(curve) -> Compiled:
    return compiled("bus.circom", curve)


ARRAYS_INPUT = {"a": "3", "b": [[1, 2], [3, 4], [5, 6]]}
POSEIDON_INPUT = {
    "preimage": [["1", "2"], ["123456789012345678901234567890", "0x1f"], [0, 5]],
    "x": 1000,
    "bound": "18446744073709551615",
}


BABYJUB_L = 2736030358979909402780800718157159386076813972158567259200215660948447373041  # BabyJubjub subgroup order


def eddsa_inputs() -> list[dict]:
    """Inputs of circomlib's EdDSAPoseidonVerifier (tests/witness/circuits/eddsa.circom): two valid signatures made
    by eddsa_signer.circom's witness (A = s·B8, R8 = r·B8, h = Poseidon(R8, A, M), S = r + 8·h·s mod L) and a
    disabled check with a wrong signature, which the circuit must not check."""
    from snarkd.witness import WitnessCalculator

    signer = WitnessCalculator(compiled("eddsa_signer.circom", "bn128", include_circomlib=True).wasm, cache=False)

    def sign(s: int, r: int, m: int) -> dict:
        w = signer.calculate({"s": s, "r": r, "M": m})
        ax, ay, rx, ry, h = (w.value(i) for i in range(1, 6))
        return {"enabled": 1, "Ax": str(ax), "Ay": str(ay), "R8x": str(rx), "R8y": str(ry),
                "S": str((r + 8 * h * s) % BABYJUB_L), "M": str(m)}

    valid = [sign(123456789, 987654321, 42), sign(2**200 + 5, 77, 2**100)]
    return [*valid, {**valid[0], "enabled": 0, "S": "5", "M": "43"}]

