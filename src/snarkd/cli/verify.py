"""`snarkd verify VK.json PUBLIC.json PROOF.json`: exit 0 valid, 1 invalid (as snarkjs).

`snarkd verify --batch VK.json PUBLIC PROOF [PUBLIC PROOF ...]`: many proofs of one key
checked together (snarkd.verifier.batch); exit 0 when every proof is valid, 1 otherwise,
each bad pair named on stderr; a malformed file is bad input (exit 3) as for one proof.
"""

from __future__ import annotations

import sys

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_INVALID, EXIT_OK

ORDER = 20


def register(sub) -> None:
    p = add_epilog(sub.add_parser("verify", help="verify: VK.json PUBLIC.json PROOF.json (exit 0 valid, 1 invalid)"))
    p.add_argument("vk")
    p.add_argument("public")
    p.add_argument("proof")
    p.add_argument("more", nargs="*", metavar="PUBLIC PROOF",
                   help="with --batch: further PUBLIC PROOF pairs of the same key")
    p.add_argument("--batch", action="store_true",
                   help="verify many PUBLIC PROOF pairs of one key together (one random linear combination; "
                        "bad proofs found by bisection); exit 1 names each bad pair")
    p.add_argument("--threads", type=int, default=0, help="with --batch: threads (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run, parser=p)


def run(args) -> int:
    if args.more and not args.batch:
        args.parser.error("one PUBLIC PROOF pair without --batch (use --batch for several)")
    if args.batch:
        return _run_batch(args)
    from snarkd.verifier import verify_files

    ok = verify_files(args.vk, args.public, args.proof)
    if not args.quiet:
        print("OK: proof is valid" if ok else "INVALID: proof does not verify")
    return EXIT_OK if ok else EXIT_INVALID


def _run_batch(args) -> int:
    files = [args.public, args.proof, *args.more]
    if len(files) % 2:
        args.parser.error(f"--batch takes PUBLIC PROOF pairs: {len(files)} files after the key is an odd number")
    from snarkd.verifier.batch import verify_batch_files

    pairs = list(zip(files[0::2], files[1::2]))
    result = verify_batch_files(args.vk, pairs, threads=args.threads)
    for i in result.bad:
        print(f"INVALID: {pairs[i][0]} {pairs[i][1]}: proof does not verify", file=sys.stderr)
    if not args.quiet:
        if result.valid:
            print(f"OK: all {result.n} proofs are valid")
        else:
            print(f"INVALID: {len(result.bad)} of {result.n} proofs do not verify")
    return EXIT_OK if result.valid else EXIT_INVALID
