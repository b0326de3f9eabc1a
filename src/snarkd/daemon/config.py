"""The daemon's configuration: one TOML file, validated up front, then frozen.

Everything the daemon does is decided here, before any process is spawned or
any socket is touched. Every error names the key and the TOML line:

    snarkd.toml:4: [daemon] drain_timeout = "sixty": expected a duration like "60s", "500ms", "2m"

Relative paths resolve against the directory of the config file (the current
directory when the config comes from stdin or a pipe); relative key paths in
[keys.preload] resolve against [keys] param_cache. SNARKD_PARAM_CACHE, when set,
overrides param_cache.

The fingerprint is a hash of the *effective* config (after defaults, paths and
environment overrides), so two daemons with the same fingerprint behave the
same, and a restart with changed settings is visible in `snarkd status`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from snarkd.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_LISTEN = "127.0.0.1:9820"
PARAM_CACHE_ENV = "SNARKD_PARAM_CACHE"
LOG_LEVELS = ("debug", "info", "warning", "error")


class ConfigError(InputError):
    """A config file that cannot be used; the message names the key and line."""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Listen:
    """A listen address: TCP host:port or a unix socket path."""

    kind: str  # "tcp" | "unix"
    host: str = ""
    port: int = 0
    path: str = ""

    @property
    def grpc(self) -> str:
        """The address as grpc spells it (for both server bind and client target)."""
        if self.kind == "unix":
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return self.grpc


def parse_listen(text: str, base: Path) -> Listen:
    if not isinstance(text, str) or not text:
        raise ValueError('expected "HOST:PORT" or "unix:PATH"')
    if text.startswith("unix:"):
        p = text[5:]
        if p.startswith("//"):
            p = p[2:]
        if not p:
            raise ValueError('"unix:" needs a socket path, e.g. "unix:/run/snarkd.sock"')
        path = Path(p) if os.path.isabs(p) else base / p
        if len(os.fsencode(str(path))) > 107:
            raise ValueError(f"unix socket path {str(path)!r} is longer than the 107 bytes the kernel allows")
        return Listen("unix", path=os.path.normpath(str(path)))
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)|([^:\[\]]+):(\d+)", text)
    if not m:
        raise ValueError(f'{text!r} is not "HOST:PORT" (IPv6: "[::1]:PORT") or "unix:PATH"')
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is outside 1-65535")
    return Listen("tcp", host=host, port=port)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value) -> float:
    """"60s", "500ms", "2m", "1h" or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError('expected a duration like "60s", "500ms", "2m"')
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("must not be negative")
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError('expected a duration like "60s", "500ms", "2m"')


_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(value) -> int | str:
    """"auto", "64GiB", "500MB" or a number of bytes."""
    if isinstance(value, bool):
        raise ValueError('expected "auto" or a size like "64GiB"')
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be positive")
        return value
    if isinstance(value, str):
        if value.strip().lower() == "auto":
            return "auto"
        m = _SIZE.match(value)
        if m:
            n = int(float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "b").lower()])
            if n > 0:
                return n
    raise ValueError('expected "auto" or a size like "64GiB", "500MB"')


# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class DaemonSection:
    listen: Listen
    pid_file: str
    log_file: str
    drain_timeout: float = 60.0
    log_level: str = "info"
    status_listen: Listen | None = None  # HTTP: GET /metrics (Prometheus) and /status (JSON)


@dataclass(frozen=True)
class KeysSection:
    param_cache: str
    preload: dict = field(default_factory=dict)  # id -> absolute zkey path (insertion ordered)


@dataclass(frozen=True)
class SynthesisSection:
    workers: int = 2
    threads: int = 0  # 0 = all cores


@dataclass(frozen=True)
class GpusSection:
    devices: tuple = ()  # empty = auto
    workers_per_device: int = 2
    msm_tables: str = "auto"  # MSM window tables per resident key: auto (when they fit) | on | off


@dataclass(frozen=True)
class MemorySection:
    budget: int | str = "auto"


@dataclass(frozen=True)
class PipelineSection:
    queue_depth: int = 0  # capacity of the device and finalize queues (0 = number of device workers)
    finalize_workers: int = 1
    # the G2 MSM in the device stage, or on CPU in finalize (cuzk's split API); "auto":
    # on the device when every device is a GPU (a GPU does it in ~15 ms at 2^20, a CPU in ~1 s)
    g2_on_device: bool | str = "auto"
    self_verify: bool = True  # verify every proof before returning it


@dataclass(frozen=True)
class Config:
    daemon: DaemonSection
    keys: KeysSection
    synthesis: SynthesisSection
    gpus: GpusSection
    memory: MemorySection
    pipeline: PipelineSection = field(default_factory=PipelineSection)
    source: str = "<defaults>"  # the file it came from, for messages and `status`
    base_dir: str = "."
    text: str = field(default="", repr=False, compare=False)

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
            text = sys.stdin.read()
            return cls.from_text(text, "<stdin>", Path.cwd(), env)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                raw = fh.read()
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
        base = Path(base_dir)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line = re.search(r"line (\d+)", str(exc))
            where = f"{source}:{line.group(1)}" if line else source
            raise ConfigError(f"{where}: not valid TOML: {exc}") from None
        return _Validator(text, source, base, env).build(data)

    # -- views -------------------------------------------------------------------

    def effective(self) -> dict:
        """The effective config as plain data (what the fingerprint hashes)."""
        d = {
            "daemon": {**{k: v for k, v in asdict(self.daemon).items() if k != "status_listen"},
                       "listen": self.daemon.listen.grpc,
                       **({"status_listen": self.daemon.status_listen.grpc} if self.daemon.status_listen else {})},
            "keys": {"param_cache": self.keys.param_cache, "preload": dict(self.keys.preload)},
            "synthesis": asdict(self.synthesis),
            "gpus": {"devices": list(self.gpus.devices), "workers_per_device": self.gpus.workers_per_device,
                     "msm_tables": self.gpus.msm_tables},
            "memory": asdict(self.memory),
            "pipeline": asdict(self.pipeline),
        }
        return d

    @property
    def fingerprint(self) -> str:
        canon = json.dumps(self.effective(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The effective config as TOML (the output of `snarkd config show`)."""
        e = self.effective()
        out = [f"# effective config from {self.source}", f"# fingerprint {self.fingerprint}"]
        for section in ("daemon", "keys", "synthesis", "gpus", "memory", "pipeline"):
            out.append(f"\n[{section}]")
            for k, v in e[section].items():
                if isinstance(v, dict):
                    continue
                if section == "daemon" and k == "drain_timeout":
                    v = _fmt_duration(v)
                out.append(f"{k} = {_toml_value(v)}")
            if section == "keys":
                out.append("\n[keys.preload]")
                for k, v in e["keys"]["preload"].items():
                    out.append(f"{_toml_key(k)} = {_toml_value(v)}")
        return "\n".join(out) + "\n"


def _fmt_duration(seconds: float) -> str:
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


# --------------------------------------------------------------------------- validation


def default_runtime_dir(env) -> Path:
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "snarkd"
    return Path(f"/tmp/snarkd-{os.getuid()}")


def _slug(listen: Listen) -> str:
    if listen.kind == "unix":
        return "unix-" + hashlib.sha256(listen.path.encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9.]+", "_", f"{listen.host}_{listen.port}").strip("_")


SCHEMA = {
    "daemon": {"listen", "pid_file", "log_file", "drain_timeout", "log_level", "status_listen"},
    "keys": {"param_cache", "preload"},
    "synthesis": {"workers", "threads"},
    "gpus": {"devices", "workers_per_device", "msm_tables"},
    "memory": {"budget"},
    "pipeline": {"queue_depth", "finalize_workers", "g2_on_device", "self_verify"},
}


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


class _Validator:
    def __init__(self, text: str, source: str, base: Path, env):
        self.lines = locate_keys(text)
        self.text = text
        self.source = source
        self.base = base
        self.env = env

    def where(self, *path) -> str:
        for i in range(len(path), 0, -1):
            if path[:i] in self.lines:
                return f"{self.source}:{self.lines[path[:i]]}"
        return self.source

    def fail(self, path: tuple, message: str, value=None, show_value=True):
        section, key = path[:-1], path[-1]
        name = (f"[{'.'.join(section)}] " + key) if section else f"[{key}]"
        shown = f" = {_toml_value(value) if not isinstance(value, dict) else '{...}'}" if show_value and value is not None else ""
        raise ConfigError(f"{self.where(*path)}: {name}{shown}: {message}")

    def get(self, data: dict, path: tuple, kind, default, check=None):
        sect = data.get(path[0], {})
        if path[1] not in sect:
            return default
        v = sect[path[1]]
        if kind is int and (isinstance(v, bool) or not isinstance(v, int)):
            self.fail(path, f"expected an integer, got {type(v).__name__}", v)
        if kind is bool and not isinstance(v, bool):
            self.fail(path, f"expected true or false, got {type(v).__name__}", v)
        if kind is str and not isinstance(v, str):
            self.fail(path, f"expected a string, got {type(v).__name__}", v)
        if check:
            try:
                return check(v)
            except ValueError as exc:
                self.fail(path, str(exc), v)
        return v

    def path(self, value: str, base: Path) -> Path:
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else base / p

    def build(self, data: dict) -> Config:
        # unknown sections and keys first: a typo must never silently become a default
        for section, body in data.items():
            if section not in SCHEMA:
                hint = difflib.get_close_matches(section, SCHEMA, 1)
                self.fail((section,), "unknown section" + (f" (did you mean [{hint[0]}]?)" if hint else
                                                          f"; known: {', '.join('[' + s + ']' for s in SCHEMA)}"),
                          show_value=False)
            if not isinstance(body, dict):
                self.fail((section,), "expected a table [" + section + "]", show_value=False)
            for key in body:
                if key not in SCHEMA[section]:
                    hint = difflib.get_close_matches(key, SCHEMA[section], 1)
                    self.fail((section, key), "unknown key" + (f" (did you mean {hint[0]}?)" if hint else
                                                               f"; [{section}] takes {', '.join(sorted(SCHEMA[section]))}"),
                              show_value=False)

        def positive(v):
            if v < 1:
                raise ValueError("must be at least 1")
            return v

        def nonneg(v):
            if v < 0:
                raise ValueError("must be 0 (all cores) or more")
            return v

        def nonneg_depth(v):
            if v < 0:
                raise ValueError("must be 0 (one slot per device worker) or more")
            return v

        def level(v):
            if v.lower() not in LOG_LEVELS:
                raise ValueError(f"expected one of {', '.join(LOG_LEVELS)}")
            return v.lower()

        listen = self.get(data, ("daemon", "listen"), str, None, lambda v: parse_listen(v, self.base))
        if listen is None:
            listen = parse_listen(DEFAULT_LISTEN, self.base)
        rundir = default_runtime_dir(self.env)
        pid_file = self.get(data, ("daemon", "pid_file"), str, None)
        log_file = self.get(data, ("daemon", "log_file"), str, None)
        pid_path = self.path(pid_file, self.base) if pid_file else rundir / f"snarkd-{_slug(listen)}.pid"
        log_path = self.path(log_file, self.base) if log_file else rundir / f"snarkd-{_slug(listen)}.log"
        for key, p, given in (("pid_file", pid_path, pid_file), ("log_file", log_path, log_file)):
            if given is not None:
                self.check_writable_parent(("daemon", key), p, given)
        if pid_path == log_path:
            self.fail(("daemon", "log_file"), "must differ from pid_file", log_file)
        daemon = DaemonSection(
            listen=listen,
            pid_file=str(pid_path),
            log_file=str(log_path),
            drain_timeout=self.get(data, ("daemon", "drain_timeout"), None, 60.0, parse_duration),
            log_level=self.get(data, ("daemon", "log_level"), str, "info", level),
            status_listen=self.get(data, ("daemon", "status_listen"), str, None, self.http_listen),
        )
        if daemon.status_listen is not None and daemon.status_listen == listen:
            self.fail(("daemon", "status_listen"), "must differ from listen", daemon.status_listen.grpc)

        # [keys]
        env_cache = self.env.get(PARAM_CACHE_ENV)
        cache_given = self.get(data, ("keys", "param_cache"), str, None)
        if env_cache:
            cache = self.path(env_cache, Path.cwd())
            if not cache.is_dir():
                raise ConfigError(f"{PARAM_CACHE_ENV}={env_cache}: not a directory (it overrides [keys] param_cache)")
        elif cache_given is not None:
            cache = self.path(cache_given, self.base)
            if not cache.is_dir():
                self.fail(("keys", "param_cache"), "not an existing directory" if not cache.exists() else "not a directory", cache_given)
        else:
            cache = self.base
        preload_raw = data.get("keys", {}).get("preload", {})
        if not isinstance(preload_raw, dict):
            self.fail(("keys", "preload"), 'expected a table of key id = "path.zkey"', preload_raw)
        preload = {}
        for kid, kpath in preload_raw.items():
            kp = ("keys", "preload", kid)
            if not re.fullmatch(r"[A-Za-z0-9_.:-]+", kid):
                self.fail(kp, "key ids may use letters, digits and _ . : - only", show_value=False)
            if not isinstance(kpath, str):
                self.fail(kp, f"expected a path string, got {type(kpath).__name__}", kpath)
            p = self.path(kpath, cache)
            if not p.exists():
                self.fail(kp, f"no such file {p}", kpath)
            if not p.is_file():
                self.fail(kp, f"{p} is not a file", kpath)
            if not os.access(p, os.R_OK):
                self.fail(kp, f"{p} is not readable", kpath)
            preload[kid] = str(p)
        keys = KeysSection(param_cache=str(cache), preload=preload)

        synthesis = SynthesisSection(
            workers=self.get(data, ("synthesis", "workers"), int, 2, positive),
            threads=self.get(data, ("synthesis", "threads"), int, 0, nonneg),
        )

        def bool_or_auto(v):
            if isinstance(v, bool) or v == "auto":
                return v
            raise ValueError('expected true, false or "auto"')

        def table_mode(v):
            if v.lower() not in ("auto", "on", "off"):
                raise ValueError('expected "auto", "on" or "off"')
            return v.lower()

        def devices(v):
            if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in v):
                raise ValueError("expected a list of device indices, e.g. [0, 1] (empty = auto)")
            if len(set(v)) != len(v):
                raise ValueError("lists a device twice")
            return tuple(v)

        gpus = GpusSection(
            devices=self.get(data, ("gpus", "devices"), None, (), devices),
            workers_per_device=self.get(data, ("gpus", "workers_per_device"), int, 2, positive),
            msm_tables=self.get(data, ("gpus", "msm_tables"), str, "auto", table_mode),
        )
        memory = MemorySection(budget=self.get(data, ("memory", "budget"), None, "auto", parse_size))
        pipeline = PipelineSection(
            queue_depth=self.get(data, ("pipeline", "queue_depth"), int, 0, nonneg_depth),
            finalize_workers=self.get(data, ("pipeline", "finalize_workers"), int, 1, positive),
            g2_on_device=self.get(data, ("pipeline", "g2_on_device"), None, "auto", bool_or_auto),
            self_verify=self.get(data, ("pipeline", "self_verify"), bool, True),
        )
        return Config(daemon=daemon, keys=keys, synthesis=synthesis, gpus=gpus, memory=memory, pipeline=pipeline,
                      source=self.source, base_dir=str(self.base), text=self.text)

    def http_listen(self, v: str) -> Listen:
        lst = parse_listen(v, self.base)
        if lst.kind != "tcp":
            raise ValueError('expected "HOST:PORT" (the status endpoint is HTTP over TCP)')
        return lst

    def check_writable_parent(self, path: tuple, p: Path, given: str) -> None:
        """The file's directory must exist (or be creatable) and be writable."""
        d = p.parent
        while not d.exists():
            if d.parent == d:
                break
            d = d.parent
        if not d.is_dir():
            self.fail(path, f"{d} is not a directory", given)
        if not os.access(d, os.W_OK | os.X_OK):
            self.fail(path, f"directory {d} is not writable", given)
        if p.is_dir():
            self.fail(path, f"{p} is a directory", given)
