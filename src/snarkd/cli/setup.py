"""`snarkd setup CIRCUIT.r1cs KEY.zkey [--vk VK.json] [--seed HEX]`: single-party Groth16 dev setup."""

from __future__ import annotations

import sys

from snarkd.cli.parsing import EPILOG, RawDescriptionHelpFormatter

ORDER = 40

SECURITY = """\
NOT SECURE FOR PRODUCTION. This is a single-party setup: whoever runs it could
keep the secret values (tau, alpha, beta, delta) and then forge proofs for this
circuit that every verifier accepts. Use it for development, tests and
benchmarks only. Production keys need a multi-party ceremony
(snarkjs powersoftau + zkey contribute with independent contributors).
"""

DESCRIPTION = f"""\
Make a Groth16 proving key (.zkey, snarkjs's layout; snarkjs and snarkd can both
prove with it) and optionally its verification key for a circom .r1cs, without
a powers-of-tau file. The curve comes from the r1cs prime (bn128 or bls12381).

{SECURITY}"""


def register(sub) -> None:
    p = sub.add_parser(
        "setup",
        help="single-party Groth16 setup for development (NOT secure for production)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=RawDescriptionHelpFormatter,
    )
    p.add_argument("r1cs", metavar="CIRCUIT.r1cs")
    p.add_argument("zkey", metavar="KEY.zkey")
    p.add_argument("--vk", metavar="VK.json", help="also write snarkjs's verification_key.json")
    p.add_argument("--seed", metavar="HEX", help="derive the secrets from this hex seed (reproducible test keys; same seed, same bytes) instead of the OS CSPRNG")
    p.add_argument("--threads", type=int, default=0, help="worker threads (default: all cores)")
    p.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show the progress bar")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar and no summary line (the security warning is always printed)")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.setup.groth16_setup import WARNING, parse_seed, setup

    print(WARNING, file=sys.stderr, flush=True)
    seed = parse_seed(args.seed) if args.seed is not None else None
    progress = False if args.quiet and args.progress is None else args.progress  # None: on a terminal
    res = setup(args.r1cs, args.zkey, args.vk, seed=seed, threads=args.threads, progress=progress)
    if not args.quiet:
        vk = f", vk {res.vk}" if res.vk else ""
        print(
            f"snarkd setup: {res.curve}, {res.n_constraints} constraints, {res.n_public} public, nVars {res.n_vars}, "
            f"domain 2^{res.domain_size.bit_length() - 1} -> {res.zkey}{vk} ({res.seconds['total']:.1f}s)",
            file=sys.stderr,
        )
    return 0
