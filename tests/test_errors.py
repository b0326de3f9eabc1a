"""The error model (src/snarkd/errors.py), table-driven: every error class maps to one kind, one gRPC code and one
exit code; a kind names one (gRPC, exit) pair and is rebuilt into the class that declared it, also after
crossing Ray's actor boundary (pickled as (kind, message)); docs/errors.md lists exactly the model; the
documented exit codes are those of EXIT_CODES. The three boundaries on a real daemon: tests/daemon/test_error_model.py."""

from __future__ import annotations

import importlib
import pickle
import re
from pathlib import Path

import grpc
import pytest

from snarkd.errors import EXIT_CODES, KINDS, SnarkdError, error_class, exit_code_of, grpc_code_of, kind_for_grpc, \
    kind_of, rebuild, reworded

REPO = Path(__file__).resolve().parents[1]
# every module that declares an error class (the cluster's need Ray: left out without it)
MODULES = ["snarkd.errors", "snarkd.engine.errors", "snarkd.engine.stages", "snarkd.daemon.security",
           "snarkd.daemon.client", "snarkd.daemon.aggregation", "snarkd.config.loader", "snarkd.setup.groth16_setup",
           "snarkd.witness.errors", "snarkd.witness.native", "snarkd.verifier.self_check", "snarkd.aggregate.files",
           "snarkd.formats.zkey", "snarkd.gpu.memory"]
try:
    import ray  # noqa: F401

    MODULES.append("snarkd.cluster.actor")
except ImportError:
    pass
for name in MODULES:
    importlib.import_module(name)


def classes(cls=SnarkdError):
    out = [cls]
    for sub in cls.__subclasses__():
        out += [c for c in classes(sub) if c not in out]
    return out


CLASSES = classes()
# the documented exit codes (docs/cli.md, docs/security.md, README) that must never move
DOCUMENTED = {"input": 3, "usage": 2, "backend_unavailable": 2, "internal": 4, "daemon": 5, "unavailable": 5,
              "deadline": 6, "expired": 6, "permission_denied": 3, "not_found": 3, "already_exists": 3,
              "aggregate_not_verified": 4, "self_check": 4, "key": 5, "unauthenticated": 5}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_class_maps_to_one_kind_code_and_exit(cls):
    assert cls.kind in KINDS, f"{cls.__name__}: kind {cls.kind!r} declared by no class"
    owner = KINDS[cls.kind]
    assert issubclass(cls, owner), f"{cls.__name__} shares kind {cls.kind!r} with {owner.__name__}, not a base"
    # a kind names one (gRPC, exit) pair: a subclass that changes either declares a kind of its own
    assert (cls.grpc_code, cls.exit_code) == (owner.grpc_code, owner.exit_code), cls
    assert cls.grpc_code in grpc.StatusCode.__members__ and cls.grpc_code != "OK"
    assert cls.exit_code in EXIT_CODES and cls.exit_code != 0
    assert owner.__dict__.get("meaning") or owner is SnarkdError, f"{owner.__name__} does not say what it means"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kind_is_rebuilt_into_its_class_across_the_actor_boundary(kind):
    cls = KINDS[kind]
    err = rebuild(kind, f"a {kind} failure")
    assert type(err) is cls and str(err) == f"a {kind} failure" and err.rebuilt
    assert (kind_of(err), grpc_code_of(err), exit_code_of(err)) == (kind, cls.grpc_code, cls.exit_code)
    assert reworded(err, "more").kind == kind and not reworded(err, "more").rebuilt
    if "snarkd.cluster.actor" in MODULES:
        from snarkd.cluster.actor import ProveError
        from snarkd.cluster.front import actor_error

        crossed = pickle.loads(pickle.dumps(ProveError.of(err)))  # what Ray does to it
        back = actor_error(crossed)
        assert back.kind == (kind if kind != "cancelled" else "internal") and kind in str(back)


def test_anything_else_is_internal():
    bug = ValueError("a bug")
    assert (kind_of(bug), grpc_code_of(bug), exit_code_of(bug)) == ("internal", "INTERNAL", 4)
    assert error_class("") is SnarkdError and error_class("no such kind") is SnarkdError
    assert kind_for_grpc("NOT_FOUND") == "not_found" and kind_for_grpc("UNAVAILABLE") == "unavailable"
    assert kind_for_grpc("RESOURCE_EXHAUSTED") == "too_large" and kind_for_grpc("FAILED_PRECONDITION") == "not_ready"
    assert kind_for_grpc("DATA_LOSS") == "internal"


def test_documented_exit_codes_are_unchanged():
    for kind, code in DOCUMENTED.items():
        assert KINDS[kind].exit_code == code, kind


def test_the_journal_reads_the_kinds_it_always_wrote():
    """Rows journaled before the model (error_kind input, key, internal, cancelled, expired) keep their codes."""
    old = {"input": ("INVALID_ARGUMENT", 3), "key": ("ABORTED", 5), "internal": ("INTERNAL", 4),
           "cancelled": ("CANCELLED", 5), "expired": ("DEADLINE_EXCEEDED", 6), "": ("INTERNAL", 4)}
    for kind, codes in old.items():
        assert (error_class(kind).grpc_code, error_class(kind).exit_code) == codes


def test_docs_table_is_the_model():
    page = (REPO / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (\d) \| (.*) \|$", page, re.M)
    table = {k: (g, int(e), m) for k, g, e, m in rows}
    assert len(table) == len(rows), "a kind listed twice"
    model = {k: (c.grpc_code, c.exit_code, c.meaning) for k, c in KINDS.items()}
    if "snarkd.cluster.actor" not in MODULES:
        table = {k: v for k, v in table.items() if not k.startswith("key_")}
    assert table == model


class _Status(grpc.RpcError):
    def __init__(self, code, details, kind=None):
        self._code, self._details, self._kind = code, details, kind

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return () if self._kind is None else (("snarkd-error-kind", self._kind),)


@pytest.mark.parametrize("code, details, kind, exit_code", [
    ("INVALID_ARGUMENT", "bad", "input", 3), ("NOT_FOUND", "no", "not_found", 3),
    ("ALREADY_EXISTS", "j1", "already_exists", 3), ("PERMISSION_DENIED", "rule", "permission_denied", 3),
    ("FAILED_PRECONDITION", "not yet", "not_ready", 3), ("RESOURCE_EXHAUSTED", "limit", "too_large", 3),
    ("UNAUTHENTICATED", "token", "unauthenticated", 5), ("UNAVAILABLE", "down", "unavailable", 5),
    ("ABORTED", "key changed", "key", 5), ("CANCELLED", "", "cancelled", 5),
    ("DEADLINE_EXCEEDED", "estimated 3s", "deadline", 6), ("DEADLINE_EXCEEDED", "Deadline Exceeded", "daemon", 5),
    ("INTERNAL", "bug", "internal", 4), ("UNKNOWN", "?", "internal", 4)])
def test_the_client_reads_a_status_without_a_kind_by_its_code(code, details, kind, exit_code):
    """An older daemon's or a proxy's status (no trailer): the exit codes the CLI has always given; the last
    DEADLINE_EXCEEDED is the client's own timeout (gRPC's text), a daemon error."""
    from snarkd.daemon.client import Client

    c = Client.__new__(Client)
    c.addr = "x"
    err = c._convert(_Status(getattr(grpc.StatusCode, code), details), 5)
    assert (err.kind, err.exit_code) == (kind, exit_code)
    if kind != "daemon":  # with the daemon's kind, the model decides (a usage error over gRPC: exit 2)
        err = c._convert(_Status(getattr(grpc.StatusCode, code), details, "usage"), 5)
        assert (err.kind, err.exit_code) == ("usage", 2)
