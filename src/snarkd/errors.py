"""The error model: every error that reaches a user is a SnarkdError subclass, and each class carries
its `kind` (a short name that travels: in the job journal, across the Ray actor boundary, in the daemon's
`snarkd-error-kind` trailer), its gRPC status code (`grpc_code`, a grpc.StatusCode name: this module is below
grpc) and the CLI's exit code (`exit_code`). The daemon's `@rpc`, the CLI's exit path, the gRPC client and the
cluster front translate from these attributes and nothing else.

A subclass that only refines a message (FormatError, MismatchError, ...) inherits its parent's kind and
codes; a class that means something else to a caller declares its own kind (`kind = "..."` in its body),
and then registers itself as the class `rebuild(kind, message)` gives back. A kind names one (gRPC, exit)
pair: tests/test_errors.py checks that, and that docs/errors.md lists every kind.

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

KIND_TRAILER = "snarkd-error-kind"  # the gRPC trailer the daemon's answers carry the kind in
KINDS: dict[str, type[SnarkdError]] = {}  # kind -> the class that declared it (rebuild() gives it back)


class SnarkdError(Exception):
    """Base class: an error with a message a user can act on. Its kind, gRPC code and exit code are the
    class's; anything that is not a SnarkdError is a bug (kind internal, INTERNAL, exit 4)."""

    kind = "internal"
    grpc_code = "INTERNAL"
    exit_code = EXIT_INTERNAL
    meaning = "a bug or a failed self-check: the message says which; report it"
    rebuilt = False  # True for an error rebuilt from (kind, message) that crossed a boundary
    grpc_default = False  # the kind a bare gRPC status of this code stands for (kind_for_grpc)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "kind" in cls.__dict__:
            if cls.kind in KINDS:
                raise TypeError(f"{cls.__name__}: error kind {cls.kind!r} is already {KINDS[cls.kind].__name__}'s")
            KINDS[cls.kind] = cls

    def wire(self) -> tuple[str, str]:
        """What crosses a process boundary (Ray, the journal): picklable, no traceback, no frames."""
        return self.kind, str(self)


KINDS[SnarkdError.kind] = SnarkdError


def error_class(kind: str) -> type[SnarkdError]:
    """The class of a kind; an unknown (or empty) kind is internal."""
    return KINDS.get(kind or "internal", SnarkdError)


def rebuild(kind: str, message: str, crossed: bool = True) -> SnarkdError:
    """The error a (kind, message) pair stands for, as an instance of the class that declared the kind (its
    own __init__ is not called: a FormatError-like signature need not match). `crossed`: it came over a
    boundary (rebuilt = True), so it was reported where it was raised."""
    cls = error_class(kind)
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    exc.rebuilt = crossed
    return exc


def reworded(exc: SnarkdError, message: str) -> SnarkdError:
    """exc's kind (so its codes) with another message: a caller adding what it was doing."""
    return rebuild(exc.kind, message, crossed=False)


def kind_of(exc: BaseException) -> str:
    return exc.kind if isinstance(exc, SnarkdError) else SnarkdError.kind


def exit_code_of(exc: BaseException) -> int:
    return exc.exit_code if isinstance(exc, SnarkdError) else EXIT_INTERNAL


def grpc_code_of(exc: BaseException) -> str:
    return exc.grpc_code if isinstance(exc, SnarkdError) else SnarkdError.grpc_code


def kind_for_grpc(code_name: str) -> str:
    """The kind a gRPC status stands for when no kind came with it (an older daemon, a proxy, the transport
    itself): the kind declared as that code's default, else the first declared with it."""
    found = [k for k, c in KINDS.items() if c.grpc_code == code_name]
    return next((k for k in found if KINDS[k].grpc_default), found[0] if found else SnarkdError.kind)


class InputError(SnarkdError):
    """A bad input file or value. The message names the file and field."""

    kind = "input"
    grpc_code = "INVALID_ARGUMENT"
    exit_code = EXIT_BAD_INPUT
    meaning = "bad input: a file or field is missing, malformed, or does not match another input (named)"


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
    kind = "daemon"
    grpc_code = "UNAVAILABLE"
    exit_code = EXIT_DAEMON
    meaning = "the daemon cannot be reached, started or stopped"


class UsageError(SnarkdError):
    """A command line asking for what this install cannot do (an optional extra not installed)."""

    kind = "usage"
    grpc_code = "FAILED_PRECONDITION"
    exit_code = EXIT_USAGE
    meaning = "a usage error: the command line asks for what this install cannot do"


class BackendUnavailable(SnarkdError):
    """A backend asked for by name cannot run here (no CuPy, no such GPU): a usage error.
    Never a silent fallback to another backend."""

    kind = "backend_unavailable"
    grpc_code = "FAILED_PRECONDITION"
    exit_code = EXIT_USAGE
    meaning = "the backend asked for (`--backend cuda`) cannot run here; never a silent fallback"


class PermissionDenied(InputError):
    """A request names something outside what the daemon's rules allow (a path outside the allowed
    directories): the message names the rule, never the file's contents or whether it exists."""

    kind = "permission_denied"
    grpc_code = "PERMISSION_DENIED"
    meaning = "outside what the daemon's rules allow (a path outside the key or witness directories): names the rule"
