"""[limits] wasm_fuel and wasm_memory: a runaway or greedy circuit stops with a message naming the limit;
within the limits the witness is the same as without them."""

from __future__ import annotations

import numpy as np
import pytest

from snarkd.errors import InputError
from snarkd.witness import WitnessCalculator
from wfixtures import POSEIDON_INPUT, compiled, wasm_cache  # noqa: F401


@pytest.fixture(scope="module")
def poseidon_bn128():
    return compiled("poseidon.circom", "bn128", include_circomlib=True, N=3)


@pytest.mark.slow
def test_fuel_bounds_a_calculation(poseidon_bn128):
    plain = WitnessCalculator(poseidon_bn128.wasm).calculate(POSEIDON_INPUT)
    counted = WitnessCalculator(poseidon_bn128.wasm, fuel=10**12)
    assert np.array_equal(counted.calculate(POSEIDON_INPUT).values, plain.values)
    starved = WitnessCalculator(poseidon_bn128.wasm, fuel=100_000)
    for _ in range(2):  # the failed instance is dropped; the next one fails the same way
        with pytest.raises(InputError, match=r"spent all its fuel \(100000 units, \[limits\] wasm_fuel\)"):
            starved.calculate(POSEIDON_INPUT)


def test_memory_limit(poseidon_bn128):
    with pytest.raises(InputError, match=r"larger than its limit \(65536 bytes, \[limits\] wasm_memory\)"):
        WitnessCalculator(poseidon_bn128.wasm, max_memory=1 << 16)
    roomy = WitnessCalculator(poseidon_bn128.wasm, max_memory=1 << 26)
    assert np.array_equal(roomy.calculate(POSEIDON_INPUT).values,
                          WitnessCalculator(poseidon_bn128.wasm).calculate(POSEIDON_INPUT).values)
