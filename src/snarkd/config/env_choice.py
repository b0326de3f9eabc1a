"""A setting's choice read from its environment variable without loading the config layer (config/prove.py's
[prove] backend, config/witness.py's [witness] compiled): the CLI's lean paths ask before any of config imports."""

from __future__ import annotations

import os


def choice_from_env(name: str, choices: tuple, default: str, env=None) -> str | None:
    """$name (lower case; unset or empty: `default`), or None for a value that is no choice, which the config layer
    then reports (ConfigError naming the variable)."""
    env = os.environ if env is None else env
    raw = env.get(name)
    value = default if raw in (None, "") else raw.lower()
    return value if value in choices else None
