"""`snarkd aggregate VK.json SRS OUT.json PUBLIC PROOF [PUBLIC PROOF ...]`: SnarkPack-aggregate n = 2^k proofs."""

from __future__ import annotations

from snarkd.cli import add_epilog
from snarkd.errors import EXIT_OK, UsageError

ORDER = 22


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "aggregate",
        help="aggregate n = 2^k Groth16 proofs of one key: VK.json SRS OUT.json PUBLIC PROOF [PUBLIC PROOF ...]"))
    p.add_argument("vk", metavar="VK.json")
    p.add_argument("srs", metavar="SRS", help="aggregation SRS (`snarkd aggregation-srs`)")
    p.add_argument("out", metavar="OUT.json")
    p.add_argument("files", nargs="+", metavar="PUBLIC PROOF", help="snarkjs public.json and proof.json, one pair per proof, in order")
    p.add_argument("--threads", type=int, default=0, help="native threads (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.aggregate.files import aggregate_files

    if len(args.files) % 2:
        raise UsageError("aggregate: give PUBLIC PROOF pairs (an even number of files)")
    pairs = [(args.files[i], args.files[i + 1]) for i in range(0, len(args.files), 2)]
    obj = aggregate_files(args.vk, args.srs, args.out, pairs, threads=args.threads)
    if not args.quiet:
        print(f"aggregated {obj['n']} proofs into {args.out}")
    return EXIT_OK
