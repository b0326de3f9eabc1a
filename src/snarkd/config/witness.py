"""[witness] compiled as `snarkd witness` reads it, without loading the config layer.

`snarkd witness` reads no config file: its settings are the declared defaults with the environment's overrides.
The validator costs ~30 ms of a one-shot run's CPU, more than the compiled witness library saves on some circuits,
to learn one value that is "auto" unless $SNARKD_WITNESS_COMPILED says otherwise. The CLI asks this module, which
imports nothing of the config layer; a value that is no choice goes to the config layer, which reports it. The
setting is declared with the others in settings.py, from these names.
"""

from __future__ import annotations

from snarkd.config.env_choice import choice_from_env

COMPILED_ENV = "SNARKD_WITNESS_COMPILED"
COMPILED_CHOICES = ("auto", "off")
COMPILED_DEFAULT = "auto"


def compiled_from_env(env=None) -> str | None:
    """$SNARKD_WITNESS_COMPILED (lower case; unset or empty: the default), or None for a value that is no choice, which the config layer reports (config/env_choice.py)."""
    return choice_from_env(COMPILED_ENV, COMPILED_CHOICES, COMPILED_DEFAULT, env)
