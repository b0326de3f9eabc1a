"""Fixtures for engine tests: the bn128 chain circuit (same cache keys as tests/conftest.py)."""

from __future__ import annotations

import pytest

import oracle


@pytest.fixture(scope="session")
def chain_bn128():
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    return circ, circ.witness({"k": 3, "x": 2})


@pytest.fixture
def running():
    """running(engine) -> the engine, started; every engine started so is stopped after the test, and its
    workers must have ended."""
    engines = []

    def start(eng):
        engines.append(eng)
        eng.start()
        return eng

    yield start
    for e in engines:
        e.stop(0)
        assert e.join_workers(10)
