"""Every setting is declared once (snarkd.config.settings): the example config, `config show`, the settings
table in docs/daemon.md and EngineConfig are derived from the declarations, and only the config layer reads the environment."""

from __future__ import annotations

import pickle
import re
import typing
from pathlib import Path

from snarkd.config import SETTINGS, Config, EngineConfig
from snarkd.config.render import example_toml, readme_table
from snarkd.config.sections import SECTION_CLASSES, section_keys
from snarkd.config import settings as settings_module
from snarkd.config.settings import ENGINE_SETTINGS, SECTIONS

REPO = Path(__file__).resolve().parents[2]


def test_example_config_is_the_rendered_declarations():
    assert (REPO / "examples" / "snarkd.toml").read_text() == example_toml(), \
        "regenerate: python -m snarkd.config example > examples/snarkd.toml"


def test_settings_table_is_the_rendered_declarations():
    assert readme_table() in (REPO / "docs" / "daemon.md").read_text(), \
        "regenerate: python -m snarkd.config readme docs/daemon.md"


def test_config_show_lists_every_setting_and_reads_back(tmp_path):
    cfg = Config.from_text("", str(tmp_path / "c.toml"), tmp_path, env={})
    text = cfg.to_toml()
    tables = re.findall(r"^\[([a-z_.]+)\]$", text, re.M)
    assert [t for t in tables if "." not in t] == list(SECTIONS)
    for s in SETTINGS:
        assert re.search(rf"^\[{s.section}(\.{s.key})?\]$", text, re.M)
        assert re.search(rf"^{s.key} = ", text, re.M) or f"[{s.section}.{s.key}]" in text, s.name
    assert Config.from_text(text, str(tmp_path / "c.toml"), tmp_path, env={}).fingerprint == cfg.fingerprint


def test_environment_overrides_are_listed(tmp_path):
    env = {"SNARKD_GPU_MSM_TABLES": "off", "SNARKD_DEBUG_PROVE_DELAY_MS": "250", "SNARKD_GPU_BUDGET": "8GiB"}
    cfg = Config.from_text('[gpus]\nmsm_tables = "on"\n', str(tmp_path / "c.toml"), tmp_path, env=env)
    assert cfg.gpus.msm_tables == "off" and cfg.debug.synthesis_delay == 0.25 and cfg.gpus.memory_budget == 8 << 30
    assert set(cfg.overrides) == {"gpus.msm_tables", "debug.synthesis_delay", "gpus.memory_budget"}
    assert "msm_tables = \"off\"  # from SNARKD_GPU_MSM_TABLES" in cfg.to_toml()


def test_engine_config_is_derived():
    fields = list(EngineConfig.__dataclass_fields__)
    assert fields == [s.engine for s in ENGINE_SETTINGS]
    ec = EngineConfig()
    assert (ec.synthesis_workers, ec.workers_per_device, ec.msm_tables, ec.devices) == (2, 2, "auto", ())
    # the engine's status shows every engine setting but the testing stall and the local cache path
    assert set(ec.status_view()) == set(fields) - {"debug_delay_s", "wasm_cache"}
    assert pickle.loads(pickle.dumps(ec)) == ec  # the cluster front sends it to its actors


def test_engine_names_are_the_keys_but_the_documented_ten():
    """EngineConfig's fields (and the status's config record) use the file's keys, but for the ten whose key alone
    is ambiguous in one flat namespace (settings.py's docstring says why each): no other setting is renamed."""
    renamed = {s.name: s.engine for s in ENGINE_SETTINGS if s.engine != s.key}
    assert renamed == {"keys.max_resident": "key_max_resident", "keys.host_budget": "key_host_budget",
                       "keys.device_budget": "key_device_budget", "synthesis.workers": "synthesis_workers",
                       "synthesis.nice": "synthesis_nice",
                       "witness.engine": "witness_engine", "witness.compiled": "witness_compiled", "gpus.memory_budget": "gpu_memory_budget",
                       "memory.budget": "memory_budget", "debug.synthesis_delay": "debug_delay_s"}
    assert len(ENGINE_SETTINGS) - len(renamed) == 24  # with [cpu] ifma and huge_pages (its actors apply them: cluster/actor.py)
    doc = settings_module.__doc__
    for name, field in renamed.items():
        section, key = name.split(".")
        assert f"[{section}]" in doc and (field in doc or field.split("_")[0] + "_*" in doc), name


def test_library_defaults_are_the_declared_ones_not_the_environment(monkeypatch, tmp_path):
    """Only entry points read the environment (Config.load/defaults); what the library builds without a
    Config is the declared defaults, whatever the environment says."""
    from snarkd.config.sections import ENGINE_DEFAULTS
    from snarkd.engine import KeyStore

    monkeypatch.setenv("SNARKD_GPU_MSM_TABLES", "off")
    monkeypatch.setenv("SNARKD_WASM_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    declared = Config.defaults(env={})
    assert EngineConfig().msm_tables == "auto" == declared.gpus.msm_tables
    assert EngineConfig().wasm_cache == ENGINE_DEFAULTS["wasm_cache"] == declared.keys.wasm_cache
    assert KeyStore().wasm_cache == declared.keys.wasm_cache != str(tmp_path / "elsewhere")
    entry = Config.defaults()  # an entry point: the environment read here
    assert EngineConfig.from_config(entry).msm_tables == "off"
    assert EngineConfig.from_config(entry).wasm_cache == str(tmp_path / "elsewhere")


def test_each_section_is_a_typed_class_with_a_field_per_setting(tmp_path):
    """Derived from SETTINGS: every Kind says what type its values are (none is left `object`)."""
    assert list(SECTION_CLASSES) == list(SECTIONS)
    for sec, cls in SECTION_CLASSES.items():
        assert section_keys(cls) == [s.key for s in SETTINGS if s.section == sec], sec
        hints = typing.get_type_hints(cls)
        assert all(hints[k] is not object for k in section_keys(cls)), sec
    cfg = Config.from_text('[gpus]\nstream_bases = "on"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    assert type(cfg.gpus).__name__ == "GpusSection" and cfg.gpus.stream_bases == "on"
    assert EngineConfig.from_config(cfg).stream_bases == "on"


def test_only_the_config_layer_reads_the_environment():
    allowed = {
        "config/loader.py", "config/settings.py", "config/kinds.py", "config/dirs.py",
        "config/cpu.py",  # SNARKD_CPU_IFMA, read by the CLI without loading the loader
        "config/env_choice.py",  # SNARKD_BACKEND and SNARKD_WITNESS_COMPILED (config/prove.py, config/witness.py),
        # read by `snarkd prove` and `snarkd witness` without loading the loader
        "daemon/sdnotify.py",  # NOTIFY_SOCKET: systemd's protocol, not a setting
        "witness/compiled/__init__.py",  # CXX: the C++ compiler, as make and setuptools read it, not a setting
        "daemon/lifecycle.py",  # copies the environment for the daemon it spawns
    }
    readers = set()
    for path in (REPO / "src" / "snarkd").rglob("*.py"):
        rel = path.relative_to(REPO / "src" / "snarkd").as_posix()
        if re.search(r"os\.environ|getenv\(", path.read_text()) and rel not in allowed:
            readers.add(rel)
    assert readers == set()


def test_only_entry_points_resolve_settings_from_the_environment():
    """Config.defaults() and config.default() read the environment: only entry points (the CLI) call them;
    library code takes values as parameters (the witness package's `cache=True` is [keys] wasm_cache's declared
    default; `snarkd witness` passes its resolution, deferred until a cache is needed: issue 35 item 4)."""
    callers = set()
    for path in (REPO / "src" / "snarkd").rglob("*.py"):
        rel = path.relative_to(REPO / "src" / "snarkd").as_posix()
        if rel.startswith(("config/", "cli/")):
            continue
        if re.search(r"Config\.defaults\(\)|\bdefault\(\"", path.read_text()):
            callers.add(rel)
    assert callers == set()


def test_prove_backend_from_env_agrees_with_the_config():
    """`snarkd prove` reads [prove] backend without the config layer (config/prove.py): the same value as
    Config.defaults() for every environment, or None where the config layer rejects the variable."""
    import pytest

    from snarkd.config import ConfigError
    from snarkd.config.prove import BACKEND_ENV, backend_from_env

    for raw in (None, "", "cpu", "CPU", "auto", "Auto", "cuda", "gpu", " cpu", "cpu "):
        env = {} if raw is None else {BACKEND_ENV: raw}
        try:
            expected = Config.defaults(env).prove.backend
        except ConfigError:
            expected = None
        assert backend_from_env(env) == expected, raw
    with pytest.raises(ConfigError, match=BACKEND_ENV):
        Config.defaults({BACKEND_ENV: "gpu"})
