"""The one rule for paths a client names (LoadKey's key and wasm, by-reference witnesses).

A path resolves, symlinks and ".." included, to a real path inside one of the
rule's roots ([keys] param_cache and [keys] allowed_dirs for keys; [transport]
witness_spool and witness_dirs for witnesses), or the request is refused with
PermissionDenied naming the rule. The refusal never says whether the path exists
and never reads it, so a client cannot probe the file system or read another
file's first bytes through an error message. Relative key paths resolve against
param_cache; a relative witness path is refused (it would resolve against the
daemon's working directory, which means nothing to a client); "~" is not expanded
(it would be the daemon's home).

`ClientPaths.from_config` builds both rules from a daemon's config: the daemon,
its witness transport and the cluster front all take theirs from there.

The check is on the resolved path, which is then opened: whoever can write inside
a root can still swap a file under it, so the roots must be writable only by
those trusted to place keys there (docs/security.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from snarkd.engine.errors import PermissionDenied

MAX_PATH = 4096  # Linux PATH_MAX: a longer name can only fail, and would flood the messages that echo it


class PathRule:
    def __init__(self, roots, rule: str, relative: bool = True):
        roots = [str(r) for r in roots]
        if not roots:
            raise ValueError("a PathRule needs at least one root")
        self.base = roots[0] if relative else None  # relative=False: a relative path is refused
        self.roots = tuple(dict.fromkeys(os.path.realpath(r) for r in roots))
        self.rule = rule  # how the refusal names the rule, e.g. "[keys] param_cache or [keys] allowed_dirs"

    def resolve(self, path: str | os.PathLike, what: str) -> Path:
        """The real path of `path` when it lies inside a root; PermissionDenied otherwise.
        what: the request field, for the message ("key 'k' path")."""
        text = os.fspath(path)
        if isinstance(text, bytes) or "\0" in text or not text or len(text.encode("utf-8", "surrogateescape")) > MAX_PATH:
            raise PermissionDenied(f"{what}: not a usable path (empty, a NUL byte, or longer than {MAX_PATH} bytes)")
        if self.base is not None or os.path.isabs(text):
            real = os.path.realpath(os.path.join(self.base or "/", text))
            if any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
                return Path(real)
        raise self.refusal(text, what)

    def refusal(self, text: str, what: str) -> PermissionDenied:
        """The one answer for a path outside the rule (also for one a caller refuses on its own grounds)."""
        return PermissionDenied(f"{what} {text!r} is outside the directories this daemon reads from ({self.rule}; "
                                f"symlinks are followed before the check); not opened")

    def allows(self, path: str | os.PathLike) -> bool:
        try:
            self.resolve(path, "path")
            return True
        except PermissionDenied:
            return False


class ClientPaths:
    """The path rules of one daemon, from its config: `keys` for what LoadKey names (a key, its wasm), and
    `witnesses` for by-reference witnesses (None when neither a spool nor witness_dirs is configured)."""

    def __init__(self, param_cache, allowed_dirs=(), witness_spool=None, witness_dirs=()):
        self.keys = PathRule([param_cache, *allowed_dirs], "[keys] param_cache or [keys] allowed_dirs")
        roots = ([witness_spool] if witness_spool else []) + list(witness_dirs)
        self.witnesses = PathRule(roots, "[transport] witness_spool or witness_dirs", relative=False) if roots else None

    @classmethod
    def from_config(cls, config) -> "ClientPaths":
        k, t = config.keys, config.transport
        return cls(k.param_cache, k.allowed_dirs, t.witness_spool, t.witness_dirs)
