"""Fixtures for daemon tests (helpers live in daemon_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_helpers import Reaper, Setup, free_port, oracle  # noqa: E402


@pytest.fixture
def setup(tmp_path, reaper):
    s = Setup(tmp_path, free_port())
    yield s
    reaper.pid_files.append(s.pid_file)


@pytest.fixture
def reaper():
    r = Reaper()
    yield r
    r.collect()


@pytest.fixture(scope="session")
def chain_bn128():
    """The shared bn128 chain fixture circuit (same cache keys as tests/conftest.py)."""
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    return circ, circ.witness({"k": 3, "x": 2})
