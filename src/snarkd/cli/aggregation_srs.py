"""`snarkd aggregation-srs A.ptau B.ptau OUT.srs [--max N]` or `--dev --curve C --max N OUT.srs`:
the SRS of SnarkPack aggregation (snarkd.aggregate.srs)."""

from __future__ import annotations

import sys

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_OK, UsageError

ORDER = 21


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "aggregation-srs",
        help="aggregation SRS from two ptau files of independent ceremonies (A.ptau B.ptau OUT.srs), or --dev"))
    p.add_argument("files", nargs="+", metavar="FILE", help="A.ptau B.ptau OUT.srs, or with --dev: OUT.srs")
    p.add_argument("--dev", action="store_true", help="draw the two secrets here: for development only (NOT secure for production)")
    p.add_argument("--curve", help="with --dev: bn128 or bls12381")
    p.add_argument("--max", type=int, dest="max_n", help="largest n (a power of two) the SRS serves")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.aggregate import srs as srs_mod
    from snarkd.curves.params import curve_by_name

    if args.dev:
        if len(args.files) != 1 or not args.curve or not args.max_n:
            raise UsageError("aggregation-srs --dev: give --curve bn128|bls12381 --max N OUT.srs")
        try:
            curve = curve_by_name(args.curve)
        except ValueError:
            raise UsageError(f"--curve: unknown curve {args.curve!r} (bn128 or bls12381)") from None
        srs_mod.check_max_n(args.max_n, "--max")
        print(srs_mod.DEV_WARNING, file=sys.stderr)
        srs = srs_mod.dev_srs(curve, args.max_n)
        out = args.files[0]
    else:
        if len(args.files) != 3:
            raise UsageError("aggregation-srs: give A.ptau B.ptau OUT.srs (or --dev --curve C --max N OUT.srs)")
        srs = srs_mod.srs_from_ptau_files(args.files[0], args.files[1], args.max_n)
        out = args.files[2]
    srs_mod.write_srs(out, srs)
    print(f"wrote {out}: {srs.curve.name}, n up to {srs.max_n}{' (DEVELOPMENT SRS)' if srs.dev else ''}, id {srs.id.hex()}")
    return EXIT_OK
