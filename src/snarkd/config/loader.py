"""Reading a config: TOML text -> a validated, frozen Config (sections derived from SETTINGS).

Everything the daemon does is decided here, before any process is spawned or any
socket is touched. Every error names the key and the TOML line:

    snarkd.toml:4: [daemon] drain_timeout = "sixty": expected a duration like "60s", "500ms", "2m"

Relative paths resolve against the config file's directory (the current directory
for stdin or a pipe); relative key paths in [keys.preload] against [keys]
param_cache. A setting's environment variable, when set, overrides the file; the
overrides in effect are listed by `snarkd config show`. This is the only place
snarkd reads its environment variables.

The fingerprint hashes the *effective* config (defaults, paths and overrides
applied), so two daemons with the same fingerprint behave the same.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from snarkd.config.kinds import MAX_SOCKET_PATH, Context, EntryError, socket_path_too_long, toml_value
from snarkd.config.settings import BY_NAME, SECTIONS, SETTINGS, Setting
from snarkd.errors import InputError

# The TOML parser, the section classes and the renderer are imported where used: `default(name)` (a library's one
# setting, e.g. `snarkd witness` reading [keys] wasm_cache when its program is not beside the .wasm) reads no file
# and renders nothing, and those imports were ~60 ms of that command.

CONFIG_ENV = "SNARKD_CONFIG"  # the default --config of the daemon commands


MAX_CONFIG_BYTES = 16 << 20


class ConfigError(InputError):
    """A config file that cannot be used; the message names the key and line."""


KEYS = {sec: [s.key for s in SETTINGS if s.section == sec] for sec in SECTIONS}


@dataclass(frozen=True)
class Config:
    values: dict = field(repr=False)  # (section, key) -> effective value
    source: str = "<defaults>"  # the file it came from, for messages and `status`
    base_dir: str = "."
    text: str = field(default="", repr=False, compare=False)
    overrides: tuple = ()  # names of settings taken from the environment
    # and one attribute per section (cfg.gpus: a SECTION_CLASSES["gpus"]), built from `values`

    def __post_init__(self):
        from snarkd.config.sections import SECTION_CLASSES, section_keys

        for sec, cls in SECTION_CLASSES.items():
            object.__setattr__(self, sec, cls(**{k: self.values[(sec, k)] for k in section_keys(cls)}))

    def get(self, name: str):
        """A setting by dotted name: cfg.get("gpus.msm_tables")."""
        s = BY_NAME[name]
        return self.values[(s.section, s.key)]

    # -- loading -----------------------------------------------------------------

    @classmethod
    def load(cls, path: str | None, env=None) -> "Config":
        """Read and validate a config. path "-" is stdin; None means all defaults.

        Pipes and process substitution (/dev/fd/N) are read once, here, so the
        text can be handed on to a daemonized child.
        """
        if path is None:
            return cls.from_text("", "<defaults>", Path.cwd(), env)
        if path == "-":
            return cls.from_text(sys.stdin.read(), "<stdin>", Path.cwd(), env)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                raw = fh.read(MAX_CONFIG_BYTES + 1)  # bounded: /dev/zero given as a config is not read whole
            if len(raw) > MAX_CONFIG_BYTES:
                raise ConfigError(f"config file {path}: more than {MAX_CONFIG_BYTES >> 20} MiB, not a config")
        except FileNotFoundError:
            raise ConfigError(f"config file {path} not found") from None
        except IsADirectoryError:
            raise ConfigError(f"config file {path} is a directory") from None
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        if stat.S_ISREG(st.st_mode):
            source, base = str(Path(path).resolve()), Path(path).resolve().parent
        else:  # a pipe: process substitution, /dev/stdin, a fifo
            source, base = str(path), Path.cwd()
        return cls.from_text(text, source, base, env)

    @classmethod
    def from_text(cls, text: str, source: str, base_dir: Path | str, env=None) -> "Config":
        env = os.environ if env is None else env
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line = re.search(r"line (\d+)", str(exc))
            where = f"{source}:{line.group(1)}" if line else source
            raise ConfigError(f"{where}: not valid TOML: {exc}") from None
        return _Validator(text, source, Path(base_dir), env).build(data)

    @classmethod
    def defaults(cls, env=None) -> "Config":
        """Every default, with the environment's overrides (for commands run without a config file)."""
        return cls.load(None, env)

    # -- views -------------------------------------------------------------------

    def effective(self) -> dict:
        """The effective config as plain data (what the fingerprint hashes)."""
        out: dict = {sec: {} for sec in SECTIONS}
        for s in SETTINGS:
            out[s.section][s.key] = s.kind.plain(self.values[(s.section, s.key)])
        return out

    @property
    def fingerprint(self) -> str:
        canon = json.dumps(self.effective(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The effective config as TOML (`snarkd config show`): itself a valid config."""
        from snarkd.config.render import effective_toml

        return effective_toml(self)


def config_path(given: str | None, env=None) -> str | None:
    """The config file a daemon command uses: --config, else $SNARKD_CONFIG, else none (defaults)."""
    env = os.environ if env is None else env
    return given or env.get(CONFIG_ENV) or None


def default(name: str, env=None):
    """One setting's value without a config file: its environment override, else its default
    (for the library used directly; the daemon passes its Config's values down)."""
    # Config.defaults(env).get(name) without the Config: its section objects are not needed for one value
    s = BY_NAME[name]
    return _Validator("", "<defaults>", Path.cwd(), os.environ if env is None else env).values({}, [])[(s.section, s.key)]


def locate_keys(text: str) -> dict[tuple, int]:
    """Map dotted key paths to their 1-based line in the TOML text (best effort)."""
    lines: dict[tuple, int] = {}
    table: tuple = ()
    keypart = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
    header = re.compile(r"^\s*\[\[?\s*(" + keypart + r"(?:\s*\.\s*" + keypart + r")*)\s*\]\]?")
    keyline = re.compile(r"^\s*(" + keypart + r"(?:\s*\.\s*" + keypart + r")*)\s*=")

    def split(dotted: str) -> tuple:
        parts = re.findall(keypart, dotted)
        return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)

    for n, line in enumerate(text.splitlines(), 1):
        m = header.match(line)
        if m:
            table = split(m.group(1))
            lines.setdefault(table, n)
            continue
        m = keyline.match(line)
        if m:
            lines.setdefault(table + split(m.group(1)), n)
    return lines


def _v(name: str):
    section, key = name.split(".")
    return lambda v: v[(section, key)]


_listen, _status, _cert, _key, _ca = (_v("daemon.listen"), _v("daemon.status_listen"), _v("daemon.tls_cert"),
                                      _v("daemon.tls_key"), _v("daemon.tls_client_ca"))


def uses_control_socket(v) -> bool:
    """A TCP listener with TLS or tokens: `snarkd start` / `status` on this host talk to the daemon through
    [daemon] control_socket instead (mode 0600: only the daemon's user; no token, no TLS)."""
    return _listen(v).kind == "tcp" and (_cert(v) is not None or v[("daemon", "token_file")] is not None)


NEEDS_TLS = ('is not a loopback address or a unix socket, so it needs TLS: set [daemon] tls_cert and tls_key '
             '(and tls_client_ca to require client certificates; token_file to require tokens); see README "Security"')

# Checks across settings: (the setting blamed, predicate on the values, message)
CROSS_CHECKS = (
    ("daemon.listen", lambda v: not _listen(v).local and _cert(v) is None, NEEDS_TLS),
    ("daemon.status_listen", lambda v: _status(v) is not None and not _status(v).local and _cert(v) is None,
     NEEDS_TLS.replace("needs TLS", "needs TLS (the endpoint then serves HTTPS)")),
    ("daemon.tls_key", lambda v: (_cert(v) is None) != (_key(v) is None), "tls_cert and tls_key go together"),
    ("daemon.tls_client_ca", lambda v: _ca(v) is not None and _cert(v) is None, "needs tls_cert and tls_key"),
    ("daemon.log_file", lambda v: v[("daemon", "log_file")] == v[("daemon", "pid_file")], "must differ from pid_file"),
    ("daemon.status_listen", lambda v: v[("daemon", "status_listen")] is not None
     and v[("daemon", "status_listen")] == v[("daemon", "listen")], "must differ from listen"),
    ("daemon.control_socket", lambda v: uses_control_socket(v) and socket_path_too_long(v[("daemon", "control_socket")]),
     f"is longer than the {MAX_SOCKET_PATH} bytes a unix socket path may have: set a shorter one"),
)


class _Validator:
    def __init__(self, text: str, source: str, base: Path, env):
        self.lines = locate_keys(text)
        self.text, self.source, self.base, self.env = text, source, base, env

    def where(self, *path) -> str:
        for i in range(len(path), 0, -1):
            if path[:i] in self.lines:
                return f"{self.source}:{self.lines[path[:i]]}"
        return self.source

    def fail(self, path: tuple, message: str, value=None, show_value: bool = True):
        section, key = path[:-1], path[-1]
        name = (f"[{'.'.join(section)}] " + key) if section else f"[{key}]"
        shown = ""
        if show_value and value is not None:
            shown = " = " + ("{...}" if isinstance(value, dict) else toml_value(value))
        raise ConfigError(f"{self.where(*path)}: {name}{shown}: {message}")

    def check_names(self, data: dict) -> None:
        """Unknown sections and keys first: a typo must never silently become a default."""
        for section, body in data.items():
            if section not in SECTIONS:
                hint = difflib.get_close_matches(section, SECTIONS, 1)
                self.fail((section,), "unknown section" + (
                    f" (did you mean [{hint[0]}]?)" if hint else f"; known: {', '.join('[' + s + ']' for s in SECTIONS)}"),
                    show_value=False)
            if not isinstance(body, dict):
                self.fail((section,), "expected a table [" + section + "]", show_value=False)
            for key in body:
                if key not in KEYS[section]:
                    hint = difflib.get_close_matches(key, KEYS[section], 1)
                    self.fail((section, key), "unknown key" + (
                        f" (did you mean {hint[0]}?)" if hint else f"; [{section}] takes {', '.join(sorted(KEYS[section]))}"),
                        show_value=False)

    def value(self, s: Setting, data: dict, ctx: Context, overrides: list):
        path = (s.section, s.key)
        text = self.env.get(s.env) if s.env else None
        if text not in (None, ""):
            try:
                v = s.kind.parse_env(text, ctx)
            except ValueError as exc:
                raise ConfigError(f"{s.env}={text}: {exc} (it overrides [{s.section}] {s.key})") from None
            overrides.append(s.name)
            return v
        body = data.get(s.section, {})
        if s.key not in body:
            return s.default_value(ctx)
        raw = body[s.key]
        try:
            return s.kind.parse(raw, ctx)
        except EntryError as exc:
            self.fail(path + (exc.entry,), str(exc), exc.value, show_value=exc.value is not None)
        except ValueError as exc:
            self.fail(path, str(exc), raw)

    def values(self, data: dict, overrides: list) -> dict:
        """Every setting's effective value, checked one by one and across (CROSS_CHECKS)."""
        self.check_names(data)
        values: dict = {}
        ctx = Context(self.base, self.env, values)
        for s in SETTINGS:
            values[(s.section, s.key)] = self.value(s, data, ctx, overrides)
        for name, bad, message in CROSS_CHECKS:
            if bad(values):
                s = BY_NAME[name]
                self.fail((s.section, s.key), message, s.kind.plain(values[(s.section, s.key)]))
        return values

    def build(self, data: dict) -> Config:
        overrides: list = []
        values = self.values(data, overrides)
        return Config(values=values, source=self.source, base_dir=str(self.base), text=self.text,
                      overrides=tuple(overrides))
