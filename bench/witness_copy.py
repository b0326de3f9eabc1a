#!/usr/bin/env python3
"""What taking a by-reference witness into the daemon's memory costs (issue 25), against mapping it in place.

    python bench/witness_copy.py [--power 20] [--repeat 21]

A .wtns of 2^power BN254 values (2^20: 32 MiB) in a temp dir, in the page cache. Per way, the median of
`repeat` runs, in ms: `read` = daemon.transport.read_witness (np.empty + readv, what Submit does now);
`map` = formats.wtns.map_wtns (what it did), each followed by the witness check that touches every value
(so the mapping pays its page faults, as it did in the synthesis stage); `journal_copy` = writing the bytes
once more (Journal.keep, for a hard-linked spool file or a witness_dirs file).

2-core development VM (shared), 2^20: read 25 ms, map 8 ms (both with the 1-thread check), journal_copy
21 ms; the copy alone (np.empty + readv) 15 ms, 9 ms into a reused buffer.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np  # noqa: E402

from snarkd.curves.params import BN254  # noqa: E402
from snarkd.daemon.journal import _write_new  # noqa: E402
from snarkd.daemon.transport import read_witness  # noqa: E402
from snarkd.formats.binfile import first_not_below  # noqa: E402
from snarkd.formats.wtns import map_wtns, write_wtns  # noqa: E402


def timed(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--power", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=21)
    a = ap.parse_args()
    n = 1 << a.power
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "w.wtns"
        vals = np.random.default_rng(1).integers(0, 1 << 62, size=(n, 4), dtype=np.uint64)
        vals[:, 3] >>= 4  # below r
        vals[0] = (1, 0, 0, 0)
        write_wtns(path, BN254.r, vals)
        path.read_bytes()  # into the page cache

        def read():
            w, _, _ = read_witness(path, "w", "k", n)
            assert first_not_below(w.values, BN254.r, 1) < 0

        def mapped():
            w = map_wtns(path)
            assert first_not_below(w.values, BN254.r, 1) < 0

        data = read_witness(path, "w", "k", n)[1]
        copies = iter(range(10**9))

        def journal_copy():
            p = Path(d) / f"copy{next(copies)}"
            _write_new(p, data)
            p.unlink()

        res = {"values": n, "bytes": path.stat().st_size, "read_ms": timed(read, a.repeat),
               "map_ms": timed(mapped, a.repeat), "journal_copy_ms": timed(journal_copy, a.repeat),
               "cpus": os.cpu_count()}
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
