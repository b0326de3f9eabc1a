"""Shared session fixtures: compiled circuits with snarkjs keys and witnesses, per curve.

Every artefact comes from tests/oracle.py (circom2 + snarkjs) and is cached on
disk under .fixtures/ (or $SNARKD_FIXTURE_DIR), so only the first run pays for
the builds. Fixture circuits are kept small (domain <= 2^6) so a cold build
stays cheap: per curve one ptau at FIXTURE_POWER shared by all circuits, plus the
exact-fill circuit set up at its minimal ptau power (the edge snarkjs allows).

Usage in a test:

    def test_something(chain_circuit):        # runs once per curve
        circ, wtns = chain_circuit.circuit, chain_circuit.wtns

    def test_all(all_circuits):               # list of Case for one curve
        for case in all_circuits: ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
for p in (str(TESTS), str(REPO / "src")):
    if p not in sys.path:
        sys.path.insert(0, p)

from cases import CURVES, ZERO_INPUTS, Case, build_all, build_case  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# The suite runs on shared 2-core machines (CI, development VMs beside benchmarks): a slow example
# generation there says nothing about the code under test. Tests that set their own deadline keep it.
settings.register_profile("shared-cores", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared-cores")

@pytest.fixture(scope="session", params=CURVES)
def curve(request) -> str:
    """snarkjs curve name, "bn128" or "bls12381"."""
    return request.param


@pytest.fixture(scope="session")
def chain_circuit(curve) -> Case:
    return build_case("chain", curve)


@pytest.fixture(scope="session")
def exact_circuit(curve) -> Case:
    """chain with m + nPublic + 1 == domain size (rows fill the domain exactly)."""
    return build_case("chain_exact", curve)


@pytest.fixture(scope="session")
def no_public_circuit(curve) -> Case:
    return build_case("no_public", curve)


@pytest.fixture(scope="session")
def many_public_circuit(curve) -> Case:
    return build_case("many_public", curve)


@pytest.fixture(scope="session")
def circomlib_circuit(curve) -> Case:
    return build_case("circomlib_cmp", curve)


@pytest.fixture(scope="session")
def all_circuits(curve) -> list[Case]:
    return build_all(curve)


@pytest.fixture(scope="session")
def zero_witness(chain_circuit) -> Path:
    """A chain witness for k = x = 0 (many zero values), same key as chain_circuit."""
    return chain_circuit.circuit.witness(ZERO_INPUTS)
