"""Fixtures for the fault-injection suite (helpers live in fault_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_helpers import Case, case  # noqa: E402


@pytest.fixture(scope="session")
def chain() -> Case:
    """bn128 chain (7,462-byte key), its witness W1 (k=3) and W2 (k=5, the same size, other public signals)."""
    return case("chain", {"k": 3, "x": 2}, {"k": 5, "x": 7})


@pytest.fixture(scope="session")
def other() -> Case:
    """Another tenant's key: bn128 many_public."""
    return case("many_public", {"in": [1, 2, 3, 4, 5, 6, 7, 8], "secret": 9})


@pytest.fixture(scope="session")
def shorter() -> Case:
    """bn128 no_public: a valid key shorter (3,750 bytes) than chain's, for `cp shorter.zkey chain.zkey`."""
    return case("no_public", {"a": 3, "b": 5})
