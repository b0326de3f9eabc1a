"""`snarkd keys list|load|unload`: the keys of a running daemon, at run time.

    snarkd keys list [--addr HOST:PORT | --config F] [--json]
    snarkd keys load ID PATH.zkey [--wasm CIRCUIT.wasm]
    snarkd keys unload ID

The daemon is found by --addr (with --tls-ca, --token-file, ... on a network), else by the
config (--config, $SNARKD_CONFIG, else the defaults): its [daemon] listen, or its control socket
when the listener uses TLS or tokens (docs/security.md).
"""

from __future__ import annotations

import json
import sys
import time

from snarkd.cli.parsing import add_epilog, add_remote_args, client_kwargs
from snarkd.errors import EXIT_OK

ORDER = 55


def _where(p) -> None:
    p.add_argument("--addr", metavar="HOST:PORT", help="the daemon's address (default: the config's [daemon] listen)")
    p.add_argument("--config", "-c", metavar="FILE", default=None,
                   help="config file whose [daemon] listen names the daemon (default: $SNARKD_CONFIG)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds to wait for the daemon (600)")
    add_remote_args(p)  # with --addr; through the config, the daemon's own control socket or admin token


def _client(args):
    from snarkd.config import Config, config_path
    from snarkd.daemon.client import Client

    from snarkd.daemon.security import local_target

    if args.addr:
        return Client(args.addr, timeout=args.timeout, **client_kwargs(args))
    addr, token = local_target(Config.load(config_path(args.config)))  # as snarkd status does
    return Client(addr, timeout=args.timeout, token=token)


def _size(n: int) -> str:
    for unit, mult in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= mult:
            return f"{n / mult:.1f} {unit}"
    return f"{n} B"


def _ago(t: float, now: float) -> str:
    if not t:
        return "never"
    s = max(0.0, now - t)
    return f"{s:.0f}s ago" if s < 120 else f"{s / 60:.0f}m ago" if s < 7200 else f"{s / 3600:.1f}h ago"


def _where_resident(k: dict) -> str:
    places = ["host"] if k["resident"] else []
    places += [f"{d['device']}{' (tables)' if d['tables'] else ''}{' (streamed)' if d.get('streamed') else ''}"
               for d in k.get("devices", ())]
    return ", ".join(places) or "evicted (reloads on its next job)"


def format_keys(keys: list[dict], budget: dict, now: float | None = None) -> str:
    now = time.time() if now is None else now
    if not keys:
        lines = ["no keys loaded"]
    else:
        rows = [("ID", "CURVE", "DOMAIN", "SIZE", "RESIDENT", "PROOFS", "JOBS", "LAST USED", "PATH")]
        for k in keys:
            rows.append((k["id"], k["curve"], f"2^{int(k['domain_size']).bit_length() - 1}", _size(int(k["bytes"])),
                         _where_resident(k), str(k["proofs"]), str(k["jobs"]), _ago(k["last_used"], now), k["path"]))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]
    if budget:
        lim = ", ".join(f"{n} {v}" for n, v in (
            ("max_resident", budget["max_resident"] or "off"),
            ("host_budget", _size(budget["host_budget"]) if budget["host_budget"] else "off"),
            ("device_budget", _size(budget["device_budget"]) if budget["device_budget"] else "off")))
        ev = ", ".join(f"{place} {n}" for place, n in budget["evictions"].items())
        lines.append(f"key budget: {lim}; evictions: {ev}; reloads: {budget['reloads']}")
    return "\n".join(lines)


def cmd_list(args) -> int:
    with _client(args) as c:
        st = c.status(timeout=min(args.timeout, 30))
    try:
        budget = json.loads(st.get("engine_json") or "{}").get("keys", {})
    except ValueError:
        budget = {}
    if args.json:
        print(json.dumps({"keys": st["keys"], "budget": budget}, indent=1))
    else:
        print(format_keys(st["keys"], budget))
    return EXIT_OK


def cmd_load(args) -> int:
    with _client(args) as c:
        k = c.load_key(args.id, args.path, wasm=args.wasm or "")
    if args.json:
        print(json.dumps(k, indent=1))
    else:
        print(f"key {k['id']} loaded: {k['curve']}, domain 2^{int(k['domain_size']).bit_length() - 1}, "
              f"{_size(int(k['bytes']))}, {k['load_ms']:.0f} ms ({k['path']})")
    return EXIT_OK


def cmd_unload(args) -> int:
    with _client(args) as c:
        k = c.unload_key(args.id)
    if args.json:
        print(json.dumps(k, indent=1))
    else:
        busy = f"; it closes after its {k['jobs']} job(s)" if k["jobs"] else ""
        print(f"key {k['id']} unloaded ({k['proofs']} proof(s) served){busy}")
    return EXIT_OK


def register(sub) -> None:
    p = add_epilog(sub.add_parser("keys", help="list, load and unload the keys of a running daemon"))
    ksub = p.add_subparsers(dest="keys_command", metavar="SUBCOMMAND")
    q = add_epilog(ksub.add_parser("list", help="keys with size, curve, domain, residency, proofs, last use"))
    _where(q)
    q.set_defaults(func=cmd_list)
    q = add_epilog(ksub.add_parser("load", help="load ID PATH.zkey (path absolute, or relative to [keys] param_cache)"))
    q.add_argument("id", metavar="ID")
    q.add_argument("path", metavar="PATH.zkey")
    q.add_argument("--wasm", metavar="CIRCUIT.wasm", help="circuit .wasm for proofs from inputs (default: beside the zkey)")
    _where(q)
    q.set_defaults(func=cmd_load)
    q = add_epilog(ksub.add_parser("unload", help="unload ID (jobs already queued on it still finish)"))
    q.add_argument("id", metavar="ID")
    _where(q)
    q.set_defaults(func=cmd_unload)
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])
