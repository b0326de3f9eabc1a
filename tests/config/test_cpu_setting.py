"""[cpu] ifma / SNARKD_CPU_IFMA: the AVX-512 IFMA kernels on or off for the process, read without the config
layer by the CLI (the lean `snarkd prove` path) and from the config by `snarkd serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from snarkd.config import Config, EngineConfig
from snarkd.config.cpu import HUGE_PAGES_ENV, IFMA_ENV, huge_pages_from_env, ifma_from_env
from snarkd.errors import EXIT_BAD_INPUT, InputError
from snarkd.native import apply_huge_pages, apply_ifma
from snarkd.native import _core, _witness


@pytest.fixture
def restore_ifma():
    prev = _core.uses_simd52(), _witness.uses_simd52()
    yield
    _core._set_simd52(prev[0] or _core.cpu_has_simd52())
    _witness.set_ifma(prev[1] or _core.cpu_has_simd52())


def test_unset_is_none():
    assert ifma_from_env({}) is None


def test_off_and_auto(restore_ifma):
    assert ifma_from_env({IFMA_ENV: "off"}) == "off"
    apply_ifma("off")
    assert not _core.uses_simd52()
    assert ifma_from_env({IFMA_ENV: " Auto "}) == "auto"
    apply_ifma("auto")
    assert _core.uses_simd52() == _core.cpu_has_simd52()


def test_it_reaches_native_witnesses(restore_ifma):
    """The _witness extension has its own copy of the switch (native/witness_module.cpp): the one entry,
    snarkd.native.apply_ifma, switches it with the core's."""
    apply_ifma("off")
    assert not _core.uses_simd52() and not _witness.uses_simd52()
    apply_ifma("auto")
    assert _witness.uses_simd52() == _core.uses_simd52() == _core.cpu_has_simd52()


def test_an_engine_setting(tmp_path):
    """[cpu] ifma travels in EngineConfig (ifma): a cluster's engine actors apply the front's."""
    cfg = Config.from_text('[cpu]\nifma = "off"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    assert EngineConfig.from_config(cfg).ifma == "off"
    assert EngineConfig().ifma == "auto"


def test_unknown_value_names_the_variable():
    with pytest.raises(InputError, match="SNARKD_CPU_IFMA='avx2': expected one of auto, off"):
        ifma_from_env({IFMA_ENV: "avx2"})


def test_config_file_and_environment(tmp_path):
    cfg = Config.from_text('[cpu]\nifma = "off"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    assert cfg.cpu.ifma == "off"
    cfg = Config.from_text('[cpu]\nifma = "off"\n', str(tmp_path / "c.toml"), tmp_path, env={IFMA_ENV: "auto"})
    assert cfg.cpu.ifma == "auto" and "cpu.ifma" in cfg.overrides
    assert Config.from_text("", str(tmp_path / "c.toml"), tmp_path, env={}).cpu.ifma == "auto"


def test_the_cli_applies_it_before_any_command():
    """`snarkd doctor` reports the kernels in use: off in a process started with SNARKD_CPU_IFMA=off"""
    env = dict(os.environ, **{IFMA_ENV: "off"})
    out = subprocess.run([sys.executable, "-m", "snarkd", "doctor", "--json"], capture_output=True, text=True, env=env)
    assert '"uses_avx512_ifma": false' in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-m", "snarkd", "doctor", "--json"], capture_output=True, text=True,
                         env=dict(os.environ, **{IFMA_ENV: "maybe"}))
    assert bad.returncode == EXIT_BAD_INPUT and "SNARKD_CPU_IFMA" in bad.stderr
    json.loads(out.stdout)  # the report itself still parses


# [cpu] huge_pages / SNARKD_CPU_HUGE_PAGES: the huge-page advice of the native core's large buffers
# (native/big_buffer.hpp), wired as [cpu] ifma is.


@pytest.fixture
def restore_huge_pages():
    prev = _core.uses_huge_pages()
    yield
    _core.set_huge_pages(prev)


def test_huge_pages_from_env():
    assert huge_pages_from_env({}) is None
    assert huge_pages_from_env({HUGE_PAGES_ENV: " OFF "}) == "off"
    assert huge_pages_from_env({HUGE_PAGES_ENV: "auto"}) == "auto"
    with pytest.raises(InputError, match="SNARKD_CPU_HUGE_PAGES='always': expected one of auto, off"):
        huge_pages_from_env({HUGE_PAGES_ENV: "always"})


def test_apply_huge_pages_switches_the_core_and_native_witnesses(restore_huge_pages, monkeypatch):
    """One setting for both: _witness.set_huge_pages is called where that extension has it."""
    calls = []
    monkeypatch.setattr(_witness, "set_huge_pages", calls.append, raising=False)
    apply_huge_pages("off")
    assert not _core.uses_huge_pages() and calls == [False]
    apply_huge_pages("auto")
    assert _core.uses_huge_pages() and calls == [False, True]


def test_huge_pages_in_the_config_file_and_environment(tmp_path):
    cfg = Config.from_text('[cpu]\nhuge_pages = "off"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    assert cfg.cpu.huge_pages == "off"
    cfg = Config.from_text('[cpu]\nhuge_pages = "off"\n', str(tmp_path / "c.toml"), tmp_path,
                           env={HUGE_PAGES_ENV: "auto"})
    assert cfg.cpu.huge_pages == "auto" and "cpu.huge_pages" in cfg.overrides
    assert Config.from_text("", str(tmp_path / "c.toml"), tmp_path, env={}).cpu.huge_pages == "auto"
    with pytest.raises(InputError):
        Config.from_text('[cpu]\nhuge_pages = "always"\n', str(tmp_path / "c.toml"), tmp_path, env={})


def test_the_cli_applies_huge_pages_before_any_command(tmp_path):
    """A process started with SNARKD_CPU_HUGE_PAGES=off has the advice off by the time a command runs (the CLI's
    entry applies it: `snarkd config show` is a command that loads the core only through it); a bad value
    exits with the bad-input code naming the variable."""
    probe = ("import sys; from snarkd.cli import main; rc = main(['config', 'show']); "
             "from snarkd.native import _core; print('ADVICE', _core.uses_huge_pages(), file=sys.stderr)")
    for value, want in (("off", "False"), ("auto", "True")):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             env=dict(os.environ, **{HUGE_PAGES_ENV: value}))
        assert f"ADVICE {want}" in out.stderr, out.stdout[-2000:] + out.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-m", "snarkd", "config", "show"], capture_output=True, text=True,
                         env=dict(os.environ, **{HUGE_PAGES_ENV: "maybe"}))
    assert bad.returncode == EXIT_BAD_INPUT and "SNARKD_CPU_HUGE_PAGES" in bad.stderr
