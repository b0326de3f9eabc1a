"""The `snarkd` command line: a thin layer over the library.

Each module in this package that defines `register(subparsers)` adds one or
more commands; they are discovered here, so adding a command never means
editing a shared list. A command's handler returns an exit code, and raises
`SnarkdError` for failures a user can act on.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from snarkd import __version__
from snarkd.errors import EXIT_CODES, SnarkdError, exit_code_of

class _WidthWhenWriting:
    """argparse's formatter with the terminal's width found when help is written, not when each parser and argument
    is made: argparse's own imports shutil for it (with zlib, bz2 and lzma: ~1.7 ms of every command's start-up,
    `snarkd witness` on a cached program included, which never writes help). The same width argparse takes."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, width=80 if width is None else width)
        if width is None:
            self._asked_help_position = max_help_position
            del self._width, self._max_help_position  # found by __getattr__ when first used

    def __getattr__(self, name):
        if name not in ("_width", "_max_help_position"):
            raise AttributeError(name)
        import shutil

        width = shutil.get_terminal_size().columns - 2  # as argparse.HelpFormatter does
        self._width = width
        self._max_help_position = min(self._asked_help_position, max(width - 20, self._indent_increment * 2))
        return getattr(self, name)


class HelpFormatter(_WidthWhenWriting, argparse.HelpFormatter):
    pass


class RawDescriptionHelpFormatter(_WidthWhenWriting, argparse.RawDescriptionHelpFormatter):
    pass


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose formatter finds the terminal's width only when it writes help (its subcommands'
    parsers too)."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


EPILOG = "exit codes:\n" + "".join(f"  {code}  {text.replace('`', '')}\n" for code, text in EXIT_CODES.items())


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (command given) one holding only the module named after
    that command: `snarkd prove` then imports prove.py alone, not every command's
    dependencies (the config layer alone costs ~9 MB and ~50 ms of start-up)."""
    parser = Parser(
        prog="snarkd",
        description="Groth16 prover and proving daemon for circom/snarkjs circuits (bn128, bls12381).",
        epilog=EPILOG,
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"snarkd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    modules = [_command_module(command)] if command is not None else _all_modules()
    modules = [m for m in modules if m is not None and hasattr(m, "register")]
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.__name__)):
        module.register(sub)
    if command is not None and command not in sub.choices:
        return build_parser()
    return parser


def _command_module(command: str):
    """The module named after `command`, imported directly (pkgutil and the listing it makes cost every command
    ~5 ms of start-up); None when there is none."""
    if not command.isidentifier() or command.startswith("_"):
        return None
    try:
        return importlib.import_module(f"{__name__}.{command}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{command}":
            return None
        raise


def _all_modules() -> list:
    import pkgutil

    return [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]


def main(argv: list[str] | None = None) -> int:
    """Run a command; its exit code. Called as the process's entry (no argv: the `snarkd` script, `python -m
    snarkd`), a handler marked `exit_at_once` that succeeded ends the process here: its output is written and
    closed, and the interpreter's teardown (freeing a witness program's pages, every module) was ~6 ms of CPU of a
    ~70 ms `snarkd witness` (bench/witness_vs_circom_cpp.py)."""
    entry = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv and not argv[0].startswith("-") else None
    parser = build_parser(first)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        from snarkd.config.cpu import ifma_from_env  # $SNARKD_CPU_IFMA, without loading the config layer

        ifma = ifma_from_env()
        if ifma is not None:
            from snarkd.native import apply_ifma

            apply_ifma(ifma)
        rc = int(args.func(args) or 0)
        if entry and rc == 0 and getattr(args.func, "exit_at_once", False):
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except OSError:
                return rc  # output that did not go: the interpreter's own exit reports it
            import os

            os._exit(0)
        return rc
    except KeyboardInterrupt:
        print("snarkd: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the exit code is the error's (snarkd/errors.py)
        if isinstance(exc, SnarkdError):
            print(f"snarkd: error: {exc}", file=sys.stderr)
        else:  # a bug: say so, with the exit code that means "report it"
            import traceback

            traceback.print_exc()
            print(f"snarkd: internal error: {exc!r}", file=sys.stderr)
        return exit_code_of(exc)


def add_remote_args(p: argparse.ArgumentParser) -> None:
    """How a client reaches a daemon on the network (docs/security.md)."""
    g = p.add_argument_group("connecting to a daemon with TLS or tokens")
    g.add_argument("--tls-ca", metavar="CA.pem", help="use TLS; trust this CA for the daemon's certificate")
    g.add_argument("--tls-cert", metavar="CERT.pem", help="client certificate (mutual TLS; with --tls-key)")
    g.add_argument("--tls-key", metavar="KEY.pem", help="the client certificate's private key")
    g.add_argument("--tls-server-name", metavar="NAME", help="check the daemon's certificate for NAME, not the host")
    g.add_argument("--token-file", metavar="FILE", help="send the bearer token in FILE (its first line)")


def client_kwargs(args) -> dict:
    return {"tls_ca": args.tls_ca, "tls_cert": args.tls_cert, "tls_key": args.tls_key,
            "server_name": args.tls_server_name, "token_file": args.token_file}


def add_epilog(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.epilog = EPILOG
    parser.formatter_class = RawDescriptionHelpFormatter
    return parser


if __name__ == "__main__":
    sys.exit(main())
