"""The host side of a chunked upload (runs without a GPU): the copy into a pinned staging buffer,
split over threads in page-aligned pieces, equals a plain copy for every length and offset."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snarkd.gpu import memory


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 5 * memory.UPLOAD_COPY_MIN + 12345), lead=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_parallel_copy_is_a_copy(n, lead, seed):
    src = np.random.default_rng(seed).integers(0, 256, size=n + lead, dtype=np.uint8)[lead:]  # unaligned source
    dst = np.zeros(n + 16, dtype=np.uint8)
    memory.parallel_copy(dst[:n], src)
    assert np.array_equal(dst[:n], src) and not dst[n:].any()
