"""daemon/transport.Transport.assemble in process: a witness stream's buffers hold only the bytes sent
(issue 33, finding 5: 4 ProveStream calls declaring 256 partitions, ~4 KB sent each, took the daemon from
94 to 1,117 MiB: every declared buffer was allocated up front)."""

from __future__ import annotations

import tracemalloc

import pytest

from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.transport import Transport, witness_bound
from snarkd.errors import InputError

N_VARS = 1 << 16  # a key of 65,536 signals: each declared partition may be ~2 MiB


def test_declared_partitions_cost_nothing_until_their_bytes_arrive():
    size = witness_bound(N_VARS)
    chunks = [pb.ProveChunk(request=pb.ProveRequest(key_id="k"), partition_bytes=[size] * 256)]
    chunks += [pb.ProveChunk(data=b"\0" * 1024) for _ in range(4)]
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="ended early: partition 0 has 4096"):
            Transport.assemble(iter(chunks), lambda key: N_VARS, 256)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size * 256 > 500 << 20 and peak < 1 << 20  # 512 MiB declared, under 1 MiB held
