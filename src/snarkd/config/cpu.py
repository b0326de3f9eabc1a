"""[cpu] ifma: whether the native core's AVX-512 IFMA kernels run, read from the environment.

`snarkd prove` on its lean path (snarkd.prover.oneshot) does not load the config layer, so
the CLI entry point asks this module, which imports nothing of it, for SNARKD_CPU_IFMA and
switches the native core (snarkd.native.apply_ifma); `snarkd serve` applies its config's
[cpu] ifma (the same variable overrides the file). The setting is declared with the others
in settings.py.

  auto  the 8-lane AVX-512 IFMA kernels where the CPU has them (MSM buckets, NTT)
  off   never: the 4-limb BMI2/ADX path that CPUs without AVX-512 take (AVX2-class
        servers, laptops); the proofs are the same. For measuring that path on a CPU
        that has IFMA, and for ruling the kernels out.
"""

from __future__ import annotations

import os

IFMA_ENV = "SNARKD_CPU_IFMA"
IFMA_CHOICES = ("auto", "off")


def ifma_from_env(env=None) -> str | None:
    """$SNARKD_CPU_IFMA, validated (auto or off), or None when it is not set. An unknown value raises
    InputError (exit code 3, as a bad config value) naming the variable."""
    env = os.environ if env is None else env
    raw = env.get(IFMA_ENV)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value not in IFMA_CHOICES:
        from snarkd.errors import InputError

        raise InputError(f"{IFMA_ENV}={raw!r}: expected one of {', '.join(IFMA_CHOICES)}")
    return value
