"""The device seam: backends by name, one protocol, and no silent fallback (runs without a GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snarkd.errors import EXIT_USAGE, BackendUnavailable
from snarkd.formats.wtns import read_wtns
from snarkd.prover import Backend, ProvingKey, get_backend, prove
from snarkd.prover.backend import cuda_device_count
from snarkd.prover.cpu import CPU

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = {"bn128": REPO / "examples" / "chain-bn128"}


def test_cpu_backend_is_the_default_and_a_backend():
    assert get_backend() is CPU and get_backend("CPU") is CPU
    assert isinstance(CPU, Backend)
    assert CPU.spmv_on_device is False and CPU.g2_on_device is False


def test_unknown_backend_is_refused():
    with pytest.raises(BackendUnavailable, match="unknown backend 'tpu'"):
        get_backend("tpu")


def test_prove_by_name_on_cpu_and_refuses_a_missing_gpu():
    case = EXAMPLES["bn128"]
    with ProvingKey.load(case / "chain.zkey") as key:
        wtns = read_wtns(case / "chain.wtns")
        by_name = prove(key, wtns, r=3, s=4, backend="cpu")
        by_object = prove(key, wtns, r=3, s=4, backend=CPU)
        assert by_name.proof == by_object.proof
        if cuda_device_count() > 0:
            pytest.skip("this machine has a GPU: tests/gpu covers backend='cuda'")
        # asked for by name, the GPU backend must prove on a GPU or say why not: never a CPU proof
        with pytest.raises(BackendUnavailable) as e:
            prove(key, wtns, r=3, s=4, backend="cuda")
        assert e.value.exit_code == EXIT_USAGE and "cuda backend cannot run here" in str(e.value)
        assert "CuPy" in str(e.value) or "CUDA device" in str(e.value)
        # auto picks the CPU here, and says so by name
        assert get_backend("auto") is CPU


def test_a_non_backend_object_is_a_type_error():
    case = EXAMPLES["bn128"]
    with ProvingKey.load(case / "chain.zkey") as key:
        with pytest.raises(TypeError, match="backend must be a name"):
            prove(key, read_wtns(case / "chain.wtns"), backend=42)


def test_a_backend_by_name_takes_the_declared_gpus_settings_and_the_cli_the_environment(monkeypatch, tmp_path):
    """prove(key, w, backend="cuda") from a library caller gets the [gpus] settings' declared defaults: the
    library never reads the environment. The CLI, an entry point, reads it (Config.defaults()) and passes it
    down, so SNARKD_GPU_CUBIN_DIR still reaches `snarkd prove --backend cuda`."""
    import snarkd.prover.backend as backend
    from snarkd.cli.prove import _backend
    from snarkd.config import Config

    seen = {}
    monkeypatch.setattr(backend, "get_backend", lambda name, device=0, **opts: seen.update(name=name, **opts) or CPU)
    monkeypatch.setenv("SNARKD_GPU_CUBIN_DIR", str(tmp_path))
    monkeypatch.setenv("SNARKD_GPU_STREAM_BASES", "on")
    assert backend.resolve("cuda") is CPU
    assert seen == {"name": "cuda", "memory_budget": "auto", "msm_tables": "auto", "msm_window_bits": 0,
                    "cubin_dir": "", "stream_bases": "auto"}
    seen.clear()
    assert _backend("cuda", Config.defaults()) is CPU
    assert seen == {"name": "cuda", "memory_budget": "auto", "msm_tables": "off", "msm_window_bits": 0,
                    "cubin_dir": str(tmp_path), "stream_bases": "on"}
    assert backend.resolve("cpu") is CPU and backend.resolve(None) is CPU


def test_one_chooser_decides_cpu_cuda_or_auto(monkeypatch):
    from snarkd.errors import BackendUnavailable
    from snarkd.prover import chooser

    asked = []
    monkeypatch.setattr(chooser, "cuda_device_count", lambda: asked.append(1) or 2)
    assert chooser.choose("cpu") == ("cpu", "cpu") and chooser.choose("CUDA") == ("cuda", "cuda") and not asked
    # auto below the floor never asks CUDA (its device count costs ~0.8 s of start-up)
    assert chooser.choose("auto", size=1 << 10, floor=1 << 16)[0] == "cpu" and not asked
    assert chooser.choose(None, size=1 << 20, floor=1 << 16) == ("cuda", "auto: domain 1048576 >= 65536") and asked
    # a caller that holds its devices (the daemon's aggregator) says how many GPUs it has
    assert chooser.choose("auto", gpus=0) == ("cpu", "auto: no GPU") and chooser.choose("auto", gpus=1)[0] == "cuda"
    with pytest.raises(BackendUnavailable, match="unknown backend 'tpu'"):
        chooser.choose("tpu")

