"""snarkjs and circom2 (from npm) as test oracles, with an on-disk fixture cache.

Every artefact is built in a temporary folder and renamed into place, so
concurrent test workers never see half-written fixtures. The cache key is a
hash of everything that determines the artefact (source text, curve, power).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CIRCUITS = Path(__file__).resolve().parent / "circuits"
CACHE = Path(os.environ.get("SNARKD_FIXTURE_DIR", REPO / ".fixtures"))

# circom's -p names and snarkjs's powersoftau names differ.
CIRCOM_PRIME = {"bn128": "bn128", "bls12381": "bls12381"}
PTAU_CURVE = {"bn128": "bn128", "bls12381": "bls12-381"}
CURVES = ("bn128", "bls12381")


# circom compilers from npm (package.json): the current circom2, and circom 2.0.8 and 2.1.9 under npm aliases
# (many deployed circuits were built with circom 2.0.x or 2.1.x; their wasm differs). Both packages name their command
# `circom2`, so node_modules/.bin/circom2 may be either: compilers are run by their package's cli.js.
COMPILERS = {"circom2": "circom2", "circom-2.0.8": "circom2-208", "circom-2.1.9": "circom2-219"}


def compiler_cli(compiler: str = "circom2") -> Path:
    path = REPO / "node_modules" / COMPILERS[compiler] / "cli.js"
    if not path.exists():
        pytest.fail(f"{path} missing: run `npm ci` in the repository root (the test oracles come from npm)")
    return path


def npm_bin(name: str) -> Path:
    path = REPO / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.fail(f"{path} missing: run `npm ci` in the repository root (the test oracles come from npm)")
    return path


def run(cmd: list, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{proc.stdout}\n{proc.stderr}")
    return proc


def snarkjs(*args, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return run(["node", npm_bin("snarkjs"), *args], cwd=cwd, check=check)


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _cached(key: str, build) -> Path:
    """Return CACHE/key, building it with build(tmpdir) if absent (atomic)."""
    final = CACHE / key
    if final.exists():
        return final
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=CACHE))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:
            if not final.exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def ptau(curve: str, power: int) -> Path:
    """A prepared phase-2 powers of tau with one real contribution (τ ≠ 1)."""

    def build(d: Path) -> None:
        snarkjs("powersoftau", "new", PTAU_CURVE[curve], power, d / "p0.ptau")
        snarkjs("powersoftau", "contribute", d / "p0.ptau", d / "p1.ptau", "--name=test", "-e=snarkd-test-entropy")
        snarkjs("powersoftau", "prepare", "phase2", d / "p1.ptau", d / "final.ptau")
        (d / "p0.ptau").unlink()
        (d / "p1.ptau").unlink()

    return _cached(f"ptau-{curve}-{power}", build) / "final.ptau"


def contributed_ptau(curve: str, entropy: str | None, power: int = 4) -> Path:
    """A snarkjs ptau of `power` with one contribution of this entropy (None: a fresh `powersoftau new`,
    tau = 1), not prepared for phase 2; cached. Two entropies: two independent ceremonies."""
    def build(d: Path) -> None:
        snarkjs("powersoftau", "new", PTAU_CURVE[curve], power, d / "p0.ptau")
        if entropy is not None:
            snarkjs("powersoftau", "contribute", d / "p0.ptau", d / "p.ptau", "--name=b", f"-e={entropy}")
        else:
            (d / "p0.ptau").rename(d / "p.ptau")

    return _cached(f"ptau-check-{curve}-{power}-{entropy}", build) / "p.ptau"


@dataclass(frozen=True)
class Circuit:
    """A compiled circuit with a snarkjs Groth16 key; paths into the cache."""

    name: str
    curve: str
    dir: Path

    @property
    def r1cs(self) -> Path:
        return self.dir / "circuit.r1cs"

    @property
    def wasm(self) -> Path:
        return self.dir / "circuit_js" / "circuit.wasm"

    @property
    def zkey(self) -> Path:
        return self.dir / "circuit.zkey"

    @property
    def vk(self) -> Path:
        return self.dir / "vk.json"

    def witness(self, inputs: dict, tag: str = "") -> Path:
        """`snarkjs wtns calculate` for these inputs, cached."""
        text = json.dumps(inputs, sort_keys=True)
        key = f"wtns-{_digest(self.dir.name, text)}"

        def build(d: Path) -> None:
            (d / "input.json").write_text(text)
            snarkjs("wtns", "calculate", self.wasm, d / "input.json", d / "witness.wtns")

        return _cached(key, build) / "witness.wtns"

    def snarkjs_prove(self, wtns: Path, out: Path) -> tuple[Path, Path]:
        proof, public = out / "snarkjs_proof.json", out / "snarkjs_public.json"
        snarkjs("groth16", "prove", self.zkey, wtns, proof, public)
        return proof, public


def compile_circuit(source: str, name: str, curve: str, include_circomlib: bool = False,
                    compiler: str = "circom2") -> Path:
    """Compile circom source (text) with circom2 (or another of COMPILERS); returns the cache folder."""
    lib_stamp = "circomlib-2.0.5" if include_circomlib else ""
    stamp = (lib_stamp,) if compiler == "circom2" else (lib_stamp, compiler)
    key = f"circom-{name}-{curve}-{_digest(source, curve, *stamp)}"

    def build(d: Path) -> None:
        (d / "circuit.circom").write_text(source)
        if include_circomlib:
            # circom2 runs under WASI: included files must sit below the working directory.
            shutil.copytree(REPO / "node_modules" / "circomlib" / "circuits", d / "circomlib")
        run(["node", compiler_cli(compiler), "circuit.circom", "--r1cs", "--wasm", "--sym", "-p", CIRCOM_PRIME[curve],
             "-o", "."], cwd=d)
        if include_circomlib:
            shutil.rmtree(d / "circomlib")

    return _cached(key, build)


def ptau_power_for(r1cs: Path) -> int:
    """Smallest ptau power snarkjs accepts for this r1cs (domain of m + nPublic rows)."""
    from snarkd.formats.r1cs import read_r1cs_header  # lazy: formats may not import in oracle-only use

    hdr = read_r1cs_header(r1cs)
    rows = hdr.n_constraints + hdr.n_pub_out + hdr.n_pub_in
    power = max(rows.bit_length(), 1)  # floor(log2(rows)) + 1
    return max(power, 2)


def circuit(source: str, name: str, curve: str, include_circomlib: bool = False, power: int | None = None) -> Circuit:
    """Compile and set up (snarkjs groth16 setup + one contribution + vk export), cached."""
    compiled = compile_circuit(source, name, curve, include_circomlib)
    if power is None:
        power = ptau_power_for(compiled / "circuit.r1cs")
    pt = ptau(curve, power)
    key = f"key-{compiled.name}-{power}"

    def build(d: Path) -> None:
        for item in compiled.iterdir():
            if item.is_dir():
                shutil.copytree(item, d / item.name)
            else:
                shutil.copy2(item, d / item.name)
        snarkjs("groth16", "setup", d / "circuit.r1cs", pt, d / "c0.zkey")
        snarkjs("zkey", "contribute", d / "c0.zkey", d / "circuit.zkey", "--name=test", "-e=snarkd-zkey-entropy")
        (d / "c0.zkey").unlink()
        snarkjs("zkey", "export", "verificationkey", d / "circuit.zkey", d / "vk.json")

    return Circuit(name, curve, _cached(key, build))


def snarkjs_verify(vk: Path, public: Path, proof: Path) -> bool:
    proc = snarkjs("groth16", "verify", vk, public, proof, check=False)
    ok = proc.returncode == 0 and "OK" in proc.stdout
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"snarkjs verify crashed: {proc.stdout}\n{proc.stderr}")
    return ok


def load_circuit_source(filename: str, **params) -> str:
    """Read tests/circuits/<filename> and substitute {{NAME}} placeholders."""
    text = (CIRCUITS / filename).read_text()
    for k, v in params.items():
        text = text.replace("{{" + k + "}}", str(v))
    return text
