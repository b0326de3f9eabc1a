"""Settings, declared once (settings.py), validated once (loader.py), rendered for people (render.py).

The bottom layer beside formats/ and curves/: every other layer may read a Config, and only this
package reads snarkd's environment variables, for entry points (the CLI, the daemon): `Config.load`,
`Config.defaults()`, `default()`. Library code takes values as parameters whose defaults are the declared
ones (EngineConfig(), settings.declared), never the environment's.

The names below are imported on first use (PEP 562): a process that only needs `config.dirs` (the cache
secret's path, on every cached-program load of `snarkd witness`) does not pay ~30 ms for the validator.
"""

from __future__ import annotations


_WHERE = {
    "Listen": "kinds", "parse_listen": "kinds",
    "CONFIG_ENV": "loader", "Config": "loader", "ConfigError": "loader", "config_path": "loader", "default": "loader",
    "EngineConfig": "sections",
    "SETTINGS": "settings", "Setting": "settings",
}

__all__ = ["Config", "ConfigError", "EngineConfig", "Listen", "SETTINGS", "Setting", "CONFIG_ENV", "config_path", "default",
           "deferred", "parse_listen"]


class Deferred:
    """One setting as `default(name)` gives it (its environment override, else its default), read when called: an
    entry point hands this to library code that needs the value only on some paths (`snarkd witness` reads [keys]
    wasm_cache only when no program lies beside the .wasm), so the validator is not loaded for the others and the
    library calls down into config/, never back up into the entry point."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self):
        # __import__ with a fromlist gives the submodule: importlib (and its warnings) stay out of `snarkd witness`
        return __import__(f"{__name__}.loader", fromlist=["default"]).default(self.name)

    def __repr__(self) -> str:
        return f"deferred({self.name!r})"


def deferred(name: str) -> Deferred:
    return Deferred(name)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
