"""[cpu] ifma and [cpu] huge_pages: the native core's AVX-512 IFMA kernels and its huge-page advice, read from
the environment.

`snarkd prove` on its lean path (snarkd.prover.oneshot) does not load the config layer, so
the CLI entry point asks this module, which imports nothing of it, for SNARKD_CPU_IFMA and
switches the native core (snarkd.native.apply_ifma); `snarkd serve` applies its config's
[cpu] ifma (the same variable overrides the file). The setting is declared with the others
in settings.py.

  auto  the 8-lane AVX-512 IFMA kernels where the CPU has them (MSM buckets, NTT)
  off   never: the 4-limb BMI2/ADX path that CPUs without AVX-512 take (AVX2-class
        servers, laptops); the proofs are the same. For measuring that path on a CPU
        that has IFMA, and for ruling the kernels out.

[cpu] huge_pages ($SNARKD_CPU_HUGE_PAGES; snarkd.native.apply_huge_pages, wired as ifma):

  auto  a proof's large buffers (2-16 MiB: the domain vectors, the QAP step's arrays, the
        MSM's digit table; native witnesses' own) are advised MADV_HUGEPAGE, so that where
        transparent huge pages are "madvise" one page fault maps 2 MiB instead of 4 KiB
        (larger ones measured slower so, native/big_buffer.hpp)
  off   no advice: 4 KiB pages. For a host whose THP defrag setting ("madvise", "always")
        would compact memory synchronously inside an advised fault, and for measuring.
"""

from __future__ import annotations

import os

IFMA_ENV = "SNARKD_CPU_IFMA"
IFMA_CHOICES = ("auto", "off")
HUGE_PAGES_ENV = "SNARKD_CPU_HUGE_PAGES"
HUGE_PAGES_CHOICES = ("auto", "off")


def _choice_from_env(name: str, choices: tuple[str, ...], env) -> str | None:
    env = os.environ if env is None else env
    raw = env.get(name)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value not in choices:
        from snarkd.errors import InputError

        raise InputError(f"{name}={raw!r}: expected one of {', '.join(choices)}")
    return value


def ifma_from_env(env=None) -> str | None:
    """$SNARKD_CPU_IFMA, validated (auto or off), or None when it is not set. An unknown value raises
    InputError (exit code 3, as a bad config value) naming the variable."""
    return _choice_from_env(IFMA_ENV, IFMA_CHOICES, env)


def huge_pages_from_env(env=None) -> str | None:
    """$SNARKD_CPU_HUGE_PAGES, validated (auto or off), or None when it is not set; an unknown value raises
    InputError naming the variable, as ifma_from_env."""
    return _choice_from_env(HUGE_PAGES_ENV, HUGE_PAGES_CHOICES, env)
