"""`snarkd jobs list`: the jobs of a running daemon that the caller may see (its token's; an admin's: all).

    snarkd jobs list [--state STATE ...] [--key ID] [--lane NAME] [--limit N] [--addr HOST:PORT | --config F] [--json]

States: QUEUED RUNNING COMPLETED FAILED CANCELLED EXPIRED. The daemon is found as `snarkd keys` finds it.
"""

from __future__ import annotations

import json
import sys
import time

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_OK

ORDER = 56
STATES = ("QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "EXPIRED")


def _when(t: float, now: float) -> str:
    if not t:
        return "-"
    s = now - t
    ago = s >= 0
    s = abs(s)
    text = f"{s:.0f}s" if s < 120 else f"{s / 60:.0f}m" if s < 7200 else f"{s / 3600:.1f}h"
    return f"{text} ago" if ago else f"in {text}"


def cmd_list(args) -> int:
    from snarkd.cli.keys import _client

    with _client(args) as c:
        jobs = c.list_jobs(args.state or (), key_id=args.key or "", limit=args.limit, lane=args.lane or "")
    if args.json:
        print(json.dumps(jobs, indent=1))
        return EXIT_OK
    if not jobs:
        print("no jobs")
        return EXIT_OK
    now = time.time()
    rows = [("JOB", "KEY", "LANE", "STATE", "PRIO", "DONE", "SUBMITTED", "DEADLINE", "CLIENT", "ERROR")]
    for j in jobs:
        parts = f"{j['done']}/{j['partitions']}" if j["partitions"] else "-"
        rows.append((j["job_id"], j["key_id"], j["lane"] or "-", j["state"], str(j["priority"]), parts, _when(j["submitted_unix"], now),
                     _when(j["deadline_unix"], now), j["client"] or "-", j["error"][:60]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)) + "  " + r[-1])
    return EXIT_OK


def register(sub) -> None:
    from snarkd.cli.keys import _where

    p = add_epilog(sub.add_parser("jobs", help="list the jobs of a running daemon (yours; an admin's: all)"))
    jsub = p.add_subparsers(dest="jobs_command", metavar="SUBCOMMAND")
    q = add_epilog(jsub.add_parser("list", help="jobs, newest first: state, key, partitions done, deadline"))
    q.add_argument("--state", action="append", type=str.upper, choices=STATES, metavar="STATE",
                   help=f"only jobs in this state (repeat for several): {', '.join(STATES)}")
    q.add_argument("--key", metavar="ID", help="only jobs of this key")
    q.add_argument("--lane", metavar="NAME", help="only jobs of this lane ([scheduler.lanes] in the daemon's config)")
    q.add_argument("--limit", type=int, default=0, metavar="N", help="at most N, the newest (default: all)")
    _where(q)
    q.set_defaults(func=cmd_list)
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])
