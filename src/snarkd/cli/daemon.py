"""Daemon commands: serve, start, stop, restart, status, config show.

A thin layer: parse arguments, load the config (before anything else), call
snarkd.daemon.lifecycle / server, print the outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from snarkd.cli.parsing import add_epilog
from snarkd.config import Config, config_path
from snarkd.config.settings import BY_NAME
from snarkd.errors import EXIT_DAEMON, EXIT_OK, SnarkdError, reworded

ORDER = 50

CONFIG_HELP = ("TOML config file ('-' reads stdin; process substitution works). Default: $SNARKD_CONFIG, "
               "else built-in defaults")


def _config_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", metavar="FILE", default=None, help=CONFIG_HELP)


def _load(args) -> Config:
    return Config.load(config_path(args.config))


def cmd_serve(args) -> int:
    from snarkd.daemon.server import serve

    if args.config_fd is not None:  # spawned by `snarkd start`: the config comes through a descriptor
        try:
            with os.fdopen(args.config_fd, "rb") as fh:
                text = fh.read().decode("utf-8")
            cfg = Config.from_text(text, args.config_source or "<start>", args.config_base or os.getcwd())
        except (SnarkdError, OSError, UnicodeDecodeError) as exc:
            if args.ready_fd is not None:
                os.write(args.ready_fd, f"error {exc}\n".encode())
            raise
    else:
        cfg = _load(args)
    from snarkd.native import apply_huge_pages, apply_ifma

    apply_ifma(cfg.cpu.ifma)  # [cpu] ifma of the file, or $SNARKD_CPU_IFMA over it
    apply_huge_pages(cfg.cpu.huge_pages)  # [cpu] huge_pages likewise
    return serve(cfg, ready_fd=args.ready_fd, log_to_stderr=not args.daemonized)


def _start(cfg: Config, args):
    """lifecycle.start; when the daemon does not start, the error ends by pointing at `snarkd doctor`."""
    from snarkd.daemon import lifecycle

    try:
        return lifecycle.start(cfg, timeout=args.timeout)
    except SnarkdError as exc:
        where = f" --config {args.config}" if args.config else ""
        raise reworded(exc, f"{exc}\nto check the machine, the config, the address, the paths and the keys: "
                            f"snarkd doctor{where}") from None


def cmd_start(args) -> int:
    cfg = _load(args)
    s = _start(cfg, args)
    if args.json:
        print(json.dumps({"pid": s.pid, "listen": s.listen, "fingerprint": s.fingerprint, "log_file": s.log_file}))
    else:
        print(f"snarkd started: pid {s.pid}, listening on {s.listen}, config fingerprint {s.fingerprint}")
        print(f"log: {s.log_file}")
    return EXIT_OK


def cmd_stop(args) -> int:
    from snarkd.daemon import lifecycle

    cfg = _load(args)
    r = lifecycle.stop(cfg, timeout=args.timeout)
    print(r.message)
    return EXIT_OK


def cmd_restart(args) -> int:
    from snarkd.daemon import lifecycle

    cfg = _load(args)
    r = lifecycle.stop(cfg, timeout=args.stop_timeout)
    print(r.message)
    s = _start(cfg, args)
    print(f"snarkd started: pid {s.pid}, listening on {s.listen}, config fingerprint {s.fingerprint}")
    print(f"log: {s.log_file}")
    return EXIT_OK


def cmd_status(args) -> int:
    from snarkd.daemon import lifecycle

    cfg = _load(args)
    try:
        st = lifecycle.status(cfg)
    except SnarkdError as exc:
        if args.json:
            print(json.dumps({"running": False, "error": str(exc)}))
        else:
            print(str(exc))
        return EXIT_DAEMON
    for w in st["warnings"]:
        print(f"snarkd: warning: {w}", file=sys.stderr)
    if args.json:
        print(lifecycle.status_json({"running": True, **st}))
    else:
        print(lifecycle.format_status(st))
    return EXIT_OK


def cmd_config_show(args) -> int:
    cfg = _load(args)
    if args.json:
        print(json.dumps({"source": cfg.source, "fingerprint": cfg.fingerprint, "config": cfg.effective(),
                          "environment": {n: BY_NAME[n].env for n in cfg.overrides}}, indent=1))
    else:
        sys.stdout.write(cfg.to_toml())
    return EXIT_OK


def register(sub) -> None:
    p = add_epilog(sub.add_parser("serve", help="run the proving daemon in the foreground (systemd, containers)"))
    _config_arg(p)
    p.add_argument("--daemonized", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ready-fd", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--config-fd", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--config-source", default=None, help=argparse.SUPPRESS)
    p.add_argument("--config-base", default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_serve)

    p = add_epilog(sub.add_parser("start", help="start the daemon in the background; returns once it serves"))
    _config_arg(p)
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="give up (and stop it) if not ready within S seconds (default 600)")
    p.add_argument("--json", action="store_true", help="print pid, address and fingerprint as JSON")
    p.set_defaults(func=cmd_start)

    p = add_epilog(sub.add_parser("stop", help="stop the daemon (SIGTERM, drain, verify gone and port free)"))
    _config_arg(p)
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="SIGKILL after S seconds (default drain_timeout + 10)")
    p.set_defaults(func=cmd_stop)

    p = add_epilog(sub.add_parser("restart", help="verified stop, then verified start (with this config)"))
    _config_arg(p)
    p.add_argument("--stop-timeout", type=float, default=None, metavar="S",
                   help="SIGKILL the old daemon after S seconds (default drain_timeout + 10)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="readiness timeout (default 600)")
    p.set_defaults(func=cmd_restart)

    p = add_epilog(sub.add_parser("status", help="ask the running daemon for its status"))
    _config_arg(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_status)

    p = add_epilog(sub.add_parser("config", help="configuration tools"))
    csub = p.add_subparsers(dest="config_command", metavar="SUBCOMMAND")
    show = add_epilog(csub.add_parser("show", help="print the effective config and its fingerprint"))
    _config_arg(show)
    show.add_argument("--json", action="store_true", help="print as JSON")
    show.set_defaults(func=cmd_config_show)
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])
