"""`snarkd verify-aggregate VK.json SRS AGG.json`: exit 0 valid, 1 invalid, 3 bad input."""

from __future__ import annotations

import sys

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_INVALID, EXIT_OK

ORDER = 23


def register(sub) -> None:
    p = add_epilog(sub.add_parser("verify-aggregate", help="verify a SnarkPack aggregate: VK.json SRS AGG.json (exit 0 valid, 1 invalid)"))
    p.add_argument("vk", metavar="VK.json")
    p.add_argument("srs", metavar="SRS")
    p.add_argument("aggregate", metavar="AGG.json")
    p.add_argument("--threads", type=int, default=0, help="native threads (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.aggregate.files import verify_aggregate_files

    ok, why = verify_aggregate_files(args.vk, args.srs, args.aggregate, threads=args.threads)
    if not args.quiet:
        print("OK: aggregate is valid" if ok else f"INVALID: {why}")
    elif not ok:
        print(f"INVALID: {why}", file=sys.stderr)
    return EXIT_OK if ok else EXIT_INVALID
