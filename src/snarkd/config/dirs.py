"""Where snarkd keeps per-user files by default, from the environment (XDG): the runtime directory and the cache
directory. No other imports: the cache secret's path is asked on every load of a cached program."""

from __future__ import annotations

import os
from pathlib import Path


def runtime_dir(env) -> Path:
    """Where pid and log files go by default: $XDG_RUNTIME_DIR/snarkd, else /tmp/snarkd-UID."""
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "snarkd"
    return Path(f"/tmp/snarkd-{os.getuid()}")


def cache_base(env) -> Path:
    return Path(env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")) / "snarkd"


def cache_secret_path(env=None) -> Path:
    """This user's cache secret (formats/file_trust.py): $XDG_CACHE_HOME/snarkd/cache.key, else
    ~/.cache/snarkd/cache.key."""
    return cache_base(os.environ if env is None else env) / "cache.key"
