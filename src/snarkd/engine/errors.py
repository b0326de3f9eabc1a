"""Errors the engine raises to its callers. Each class carries its kind, gRPC code and exit code (the model is
snarkd/errors.py); the gRPC service, the CLI and the cluster front translate from those attributes."""

from snarkd.errors import (EXIT_BAD_INPUT, EXIT_DAEMON, EXIT_DEADLINE, DaemonError, InputError,  # noqa: F401
                           PermissionDenied, SnarkdError)


class NotFound(SnarkdError):
    kind = "not_found"
    grpc_code = "NOT_FOUND"
    exit_code = EXIT_BAD_INPUT
    meaning = "no such key or job (for this token)"


class AlreadyExists(SnarkdError):
    kind = "already_exists"
    grpc_code = "ALREADY_EXISTS"
    exit_code = EXIT_BAD_INPUT
    meaning = "a job id or key id this caller already uses"


class Unavailable(DaemonError):
    """The engine does not take new work (not started, or stopping)."""

    kind = "unavailable"
    grpc_default = True
    meaning = "the daemon does not take new work now (starting, draining, stopping): retry"


class KeyChanged(Unavailable):
    """A key's file changed on disk under its mapping: the jobs that read it fail with this, and new jobs
    wait until those have ended (the key is then reloaded from its path)."""

    kind = "key"
    grpc_code = "ABORTED"
    meaning = "a key (or SRS) file changed on disk while the job read it: no result; retry"


class TooLarge(InputError):
    """A partition that could never fit the memory budget, even alone."""

    kind = "too_large"
    grpc_code = "RESOURCE_EXHAUSTED"
    grpc_default = True
    meaning = "a request larger than a limit or the memory budget allows, even alone (names the limit)"


class Busy(DaemonError):
    """A queue bound ([limits] max_queued_jobs, max_queued_per_client, [daemon] spool_max, [aggregate]
    max_concurrent) is reached: retry later. Exit 3, as the CLI has always exited on RESOURCE_EXHAUSTED."""

    kind = "busy"
    grpc_code = "RESOURCE_EXHAUSTED"
    exit_code = EXIT_BAD_INPUT
    meaning = "a queue bound is reached (names the setting): retry later"


class NotReady(SnarkdError):
    """A request about a job that has not ended yet (the service answers FAILED_PRECONDITION): retry once
    Await says it has."""

    kind = "not_ready"
    grpc_code = "FAILED_PRECONDITION"
    exit_code = EXIT_BAD_INPUT
    grpc_default = True
    meaning = "the job has not ended yet: retry once Await says it has"


class DeadlineExceeded(SnarkdError):
    """A job refused at submit because it cannot finish by its deadline (the estimate, engine/eta.py, is in the
    message; a deadline already past is refused too). The service answers DEADLINE_EXCEEDED; the CLI exits 6."""

    kind = "deadline"
    grpc_code = "DEADLINE_EXCEEDED"
    exit_code = EXIT_DEADLINE
    meaning = "refused at submit: the job cannot end by its deadline (the estimate is in the message)"


class Expired(DeadlineExceeded):
    """A job whose deadline passed before it ended (the engine stopped it)."""

    kind = "expired"
    meaning = "the job's deadline passed before it ended"


class Cancelled(SnarkdError):
    """A job cancelled (Cancel, or its Prove client went away) before it ended."""

    kind = "cancelled"
    grpc_code = "CANCELLED"
    exit_code = EXIT_DAEMON
    meaning = "the job was cancelled before it ended"
