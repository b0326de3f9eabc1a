"""The fixture circuits shared by all test folders: compiled with circom2 and set up
with snarkjs (tests/oracle.py), cached on disk. Tests import from here (never
from `conftest`, a name several test folders use)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import oracle

CURVES = oracle.CURVES  # ("bn128", "bls12381")

# One shared ptau power per curve for the fixture circuits (all have domain <= 2^6).
FIXTURE_POWER = 6

# chain.circom has N constraints and nPublic = 2 (out, k): rows = N + 3.
CHAIN_N = 10  # rows 13, domain 16
EXACT_CHAIN_N = 13  # rows 16 = 2^4: the rows fill the domain exactly
MANY_PUBLIC_N = 8  # 8 public inputs + 4 outputs


@dataclass(frozen=True)
class Case:
    """A circuit with its key and one witness. `inputs` produced `wtns`."""

    name: str
    curve: str
    circuit: oracle.Circuit
    inputs: dict
    wtns: Path
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def zkey(self) -> Path:
        return self.circuit.zkey

    @property
    def r1cs(self) -> Path:
        return self.circuit.r1cs

    @property
    def vk(self) -> Path:
        return self.circuit.vk


# name -> (circuit file, template params, inputs, include_circomlib, ptau power or None = minimal)
SPECS: dict[str, tuple] = {
    "chain": ("chain.circom", {"N": CHAIN_N}, {"k": 3, "x": 2}, False, FIXTURE_POWER),
    "chain_exact": ("chain.circom", {"N": EXACT_CHAIN_N}, {"k": 5, "x": 11}, False, None),
    "no_public": ("no_public.circom", {}, {"a": 3, "b": 5}, False, FIXTURE_POWER),
    "many_public": ("many_public.circom", {"N": MANY_PUBLIC_N}, {"in": [1, 2, 3, 4, 5, 6, 7, 8], "secret": 9}, False, FIXTURE_POWER),
    "circomlib_cmp": ("circomlib_cmp.circom", {}, {"a": 300, "b": 1000}, True, FIXTURE_POWER),
}

# Inputs that make many witness values zero (k = x = 0 -> s[1] = 0, ...).
ZERO_INPUTS = {"k": 0, "x": 0}

_cache: dict[tuple[str, str], Case] = {}


def build_case(name: str, curve: str) -> Case:
    key = (name, curve)
    if key not in _cache:
        filename, params, inputs, lib, power = SPECS[name]
        source = oracle.load_circuit_source(filename, **params)
        circ = oracle.circuit(source, f"{name}", curve, include_circomlib=lib, power=power)
        _cache[key] = Case(name, curve, circ, inputs, circ.witness(inputs))
    return _cache[key]


def build_all(curve: str) -> list[Case]:
    return [build_case(name, curve) for name in SPECS]


