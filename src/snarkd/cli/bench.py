"""`snarkd bench`: load a running daemon with COUNT proofs, INFLIGHT at a time, and report.

    snarkd bench --addr 127.0.0.1:9820 --key chain --witness w.wtns -c 20 -j 4 \\
                 [--partitions P] [--json out.json] [--timeline out.png] [--vk vk.json]
                 [--lane NAME] [--deadline S] [--urgent-lane NAME --urgent-every S --urgent-deadline S] [--urgent-process]
"""

from __future__ import annotations

import json
import os
import sys

from snarkd.cli.parsing import add_epilog, add_remote_args, client_kwargs
from snarkd.errors import InputError, UsageError

ORDER = 60


def register(sub) -> None:
    p = add_epilog(sub.add_parser("bench", help="benchmark a running daemon: c proofs, j in flight -> s/proof"))
    p.add_argument("--addr", required=True, help="the daemon: HOST:PORT or unix:PATH")
    p.add_argument("--key", required=True, help="key id loaded in the daemon")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--witness", metavar="W.wtns", help="prove this witness")
    src.add_argument("--input", metavar="I.json", help="prove from inputs (the daemon calculates the witness)")
    p.add_argument("-c", "--count", type=int, default=10, help="jobs to run (default 10)")
    p.add_argument("-j", "--inflight", type=int, default=1, help="jobs in flight at once (default 1)")
    p.add_argument("--partitions", type=int, default=1, help="partitions per job (default 1)")
    p.add_argument("--priority", type=int, default=0, help="job priority (default 0)")
    p.add_argument("--lane", default="", metavar="NAME", help="the jobs' lane ([scheduler.lanes]; default: the "
                   "token's, else \"default\")")
    p.add_argument("--deadline", type=float, metavar="S", help="the jobs' deadline, seconds (a miss is counted)")
    p.add_argument("--urgent-lane", default="", metavar="NAME", help="also send one job on this lane every "
                   "--urgent-every seconds while the others run; the report gives each lane's latency")
    p.add_argument("--urgent-every", type=float, default=0.2, metavar="S", help="seconds between urgent jobs "
                   "(default 0.2)")
    p.add_argument("--urgent-deadline", type=float, metavar="S", help="the urgent jobs' deadline, seconds")
    p.add_argument("--urgent-outstanding", type=int, metavar="N", help="urgent jobs in flight at most; an urgent "
                   "arrival that finds N is dropped and counted (default 4)")
    p.add_argument("--urgent-process", action="store_true", help="send the urgent jobs from a client process of "
                   "their own (as a separate deadline-bound requester would), not from a thread beside the others")
    p.add_argument("--vk", metavar="VK.json", help="also verify every returned proof in the client")
    p.add_argument("--proofs-dir", metavar="DIR", help="write every proof and public file there (for snarkjs verify)")
    p.add_argument("--json", metavar="OUT.json", help="write the full run (jobs, timings, spans, summary) as JSON")
    p.add_argument("--timeline", metavar="OUT.png", help="draw each partition's phases per worker over time "
                   "(needs matplotlib: pip install 'snarkd[plot]')")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for one job (default 3600)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--transport", choices=("auto", "path", "spool", "stream", "inline"), default="auto",
                   help="how witnesses travel (default auto: by reference on the daemon's host, else streamed)")
    add_remote_args(p)
    p.set_defaults(func=run)


def _read(path: str, what: str, binary: bool):
    try:
        with open(path, "rb" if binary else "r") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror}") from None


def run(args) -> int:
    if args.timeline:  # before the run, not after it: a missing extra must not cost a whole bench
        from snarkd.bench.timeline import missing

        if missing():
            raise UsageError(missing())
    from snarkd.bench import format_report, run_bench

    for name in ("count", "inflight", "partitions"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name} must be at least 1")
    if args.urgent_lane and not args.urgent_every > 0:
        raise InputError("--urgent-every must be more than 0 seconds")
    if args.urgent_outstanding is not None and args.urgent_outstanding < 1:
        raise InputError("--urgent-outstanding must be at least 1")
    witness = inputs = vk = None
    if args.witness:
        if not os.path.isfile(args.witness):
            raise InputError(f"{args.witness}: no such witness file")
        witness = args.witness  # the client sends the file the fastest way it can (by reference on this host)
    else:
        try:
            inputs = json.loads(_read(args.input, "inputs", False))
        except ValueError as exc:
            raise InputError(f"{args.input}: not valid JSON: {exc}") from None
        if not isinstance(inputs, dict):
            raise InputError(f"{args.input}: expected a JSON object of input signals")
    if args.vk:
        try:
            vk = json.loads(_read(args.vk, "verification key", False))
        except ValueError as exc:
            raise InputError(f"{args.vk}: not valid JSON: {exc}") from None
    if args.proofs_dir:
        os.makedirs(args.proofs_dir, exist_ok=True)
    result = run_bench(args.addr, args.key, witness=witness, inputs=inputs, count=args.count, inflight=args.inflight,
                       partitions=args.partitions, priority=args.priority, timeout=args.timeout, vk=vk,
                       progress=not args.no_progress and sys.stderr.isatty(), proofs_dir=args.proofs_dir,
                       transport=args.transport, connect=client_kwargs(args), lane=args.lane,
                       deadline=args.deadline, urgent_lane=args.urgent_lane, urgent_every=args.urgent_every,
                       urgent_deadline=args.urgent_deadline, urgent_process=args.urgent_process,
                       **({"urgent_outstanding": args.urgent_outstanding} if args.urgent_outstanding else {}))
    result["witness"] = args.witness or ""
    result["input"] = args.input or ""
    print(format_report(result))
    if args.json:
        from snarkd.atomic import atomic_write_json

        atomic_write_json(args.json, result)
        print(f"json: {args.json}")
    if args.timeline:
        from snarkd.bench.timeline import draw

        draw(result, args.timeline)
        print(f"timeline: {args.timeline}")
    s = result["summary"]
    return 0 if s["failed"] == 0 else 4  # deadline misses count among the failed
