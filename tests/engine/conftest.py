"""Fixtures for engine tests: the bn128 chain circuit (same cache keys as tests/conftest.py)."""

from __future__ import annotations

import pytest

import oracle


@pytest.fixture(scope="session")
def chain_bn128():
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    return circ, circ.witness({"k": 3, "x": 2})
