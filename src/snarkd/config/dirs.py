"""Where snarkd keeps per-user files by default, from the environment (XDG): the runtime directory and the cache
directory. No other imports (pathlib only in the functions that return a Path): the cache secret's path is asked
on every load of a cached program (`snarkd witness`)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def runtime_dir(env) -> Path:
    """Where pid and log files go by default: $XDG_RUNTIME_DIR/snarkd, else /tmp/snarkd-UID."""
    from pathlib import Path

    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "snarkd"
    return Path(f"/tmp/snarkd-{os.getuid()}")


def _cache_base(env) -> str:
    return os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "snarkd")


def cache_base(env) -> Path:
    from pathlib import Path

    return Path(_cache_base(env))


def cache_secret_file(env=None) -> str:
    """This user's cache secret (formats/file_trust.py): $XDG_CACHE_HOME/snarkd/cache.key, else
    ~/.cache/snarkd/cache.key."""
    return os.path.join(_cache_base(os.environ if env is None else env), "cache.key")
