"""Errors that reach the user, each with the exit code the CLI returns for it.

The exit codes and what they mean are EXIT_CODES, written once: `snarkd --help` prints them and
tests/cli/test_prove_cli.py checks the table in docs/cli.md against them.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4
EXIT_DAEMON = 5
EXIT_DEADLINE = 6
EXIT_CODES = {
    EXIT_OK: "success (`verify`: the proof is valid)",
    EXIT_INVALID: "`verify`: the proof is invalid",
    EXIT_USAGE: "usage error (also `--backend cuda` on a machine without a usable GPU)",
    EXIT_BAD_INPUT: "bad input: a file is missing, malformed, or does not match another input (the message names the "
                    "file and field)",
    EXIT_INTERNAL: "internal error or failed self-check (also `snarkd doctor` when a check fails)",
    EXIT_DAEMON: "daemon error: cannot reach, start or stop the daemon",
    EXIT_DEADLINE: "deadline: the daemon refused the job as it cannot end by `--deadline`, or the job expired",
}


class SnarkdError(Exception):
    """Base class: an error with a message a user can act on and an exit code."""

    exit_code = EXIT_INTERNAL


class InputError(SnarkdError):
    """A bad input file or value. The message names the file and field."""

    exit_code = EXIT_BAD_INPUT


class FormatError(InputError):
    """A snarkjs/circom binary file that is malformed or unsupported."""

    def __init__(self, path, message: str, section: int | str | None = None):
        self.path = str(path)
        self.section = section
        where = f"{self.path}"
        if section is not None:
            where += f", section {section}"
        super().__init__(f"{where}: {message}")


class MismatchError(InputError):
    """Two inputs that do not belong together (e.g. a witness for another circuit)."""


class DaemonError(SnarkdError):
    exit_code = EXIT_DAEMON


class UsageError(SnarkdError):
    """A command line asking for what this install cannot do (an optional extra not installed)."""

    exit_code = EXIT_USAGE


class BackendUnavailable(SnarkdError):
    """A backend asked for by name cannot run here (no CuPy, no such GPU): a usage error.
    Never a silent fallback to another backend."""

    exit_code = EXIT_USAGE


class PermissionDenied(InputError):
    """A request names something outside what the daemon's rules allow (a path outside the allowed
    directories): the message names the rule, never the file's contents or whether it exists."""
