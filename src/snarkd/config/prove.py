"""[prove] backend as one-shot `snarkd prove` reads it, without loading the config layer.

`snarkd prove` reads no config file: its settings are the declared defaults with the environment's
overrides (Config.defaults()). Building that Config (the validator, tomllib, one dataclass per
section) cost ~50 ms of process CPU, more than the rest of the start-up's imports, to learn one
value that is "cpu" unless $SNARKD_BACKEND says otherwise. The CLI asks this module, which imports
nothing of the config layer, and loads the Config only for another backend (auto needs [prove]
auto_cuda_min_domain, cuda the [gpus] settings). The setting is declared with the others in
settings.py, from these names.
"""

from __future__ import annotations

from snarkd.config.env_choice import choice_from_env

BACKEND_ENV = "SNARKD_BACKEND"
BACKEND_CHOICES = ("cpu", "cuda", "auto")
BACKEND_DEFAULT = "cpu"


def backend_from_env(env=None) -> str | None:
    """$SNARKD_BACKEND (lower case; unset or empty: the default), or None for a value that is no backend, which the config layer reports (config/env_choice.py)."""
    return choice_from_env(BACKEND_ENV, BACKEND_CHOICES, BACKEND_DEFAULT, env)
