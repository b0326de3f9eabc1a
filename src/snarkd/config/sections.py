"""The config's sections as typed classes: `cfg.daemon.listen` is a Listen, `cfg.gpus.stream_bases` a str.

Both shapes below are built from SETTINGS (settings.py), nothing re-declared: one frozen dataclass per
section (`SECTION_CLASSES["gpus"]`, named GpusSection), one field per setting, typed by its Kind's `type`;
and `EngineConfig`, the engine's share of them (each Setting.engine a field), with the declared defaults,
for the engine embedded without a config file. The loader builds both from the validated values.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, field, fields, make_dataclass
from pathlib import Path

from snarkd.config.kinds import Context
from snarkd.config.settings import ENGINE_SETTINGS, SECTIONS, SETTINGS


def _named_here(cls):
    """A class made by make_dataclass, importable (and so picklable) by its name from this module."""
    cls.__module__ = __name__
    globals()[cls.__name__] = cls
    return cls


SECTION_CLASSES: dict[str, type] = {
    sec: _named_here(make_dataclass(f"{sec.capitalize()}Section",
                                    [(s.key, s.kind.type) for s in SETTINGS if s.section == sec], frozen=True))
    for sec in SECTIONS}


def section_keys(cls) -> list[str]:
    return [f.name for f in fields(cls)]


def _engine_defaults() -> dict:
    """Each engine setting's declared default, parsed: no config file and no environment (an embedder that wants
    the environment's overrides reads them at its entry point: EngineConfig.from_config(Config.defaults()))."""
    values: dict = {}
    ctx = Context(Path("."), {}, values)
    for s in ENGINE_SETTINGS:
        values[(s.section, s.key)] = s.default_value(ctx)
    return {s.engine: values[(s.section, s.key)] for s in ENGINE_SETTINGS}


def _field(value):
    if isinstance(value, (dict, list, set)):
        return field(default_factory=lambda: copy.copy(value))
    return field(default=value)


_STATUS_FIELDS = frozenset(s.engine for s in ENGINE_SETTINGS if s.status)


def _from_config(cls, cfg) -> "EngineConfig":
    """The engine settings of a validated Config."""
    return cls(**{s.engine: cfg.values[(s.section, s.key)] for s in ENGINE_SETTINGS})


def _status_view(self) -> dict:
    """The settings the engine's status shows (Setting.status), as plain data."""
    return {k: v for k, v in asdict(self).items() if k in _STATUS_FIELDS}


ENGINE_DEFAULTS: dict = _engine_defaults()  # EngineConfig field -> its declared default
EngineConfig = _named_here(make_dataclass(
    "EngineConfig", [(s.engine, s.kind.type, _field(ENGINE_DEFAULTS[s.engine])) for s in ENGINE_SETTINGS],
    namespace={"from_config": classmethod(_from_config), "status_view": _status_view,
               "__doc__": "The engine's settings: each SETTINGS entry with an `engine` name is a field of that "
                          "name, with the setting's declared default (what an Engine takes embedded without a "
                          "config file). `from_config` reads them from a validated Config."}))
