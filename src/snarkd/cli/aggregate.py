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
    p.add_argument("--backend", choices=("cpu", "cuda", "auto"), default="auto",
                   help="where the Miller loops of the commitments run (75%% of the CPU's work): cuda: the first "
                        "GPU; auto (default): the GPU when CuPy sees one, else the CPU; cpu: never the GPU")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.aggregate.files import aggregate_files

    if len(args.files) % 2:
        raise UsageError("aggregate: give PUBLIC PROOF pairs (an even number of files)")
    pairs = [(args.files[i], args.files[i + 1]) for i in range(0, len(args.files), 2)]
    obj = aggregate_files(args.vk, args.srs, args.out, pairs, threads=args.threads, gpu=_gpu(args.backend))
    if not args.quiet:
        print(f"aggregated {obj['n']} proofs into {args.out}")
    return EXIT_OK


def _gpu(backend: str):
    """The GpuDevice the Miller loops run on, or None. cuda without a usable GPU raises
    BackendUnavailable (exit 2); auto falls back to the CPU."""
    if backend == "cpu":
        return None
    from snarkd.prover.backend import cuda_device_count  # CuPy only when present

    if backend == "auto" and cuda_device_count() == 0:
        return None
    from snarkd.gpu.device import get

    return get(0)
