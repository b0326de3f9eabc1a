"""What the commands' parsers are made of (below every command module, which imports it: a command registering its
parser calls down into here, never back up into cli/__init__): the parser class, its help formatters, the exit
codes' epilog, and the arguments every client command shares."""

from __future__ import annotations

import argparse

from snarkd.errors import EXIT_CODES


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
