"""`snarkd prepare KEY.zkey [--out PATH]`: build the key's prepared sidecar (KEY.zkey.prep)."""

from __future__ import annotations

import os
import sys
import time

from snarkd.cli import add_epilog

ORDER = 15


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "prepare",
        help="prepare: KEY.zkey -> KEY.zkey.prep, per-key precomputation `snarkd prove` and the daemon use",
        description="Precompute what a proof with this key can reuse (the A/B coefficients laid out for the sparse "
                    "products) into a checksummed sidecar beside the key, KEY.zkey.prep. Provers use it when it "
                    "matches the key, and ignore (and rebuild) it with a warning when it is stale or corrupt.",
    ))
    p.add_argument("zkey", metavar="KEY.zkey")
    p.add_argument("--out", metavar="PATH", help="write the sidecar here instead (provers look for KEY.zkey.prep)")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.prover.prepared import build

    start = time.perf_counter()
    out = build(args.zkey, args.out)
    size = os.path.getsize(out)
    print(f"{out}: {size / 2**20:.1f} MiB in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0
