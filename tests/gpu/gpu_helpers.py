"""Shared helpers for the GPU tests: skip without CuPy/a device, random inputs
built with the CPU core (itself tested against py_ecc), the example keys."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
NATIVE_NAMES = {"bn128": "bn254", "bls12381": "bls12_381"}
EXAMPLES = {"bn128": REPO / "examples" / "chain-bn128", "bls12381": REPO / "examples" / "chain-bls12381"}


def example_zkey(curve: str, dest: Path) -> str:
    """The example key of curve copied under dest (with its circuit .wasm): an engine that loads a key
    writes the witness program (.wprog) beside its wasm, which must not land in examples/."""
    d = dest / EXAMPLES[curve].name
    if not d.exists():
        shutil.copytree(EXAMPLES[curve], d, ignore=shutil.ignore_patterns("*.wprog"))
    return str(d / "chain.zkey")


def require_gpu():
    """Call at module level: skips the module with a stated reason in CI."""
    pytest.importorskip("cupy", reason="GPU tests need CuPy (cupy-cuda13x) and a CUDA device; CuPy is not installed")
    from snarkd.gpu.device import available

    ok, why = available()
    if not ok:
        pytest.skip(f"GPU tests need a CUDA device: {why}", allow_module_level=True)


def native(curve: str):
    from snarkd.native import _core

    return getattr(_core, NATIVE_NAMES.get(curve, curve))


def load_key(curve: str):
    from snarkd.prover.proving_key import ProvingKey

    return ProvingKey.load(EXAMPLES[curve] / "chain.zkey")


def rand_fr(rng: random.Random, r: int, n: int) -> np.ndarray:
    """n random Fr values < r as (n, 4) u64 (used both as plain and as Montgomery)."""
    b = b"".join(rng.randrange(r).to_bytes(32, "little") for _ in range(n))
    return np.frombuffer(b, dtype="<u8").reshape(n, 4).copy()


def ints_to_fr(vals) -> np.ndarray:
    b = b"".join((v % (1 << 256)).to_bytes(32, "little") for v in vals)
    return np.frombuffer(b, dtype="<u8").reshape(len(vals), 4).copy()


def rand_points(rng: random.Random, curve: str, g2: bool, n: int, distinct: int | None = None, with_inf: bool = True) -> np.ndarray:
    """n curve points (affine Montgomery u64 rows): `distinct` random multiples of a
    key's point (delta), tiled; rows 1 and n-1 set to infinity when with_inf."""
    key = load_key(curve)
    nat = key.native
    r = key.curve.r
    base = key.zkey.delta2 if g2 else key.zkey.delta1
    m = min(n, distinct or n)
    mul = nat.g2_mul if g2 else nat.g1_mul
    width = base.size
    pts = mul(np.ascontiguousarray(base), ints_to_fr([rng.randrange(1, r) for _ in range(max(m, 1))])).reshape(-1, width)
    idx = np.arange(n) % len(pts) if m < n else np.arange(n)
    if m < n:
        rng2 = np.random.default_rng(rng.randrange(1 << 30))
        idx = rng2.integers(0, len(pts), n)
    out = pts[idx].copy()
    if with_inf and n >= 3:
        out[1] = 0
        out[n - 1] = 0
    key.close()
    return out


def snarkjs_verify(vk, public, proof) -> bool:
    """`snarkjs groth16 verify` where Node.js and the npm oracles are installed. A GPU machine may have
    neither: there the native verifier checks the proof now and the three files are kept under
    $SNARKD_VERIFY_LATER (when set) for `snarkjs groth16 verify` on a machine that has it
    (tools/verify_later.sh)."""
    import json
    import os
    import shutil
    from pathlib import Path

    import oracle

    if shutil.which("node") and (oracle.REPO / "node_modules" / ".bin" / "snarkjs").exists():
        return oracle.snarkjs_verify(vk, public, proof)
    from snarkd.verifier import verify

    ok = verify(json.loads(Path(vk).read_text()), json.loads(Path(public).read_text()),
                json.loads(Path(proof).read_text()))
    later = os.environ.get("SNARKD_VERIFY_LATER")
    if later:
        d = Path(later) / f"{len(list(Path(later).glob('*'))) if Path(later).exists() else 0:03d}"
        d.mkdir(parents=True, exist_ok=True)
        for name, src in (("vk.json", vk), ("public.json", public), ("proof.json", proof)):
            shutil.copy(src, d / name)
    return ok
