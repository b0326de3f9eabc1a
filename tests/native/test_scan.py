"""The native whole-array canonical check (snarkd.native._scan) against Python integers."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snarkd.curves.params import BLS12_381, BN254
from snarkd.formats.binfile import first_not_below

EDGES = lambda m: [0, 1, m - 1, m, m + 1, (1 << 256) - 1, m + (1 << 128), m - (1 << 64)]  # noqa: E731


def arr(values, limbs=4):
    return np.frombuffer(b"".join(v.to_bytes(8 * limbs, "little") for v in values), dtype="<u8").reshape(-1, limbs).copy()


@given(st.sampled_from([BN254.r, BLS12_381.r, BN254.q]), st.data())
@settings(max_examples=300, deadline=None)
def test_first_not_below_matches_python(m, data):
    vals = data.draw(st.lists(st.one_of(st.integers(0, (1 << 256) - 1), st.sampled_from(EDGES(m))), max_size=64))
    want = next((i for i, v in enumerate(vals) if v >= m), -1)
    assert first_not_below(arr(vals) if vals else np.zeros((0, 4), dtype="<u8"), m) == want


def test_wide_values_and_a_modulus_beyond_the_limbs():
    q = BLS12_381.q  # 381 bits: 6 limbs
    vals = [q - 1, 5, q, 0]
    assert first_not_below(arr(vals, 6), q) == 2
    assert first_not_below(arr([(1 << 256) - 1], 4), q) == -1  # every 4-limb value is below a 381-bit modulus


def test_threads_return_the_lowest_index():
    m = BN254.r
    big = np.zeros(((1 << 20) + 3, 4), dtype="<u8")
    for i in (900_000, 700_001, 1 << 20):  # hits in several threads' ranges: the lowest wins
        big[i] = [2**64 - 1] * 4
    assert {first_not_below(big, m, t) for t in (1, 2, 3, 7, 0)} == {700_001}
    big[:] = 0
    assert {first_not_below(big, m, t) for t in (1, 4, 0)} == {-1}


# -- the checksum a one-shot `snarkd witness` takes without the core (crc32c.hpp in _scan) -------------------------

def test_crc32c_matches_the_core():
    import os

    from snarkd.native import _core, _scan

    for n in [*range(0, 200), 1000, 4095, 4096, 65537, (1 << 20) + 3]:
        data = os.urandom(n)
        assert _scan.crc32c(data) == _core.crc32c(data), n
    assert _scan.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
