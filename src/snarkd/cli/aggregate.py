"""`snarkd aggregate VK.json SRS OUT.json PUBLIC PROOF [PUBLIC PROOF ...]`: SnarkPack-aggregate n = 2^k proofs;
or through a daemon: `snarkd aggregate --addr ADDR --key ID [--srs SRS] OUT.json (--jobs ID ... | PUBLIC PROOF ...)`."""

from __future__ import annotations

import sys

from snarkd.cli.parsing import add_epilog, add_remote_args, client_kwargs
from snarkd.errors import EXIT_OK, UsageError

ORDER = 22
LOCAL = "snarkd aggregate VK.json SRS OUT.json PUBLIC PROOF [PUBLIC PROOF ...]"
REMOTE = "snarkd aggregate --addr ADDR --key ID [--srs SRS] OUT.json (--jobs ID [ID ...] | PUBLIC PROOF [PUBLIC PROOF ...])"


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "aggregate", usage=f"{LOCAL}\n       {REMOTE}",
        help="aggregate n = 2^k Groth16 proofs of one key: VK.json SRS OUT.json PUBLIC PROOF [PUBLIC PROOF ...] "
             "(or --addr/--key through a daemon)"))
    p.add_argument("args", nargs="+", metavar="FILE",
                   help="VK.json SRS OUT.json, then snarkjs public.json and proof.json, one pair per proof, in order; "
                        "with --addr: OUT.json, then the pairs unless --jobs")
    p.add_argument("--threads", type=int, default=0, help="native threads (default: all cores; local only)")
    p.add_argument("--backend", choices=("cpu", "cuda", "auto"), default=None,
                   help="where the Miller loops of the commitments run (75%% of the CPU's work): cuda: the first "
                        "GPU; auto (default): the GPU when CuPy sees one, else the CPU; cpu: never the GPU (local "
                        "only: a daemon aggregates on its CPU cores)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--addr", help="aggregate in the daemon at HOST:PORT or unix:PATH (its Aggregate RPC)")
    p.add_argument("--key", help="with --addr: the id of the loaded key the proofs are of")
    p.add_argument("--srs", default="", help="with --addr: the SRS file on the daemon's host, under its key "
                                             "directories (default: its [aggregate] srs)")
    p.add_argument("--jobs", nargs="+", metavar="ID", help="with --addr: finished jobs of the daemon whose proofs "
                                                          "to aggregate (each job's partitions in order)")
    p.add_argument("--timeout", type=float, default=None, help="with --addr: seconds to wait (default: no limit)")
    add_remote_args(p)
    p.set_defaults(func=run)


def _pairs(files: list[str]) -> list[tuple[str, str]]:
    if len(files) % 2:
        raise UsageError("aggregate: give PUBLIC PROOF pairs (an even number of files)")
    return [(files[i], files[i + 1]) for i in range(0, len(files), 2)]


def run(args) -> int:
    if args.addr or args.key or args.jobs or args.srs:
        if args.backend is not None:
            raise UsageError("--backend is for local aggregation; a daemon aggregates on its CPU cores")
        return _remote(args)
    if len(args.args) < 3:
        raise UsageError(f"usage: {LOCAL}")
    from snarkd.aggregate.files import aggregate_files

    vk, srs, out, *files = args.args
    obj = aggregate_files(vk, srs, out, _pairs(files), threads=args.threads, gpu=_gpu(args.backend or "auto"))
    if not args.quiet:
        print(f"aggregated {obj['n']} proofs into {out}")
    return EXIT_OK


def _gpu(backend: str):
    """The GpuDevice the Miller loops run on, or None. cuda without a usable GPU raises
    BackendUnavailable (exit 2); auto falls back to the CPU."""
    from snarkd.prover.chooser import choose  # CuPy only when present

    if choose(backend)[0] == "cpu":
        return None
    from snarkd.gpu.device import get

    return get(0)


def _remote(args) -> int:
    from snarkd.atomic import atomic_open
    from snarkd.aggregate.srs import DEV_WARNING
    from snarkd.daemon.client import Client
    from snarkd.formats import json_text

    if not (args.addr and args.key):
        raise UsageError(f"--addr and --key go together: {REMOTE}")
    out, *files = args.args
    if args.jobs and files:
        raise UsageError(f"give --jobs or PUBLIC PROOF pairs, not both: {REMOTE}")
    proofs = [(json_text.load(pub, "public signals"), json_text.load(proof, "proof")) for pub, proof in _pairs(files)]
    if not args.jobs and not proofs:
        raise UsageError(f"nothing to aggregate: {REMOTE}")
    with Client(args.addr, timeout=args.timeout, **client_kwargs(args)) as client:
        result = client.aggregate(args.key, job_ids=args.jobs, proofs=proofs, srs_path=args.srs)
    if result.dev_srs:
        print(DEV_WARNING, file=sys.stderr)
    with atomic_open(out, "w") as fh:  # the daemon's text as it is: the file `snarkd aggregate` would write
        fh.write(result.json)
    if not args.quiet:
        print(f"aggregated {result.n} proofs into {out} (daemon at {args.addr}: "
              + " ".join(f"{k}_ms={v:.1f}" for k, v in result.timings.items()) + ")")
    return EXIT_OK
