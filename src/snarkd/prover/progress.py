"""Progress of long one-shot commands (prove, witness): a tqdm bar on stderr, only on a terminal.

`PhaseBar` is a PhaseTimer that moves the bar as each named phase ends and shows the
one running now; commands show it for large inputs (`wanted`), and `--quiet` or
`--no-progress` silence it (`--progress` forces it, e.g. for a terminal recording).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

from snarkd.prover.timing import PhaseTimer


def wanted(forced: bool | None, quiet: bool, large: bool) -> bool:
    """Show a bar: --progress / --no-progress when given; else on a terminal, for large inputs, unless --quiet."""
    if forced is not None:
        return forced
    return large and not quiet and sys.stderr.isatty()


class _NoBar:
    """What a disabled bar does: nothing (and tqdm is not imported for it: whole-process commands
    such as `snarkd witness` on a cached native program take ~0.2 s, a third of it was tqdm's import)."""

    def __init__(self, total: int = 0, **_):
        self.n, self.total = 0, total

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_description_str(self, desc: str) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(enabled: bool, **kwargs):
    if not enabled:
        return _NoBar(**kwargs)
    from tqdm import tqdm

    return tqdm(file=sys.stderr, leave=False, dynamic_ncols=True, **kwargs)


class _Bar:
    """A tqdm bar (self.bar) closed on leaving a `with` block."""

    def close(self) -> None:
        self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StepBar(_Bar):
    """A bar over named steps (`with bar.step("compile"): ...`), for commands outside the prover's phases."""

    def __init__(self, desc: str, steps: int, enabled: bool = True):
        self.desc = desc
        self.bar = _bar(enabled, total=steps, desc=desc, unit="step", bar_format="{desc}: {n}/{total} steps [{elapsed}]")

    @contextmanager
    def step(self, name: str):
        self.bar.set_description_str(f"{self.desc} ({name})")
        yield
        self.bar.update(1)


class PhaseBar(_Bar, PhaseTimer):
    """Times phases like PhaseTimer and shows them on a bar of `phases` steps."""

    def __init__(self, desc: str, phases: int, enabled: bool = True):
        super().__init__()
        self.desc = desc
        self.bar = _bar(enabled, total=phases, desc=desc, unit="phase",
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}]")
        self._done: set[str] = set()

    @contextmanager
    def phase(self, name: str):
        self.bar.set_description_str(f"{self.desc} ({name})")
        with super().phase(name):
            yield
        if name not in self._done:  # a phase run several times counts once
            self._done.add(name)
            if self.bar.n >= self.bar.total:
                self.bar.total += 1
            self.bar.update(1)
