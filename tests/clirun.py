"""Run `python -m snarkd` in a child process against this source tree, with a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from snarkd.config import SETTINGS

SRC = Path(__file__).resolve().parents[1] / "src"


def env(**extra) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(SRC), *[p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p]])
    e.pop("NOTIFY_SOCKET", None)
    for s in SETTINGS:  # no setting overridden from outside unless a test says so
        if s.env and s.env not in ("SNARKD_WASM_CACHE", "SNARKD_GPU_CUBIN_DIR"):  # caches: speed only
            e.pop(s.env, None)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def snarkd(*args, input: str | None = None, timeout: float = 120, extra_env: dict | None = None,
           cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snarkd", *map(str, args)], input=input, capture_output=True,
                          text=True, timeout=timeout, env=env(**(extra_env or {})), cwd=cwd)
