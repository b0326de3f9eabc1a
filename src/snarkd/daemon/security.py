"""Who may talk to the daemon: TLS credentials and bearer tokens (docs/security.md).

    transport   loopback and unix-socket listeners work without TLS (the socket's file mode,
                or the host, decides who connects); any other address needs [daemon] tls_cert
                and tls_key (config/loader.py refuses it otherwise), tls_client_ca adds mutual TLS
    tokens      [daemon] token_file: one "NAME ROLE TOKEN [lane=LANE]" a line; a call carries
                "authorization: Bearer TOKEN"; ROLE prove (prove, submit, await, cancel, status,
                metrics) or admin (all of those, plus LoadKey / UnloadKey). Without a token file
                every caller holds every role. grpc.health.v1 answers everyone (it says only
                SERVING or not).

Tokens are kept as SHA-256 digests and compared with hmac.compare_digest against every
entry, so neither the comparison nor the position of a match shows in the timing.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import ssl
import stat
from dataclasses import dataclass

import grpc

from snarkd.config.lanes import LANE_NAME
from snarkd.config.loader import uses_control_socket as control_socket_used
from snarkd.engine import PermissionDenied
from snarkd.errors import DaemonError, InputError

log = logging.getLogger("snarkd")

PROVE, ADMIN = "prove", "admin"
ROLES = {PROVE: frozenset({PROVE}), ADMIN: frozenset({PROVE, ADMIN})}
MIN_TOKEN_CHARS = 16
AUTH_HEADER = "authorization"


@dataclass(frozen=True)
class Principal:
    """Who made a call: a token's name, or the peer (no tokens); roles it holds."""

    name: str
    roles: frozenset
    lane: str = ""  # the lane its jobs run in ([daemon] token_file's `lane=NAME`; "" = the request's or "default")

    def may(self, role: str) -> bool:
        return role in self.roles


class Unauthenticated(DaemonError):
    """No token, or not a known one (gRPC UNAUTHENTICATED)."""

    kind = "unauthenticated"
    grpc_code = "UNAUTHENTICATED"
    meaning = "no token, or not a known one"


def check_private(path: str, what: str) -> None:
    """Refuse a secret that other users can read or write; warn when its group can."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise DaemonError(f"cannot read {what} {path}: {exc.strerror}") from None
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o007:
        raise DaemonError(f"{what} {path} is accessible to other users (mode {mode:04o}): chmod 600 it")
    if mode & 0o070:
        log.warning("%s %s is readable by its group (mode %04o); 600 is safer", what, path, mode)


class TokenTable:
    """The tokens of [daemon] token_file, as SHA-256 digests with their name and roles."""

    def __init__(self, entries: list[tuple[bytes, Principal]], path: str = ""):
        self.entries = entries
        self.path = path

    @classmethod
    def load(cls, path: str) -> "TokenTable":
        check_private(path, "[daemon] token_file")
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise DaemonError(f"cannot read [daemon] token_file {path}: {exc}") from None
        entries, names, digests = [], set(), set()
        for n, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split()
            where = f"[daemon] token_file {path}:{n}"
            lane = ""
            if len(parts) == 4 and parts[3].startswith("lane="):  # the lane the token's jobs run in
                lane = parts.pop()[len("lane="):]
                if not LANE_NAME.fullmatch(lane):
                    raise DaemonError(f"{where}: lane={lane!r}: a lane name is 1-32 letters, digits, _ or -")
            if len(parts) != 3:
                raise DaemonError(f"{where}: expected NAME ROLE TOKEN [lane=LANE], got {len(parts)} field(s)")
            name, role, token = parts
            if role not in ROLES:
                raise DaemonError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
            if len(token) < MIN_TOKEN_CHARS:
                raise DaemonError(f"{where}: token of {name!r} is shorter than {MIN_TOKEN_CHARS} characters "
                                  f"(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')")
            digest = hashlib.sha256(token.encode()).digest()
            if name in names or digest in digests:
                raise DaemonError(f"{where}: name {name!r} or its token appears twice")
            names.add(name)
            digests.add(digest)
            entries.append((digest, Principal(name, ROLES[role], lane)))
        if not entries:
            raise DaemonError(f"[daemon] token_file {path} holds no token")
        return cls(entries, path)

    def lookup(self, token: str) -> Principal | None:
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found = None
        for d, who in self.entries:  # every entry, every time: no early exit to time
            if hmac.compare_digest(d, digest):
                found = who
        return found


def bearer(metadata) -> str | None:
    for k, v in metadata or ():
        if k == AUTH_HEADER:
            v = v.decode("latin-1") if isinstance(v, bytes) else v
            scheme, _, token = v.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


class Gate:
    """Decides who a call is and whether it may do what it asks.

    tokens: a TokenTable, or None (every caller holds every role). trusted_peer: a
    predicate on context.peer() for connections that skip the token check (the 0600
    control socket of `snarkd start` / `status`, see server.py).
    """

    def __init__(self, tokens: TokenTable | None = None, trusted_peer=None):
        self.tokens = tokens
        self.trusted_peer = trusted_peer or (lambda peer: False)

    def principal(self, context, role: str) -> Principal:
        peer = context.peer() or ""
        if self.tokens is None or self.trusted_peer(peer):
            return Principal(peer_host(peer), ROLES[ADMIN])
        token = bearer(context.invocation_metadata())
        if not token:
            raise Unauthenticated("this daemon requires a bearer token ([daemon] token_file): send "
                                  "'authorization: Bearer TOKEN' (snarkd --token-file FILE)")
        who = self.tokens.lookup(token)
        if who is None:
            raise Unauthenticated("the bearer token is not one of this daemon's tokens")
        if not who.may(role):
            raise PermissionDenied(f"token {who.name!r} lacks the {role} role this call needs")
        return who


def peer_host(peer: str) -> str:
    """A client's identity without tokens: its address minus the port ("ipv4:10.0.0.5:51234" ->
    "ipv4:10.0.0.5"); every unix-socket client is one ("unix")."""
    if peer.startswith("unix"):
        return "unix"
    head, _, tail = peer.rpartition(":")
    return head if tail.isdigit() and head else peer


# ------------------------------------------------------------------ TLS


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise DaemonError(f"cannot read {what} {path}: {exc.strerror}") from None


def server_credentials(cert: str, key: str, client_ca: str | None) -> grpc.ServerCredentials:
    """gRPC TLS credentials; with client_ca a client must show a certificate it signed."""
    check_private(key, "[daemon] tls_key")
    chain, pkey = _read(cert, "[daemon] tls_cert"), _read(key, "[daemon] tls_key")
    ca = _read(client_ca, "[daemon] tls_client_ca") if client_ca else None
    return grpc.ssl_server_credentials([(pkey, chain)], root_certificates=ca, require_client_auth=ca is not None)


def server_ssl_context(cert: str, key: str, client_ca: str | None) -> ssl.SSLContext:
    """The same for the HTTP status endpoint (status_listen)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
        if client_ca:
            ctx.load_verify_locations(client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
    except (OSError, ssl.SSLError) as exc:
        raise DaemonError(f"cannot use [daemon] tls_cert {cert} / tls_key {key}: {exc}") from None
    return ctx


def channel_credentials(tls_ca: str | None, cert: str | None = None, key: str | None = None):
    """A client's TLS credentials: trust tls_ca (None: the system's roots), show cert/key (mutual TLS)."""
    if (cert is None) != (key is None):
        raise InputError("--tls-cert and --tls-key go together")
    ca = _client_read(tls_ca, "--tls-ca") if tls_ca else None
    chain = _client_read(cert, "--tls-cert") if cert else None
    pkey = _client_read(key, "--tls-key") if key else None
    return grpc.ssl_channel_credentials(root_certificates=ca, private_key=pkey, certificate_chain=chain)


def _client_read(path: str, flag: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{flag} {path}: {exc.strerror}") from None


def read_token_file(path: str) -> str:
    """A client's token: the first line that is not blank or a comment; its last field, so a line
    of the daemon's own token file ("NAME ROLE TOKEN") works too."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                text = line.strip()
                if text and not text.startswith("#"):
                    return text.split()[-1]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--token-file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    raise InputError(f"--token-file {path}: no token in it")


def admin_token(path: str) -> str:
    """An admin token from the daemon's own token file (snarkd start/status on a unix listener)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and not parts[0].startswith("#") and parts[1] == ADMIN:
                    return parts[2]
    except OSError as exc:
        raise DaemonError(f"cannot read [daemon] token_file {path}: {exc.strerror}") from None
    raise DaemonError(f"[daemon] token_file {path} has no admin token")


def uses_control_socket(cfg) -> bool:
    """A TCP listener with TLS or tokens: `snarkd start` / `status` on this host talk to the daemon
    through [daemon] control_socket instead (config.loader.uses_control_socket)."""
    return control_socket_used(cfg.values)


def local_target(cfg) -> tuple[str, str | None]:
    """(address, token) for the lifecycle commands on the daemon's own host."""
    d = cfg.daemon
    if uses_control_socket(cfg):
        return f"unix:{d.control_socket}", None
    return str(d.listen), (admin_token(d.token_file) if d.token_file is not None else None)
