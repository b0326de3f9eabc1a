"""Settings, declared once (settings.py), validated once (loader.py), rendered for people (render.py).

The bottom layer beside formats/ and curves/: every other layer may read a Config
or call `default()`, and only this package reads snarkd's environment variables.

The names below are loaded on first use (PEP 562), so that a light submodule such as
config/cpu.py (read by `snarkd prove`'s lean path) does not import the loader, whose
import costs ~50 ms of a one-shot proof's start-up.
"""

import importlib

_EXPORTS = {
    "Listen": "kinds", "parse_listen": "kinds",
    "CONFIG_ENV": "loader", "Config": "loader", "ConfigError": "loader", "config_path": "loader", "default": "loader",
    "EngineConfig": "sections",
    "SETTINGS": "settings", "Setting": "settings",
}

__all__ = ["Config", "ConfigError", "EngineConfig", "Listen", "SETTINGS", "Setting", "CONFIG_ENV", "config_path", "default",
           "parse_listen"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
