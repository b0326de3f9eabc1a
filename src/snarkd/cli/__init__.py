"""The `snarkd` command line: a thin layer over the library.

Each module in this package that defines `register(subparsers)` adds one or
more commands; they are discovered here, so adding a command never means
editing a shared list. A command's handler returns an exit code, and raises
`SnarkdError` for failures a user can act on.
"""

from __future__ import annotations

import sys

from snarkd import __version__
from snarkd.errors import SnarkdError, exit_code_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (command given) one holding only the module named after
    that command: `snarkd prove` then imports prove.py alone, not every command's
    dependencies (the config layer alone costs ~9 MB and ~50 ms of start-up)."""
    from snarkd.cli.parsing import EPILOG, Parser, RawDescriptionHelpFormatter

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
    try:  # __import__, not importlib.import_module: importlib's own import was ~0.5 ms of every command
        __import__(f"{__name__}.{command}")
        return sys.modules[f"{__name__}.{command}"]
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{command}":
            return None
        raise


def _all_modules() -> list:
    import importlib
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
    # A command module's quick_args(rest) may give the arguments of its usual forms without argparse (its import
    # and parser building were ~7 ms of a ~65 ms `snarkd witness`); None: argparse parses them (help, errors).
    quick = getattr(_command_module(first), "quick_args", None) if first is not None else None
    args = quick(argv[1:]) if quick is not None else None
    if args is None:
        parser = build_parser(first)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 2
    if entry and getattr(args.func, "exit_at_once", False):
        # a one-shot command that ends in os._exit below: nothing it allocates outlives it, and the collector's
        # passes over every imported module's objects were ~3 ms of a ~60 ms `snarkd witness` (whose cycles, if
        # any, are freed with the process)
        import gc

        gc.disable()
    try:
        # $SNARKD_CPU_IFMA and $SNARKD_CPU_HUGE_PAGES, without loading the config layer
        from snarkd.config.cpu import huge_pages_from_env, ifma_from_env

        ifma = ifma_from_env()
        if ifma is not None:
            from snarkd.native import apply_ifma

            apply_ifma(ifma)
        huge_pages = huge_pages_from_env()
        if huge_pages is not None:
            from snarkd.native import apply_huge_pages

            apply_huge_pages(huge_pages)
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


if __name__ == "__main__":
    sys.exit(main())
