"""Errors the engine raises to its callers (the gRPC service maps each to a status code)."""

from snarkd.errors import EXIT_DEADLINE, DaemonError, InputError, PermissionDenied, SnarkdError  # noqa: F401 - re-exported


class NotFound(SnarkdError):
    exit_code = 3


class AlreadyExists(SnarkdError):
    exit_code = 3


class Unavailable(DaemonError):
    """The engine does not take new work (not started, or stopping)."""


class KeyChanged(Unavailable):
    """A key's file changed on disk under its mapping: the jobs that read it fail with this, and new jobs
    wait until those have ended (the key is then reloaded from its path)."""


class TooLarge(InputError):
    """A partition that could never fit the memory budget, even alone."""


class Busy(DaemonError):
    """A queue bound ([limits] max_queued_jobs, max_queued_per_client, [daemon] spool_max) is
    reached: retry later."""


class NotReady(SnarkdError):
    """A request about a job that has not ended yet (the service answers FAILED_PRECONDITION): retry once
    Await says it has."""

    exit_code = 3


class DeadlineExceeded(SnarkdError):
    """A job refused at submit because it cannot finish by its deadline (the estimate, engine/eta.py, is in the
    message; a deadline already past is refused too). The service answers DEADLINE_EXCEEDED; the CLI exits 6."""

    exit_code = EXIT_DEADLINE
