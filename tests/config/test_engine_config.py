"""The engine's config keys ([pipeline], [daemon] status_listen, [memory] budget) and EngineConfig.from_config."""

from __future__ import annotations

import pytest

from snarkd.config import Config, ConfigError
from snarkd.engine import Engine, EngineConfig
from snarkd.engine.devices import resolve_devices
from snarkd.errors import DaemonError


def load(text: str, tmp_path) -> Config:
    return Config.from_text(text, str(tmp_path / "snarkd.toml"), tmp_path, env={})


def test_defaults_and_from_config(tmp_path):
    cfg = load('[synthesis]\nworkers = 3\nthreads = 1\n[memory]\nbudget = "64MiB"\n', tmp_path)
    assert cfg.pipeline.self_verify is True and cfg.pipeline.g2_on_device == "auto"
    assert cfg.daemon.status_listen is None and 'status_listen = ""' in cfg.to_toml()
    ec = EngineConfig.from_config(cfg)
    assert (ec.synthesis_workers, ec.threads, ec.memory_budget, ec.self_verify) == (3, 1, 64 << 20, True)
    eng = Engine(ec)
    assert eng.budget.budget == 64 << 20 and [d.name for d in eng.devices] == ["cpu"]
    assert eng.g2_on_device is False  # auto: a CPU device leaves G2 to finalize
    assert load("[pipeline]\ng2_on_device = true\n", tmp_path).pipeline.g2_on_device is True
    with pytest.raises(ConfigError, match='g2_on_device = "yes": expected true, false or "auto"'):
        load('[pipeline]\ng2_on_device = "yes"\n', tmp_path)
    assert {k: w.expected for k, w in eng.status().workers.items()} == {"synthesis": 3, "device": 2, "finalize": 1}


def test_pipeline_keys_change_the_fingerprint(tmp_path):
    a = load("[pipeline]\nself_verify = true\n", tmp_path)
    b = load("[pipeline]\nself_verify = false\nqueue_depth = 4\nfinalize_workers = 2\n", tmp_path)
    c = load('[daemon]\nstatus_listen = "127.0.0.1:9821"\n', tmp_path)
    assert a.fingerprint != b.fingerprint != c.fingerprint
    assert b.pipeline.queue_depth == 4 and b.pipeline.finalize_workers == 2 and not b.pipeline.self_verify
    assert c.daemon.status_listen.port == 9821 and 'status_listen = "127.0.0.1:9821"' in c.to_toml()
    assert load(c.to_toml(), tmp_path).fingerprint == c.fingerprint


@pytest.mark.parametrize("text,needle", [
    ('[pipeline]\nself_verify = "yes"\n', "[pipeline] self_verify = \"yes\": expected true or false"),
    ("[pipeline]\nqueue_depth = -1\n", "[pipeline] queue_depth = -1: must be 0"),
    ("[pipeline]\nfinalize_workers = 0\n", "[pipeline] finalize_workers = 0: must be at least 1"),
    ("[pipeline]\nself_verfy = true\n", "did you mean self_verify?"),
    ('[daemon]\nstatus_listen = "unix:/tmp/x.sock"\n', "status endpoint is HTTP over TCP"),
    ('[daemon]\nlisten = "127.0.0.1:9000"\nstatus_listen = "127.0.0.1:9000"\n', "must differ from listen"),
])
def test_bad_values_name_key_and_line(tmp_path, text, needle):
    with pytest.raises(ConfigError) as e:
        load(text, tmp_path)
    assert needle in str(e.value) and "snarkd.toml:" in str(e.value)


def test_gpu_devices_without_a_cuda_backend_fail_loudly():
    from snarkd.prover.backend import cuda_device_count

    if cuda_device_count() > 0:
        pytest.skip("a CUDA backend is present here")
    with pytest.raises(DaemonError, match="no CUDA device or backend"):
        resolve_devices(EngineConfig(devices=(0, 1)))
