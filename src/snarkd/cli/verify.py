"""`snarkd verify VK.json PUBLIC.json PROOF.json`: exit 0 valid, 1 invalid (as snarkjs)."""

from __future__ import annotations

from snarkd.cli import add_epilog
from snarkd.errors import EXIT_INVALID, EXIT_OK

ORDER = 20


def register(sub) -> None:
    p = add_epilog(sub.add_parser("verify", help="verify: VK.json PUBLIC.json PROOF.json (exit 0 valid, 1 invalid)"))
    p.add_argument("vk")
    p.add_argument("public")
    p.add_argument("proof")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.verifier import verify_files

    ok = verify_files(args.vk, args.public, args.proof)
    if not args.quiet:
        print("OK: proof is valid" if ok else "INVALID: proof does not verify")
    return EXIT_OK if ok else EXIT_INVALID
