"""`snarkd doctor [--config F] [--json]`: check this machine and config before (or while) a daemon runs.

One line per check, ok / warn / fail, with the fix; exit 4 (failed self-check) when any fails.
"""

from __future__ import annotations

import json

from snarkd.cli.parsing import add_epilog
from snarkd.errors import EXIT_INTERNAL, EXIT_OK

ORDER = 45


def run(args) -> int:
    from snarkd.config.cpu import ifma_from_env
    from snarkd.daemon import doctor

    checks = doctor.run(args.config, ifma=ifma_from_env())  # the one main() applied
    if args.json:
        print(json.dumps(doctor.as_json(checks), indent=1, default=str))
    else:
        print(doctor.format_report(checks))
    return EXIT_INTERNAL if doctor.failed(checks) else EXIT_OK


def register(sub) -> None:
    p = add_epilog(sub.add_parser(
        "doctor", help="check the native core, CPU, memory, GPUs, config, address, paths and keys (exit 4 if any fails)"))
    p.add_argument("--config", "-c", metavar="FILE", default=None,
                   help="the daemon's config (default: $SNARKD_CONFIG, else built-in defaults)")
    p.add_argument("--json", action="store_true", help="every check with its data, as JSON")
    p.set_defaults(func=run)
