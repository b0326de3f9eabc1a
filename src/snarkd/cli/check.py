"""`snarkd check KEY.zkey [CIRCUIT.r1cs WITNESS.wtns]`: is the key sound, does the witness satisfy the circuit?

The key: every point of every section on its curve and in the order-r subgroup
(the header's alpha, beta, gamma, delta also not at infinity). With the circuit
and a witness: the circuit fits the key (sizes, and the key's coefficient
section holds exactly the circuit's A and B), the witness fits the circuit
(field, length, w[0] = 1), and every constraint (A·w)(B·w) = C·w holds, as
`snarkjs wtns check` checks; the first failing constraint is named. This is what tells the
two causes of a failed `snarkd prove` self-check apart.

Exit 0: all checks pass; 1: a check fails; 2: usage; 3: an input is missing,
malformed or does not belong with the others.
"""

from __future__ import annotations

import sys

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE

ORDER = 25


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "check",
        help="check: KEY.zkey [CIRCUIT.r1cs WITNESS.wtns] (key points on curve and in subgroup; witness satisfies the circuit)",
        description="Check a proving key's points (on the curve, in the subgroup) and, given the circuit's .r1cs "
                    "and a witness, that the witness satisfies every constraint. Exit 0 ok, 1 a check fails, 2 usage, 3 bad input.",
    ))
    p.add_argument("files", nargs="+", metavar="FILE", help="KEY.zkey [CIRCUIT.r1cs WITNESS.wtns]")
    p.add_argument("--threads", type=int, default=0, help="native threads (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="print failures only")
    p.set_defaults(func=run)


def _say(args, line: str) -> None:
    if not args.quiet:
        print(line)


def _check_key(args, zkey) -> bool:
    from snarkd.verifier.key_check import check_key_points

    _say(args, f"{zkey.path}: {zkey.curve.name} Groth16 key, nVars {zkey.n_vars}, nPublic {zkey.n_public}, "
               f"domain 2^{zkey.domain_power}")
    ok = True
    for res in check_key_points(zkey, subgroup=True, threads=args.threads):
        what = f"section {res.section}: {res.count} {res.group} points"
        if res.ok:
            _say(args, f"  ok    {what}: on the curve and in the subgroup")
        else:
            ok = False
            print(f"  FAIL  {what}: {res.problem}")
    return ok


def _check_witness(args, zkey, r1cs_path: str, wtns_path: str) -> bool:
    from snarkd.formats.r1cs import read_r1cs
    from snarkd.formats.wtns import read_wtns
    from snarkd.verifier.constraints import check_r1cs_fits_key, check_witness_fits_r1cs, first_unsatisfied
    from snarkd.verifier.key_circuit import first_coef_mismatch

    r1cs = read_r1cs(r1cs_path)
    witness = read_wtns(wtns_path)
    check_r1cs_fits_key(r1cs, zkey)
    check_witness_fits_r1cs(r1cs, witness, wtns_path)
    ok = True
    mismatch = first_coef_mismatch(zkey, r1cs)
    what = f"section 4 (coefs): {zkey.n_coefs} entries"
    if mismatch is None:
        _say(args, f"  ok    {what}: the A and B matrices of {r1cs_path}")
    else:
        ok = False
        print(f"  FAIL  {what}: not made from {r1cs_path} (a key for another circuit, or damaged coefficients): {mismatch}")
    m = r1cs.header.n_constraints
    bad = first_unsatisfied(r1cs, witness, threads=args.threads)
    if bad is None:
        _say(args, f"{wtns_path}: satisfies all {m} constraints of {r1cs_path}")
        return ok
    print(f"{wtns_path}: FAIL: does not satisfy {r1cs_path}: {bad}")
    return False


def run(args) -> int:
    from snarkd.formats.zkey import read_zkey

    if len(args.files) not in (1, 3):
        print("snarkd: error: usage: snarkd check KEY.zkey [CIRCUIT.r1cs WITNESS.wtns]", file=sys.stderr)
        return EXIT_USAGE
    with read_zkey(args.files[0]) as zkey:
        ok = _check_key(args, zkey)
        if len(args.files) == 3:
            ok = _check_witness(args, zkey, args.files[1], args.files[2]) and ok
    _say(args, "OK" if ok else "FAILED")
    return EXIT_OK if ok else EXIT_INVALID
