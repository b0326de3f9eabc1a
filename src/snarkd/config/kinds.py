"""The kinds of value a setting takes: how each is checked, resolved and written back as TOML.

A kind's `parse(value, ctx)` takes the raw TOML (or environment) value and returns
the effective one, raising ValueError with a message that completes
"[section] key = value: ...". `toml(value)` spells an effective value so that
parsing it again gives the same value (so `snarkd config show` prints a config).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from snarkd.ids import KEY_ID
from snarkd.units import format_duration, format_size, parse_duration, parse_size


@dataclass(frozen=True)
class Context:
    """What a value may depend on: the config file's directory, the environment,
    and the settings resolved before it (in declaration order)."""

    base: Path
    env: object
    values: dict  # (section, key) -> effective value


def toml_value(v) -> str:
    if v is None:
        return '""'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def resolve_path(value: str, base: Path) -> Path:
    p = Path(os.path.expanduser(value))
    return p if p.is_absolute() else base / p


class Kind:
    doc = ""  # the value's form, for the settings table (docs/daemon.md)
    type: object = object  # what parse returns: the type of the setting's field in its section (sections.py)

    def parse(self, value, ctx: Context):
        raise NotImplementedError

    def parse_env(self, text: str, ctx: Context):
        """An environment override's text (always a string)."""
        return self.parse(text, ctx)

    def toml(self, value) -> str:
        return toml_value(value)

    def plain(self, value):
        """The effective value as JSON data (for the fingerprint and `config show --json`)."""
        return value


def _typed(value, kind: type, name: str):
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"expected {name}, got {type(value).__name__}")
    if kind is not int and not isinstance(value, kind):
        raise ValueError(f"expected {name}, got {type(value).__name__}")
    return value


class Int(Kind):
    type = int
    def __init__(self, minimum: int = 0, maximum: int | None = None, zero: str = ""):
        self.minimum, self.maximum, self.zero = minimum, maximum, zero
        self.doc = "integer" + (f", 0 = {zero}" if zero else f" ≥ {minimum}")

    def parse(self, value, ctx):
        v = _typed(value, int, "an integer")
        if v < self.minimum:
            raise ValueError(f"must be 0 ({self.zero}) or more" if self.zero else f"must be at least {self.minimum}")
        if self.maximum is not None and v > self.maximum:
            raise ValueError(f"must be at most {self.maximum}")
        return v

    def parse_env(self, text, ctx):
        try:
            return self.parse(int(text), ctx)
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None


class Float(Kind):
    """A number >= minimum (an integer is read as one); zero: what 0 means."""
    type = float

    def __init__(self, minimum: float = 0.0, zero: str = ""):
        self.minimum, self.zero = minimum, zero
        self.doc = "number" + (f", 0 = {zero}" if zero else f" ≥ {minimum:g}")

    def parse(self, value, ctx):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise ValueError(f"expected a number, got {type(value).__name__}")
        if value < self.minimum or value == float("inf"):
            raise ValueError(f"must be a finite number, at least {self.minimum:g}")
        return float(value)

    def parse_env(self, text, ctx):
        try:
            return self.parse(float(text), ctx)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None


class Bool(Kind):
    type = bool
    doc = "true | false"

    def parse(self, value, ctx):
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {type(value).__name__}")
        return value

    def parse_env(self, text, ctx):
        t = text.strip().lower()
        if t in ("1", "true", "yes", "on"):
            return True
        if t in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true or false, got {text!r}")


class Choice(Kind):
    type = str
    def __init__(self, *options: str):
        self.options = options
        self.doc = " | ".join(f'"{o}"' for o in options)

    def parse(self, value, ctx):
        v = _typed(value, str, "a string").lower()
        if v not in self.options:
            quoted = [f'"{o}"' for o in self.options]
            raise ValueError("expected " + (", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]))
        return v


class BoolOrAuto(Kind):
    type = bool | str  # or "auto"
    doc = 'true | false | "auto"'

    def parse(self, value, ctx):
        if isinstance(value, bool) or value == "auto":
            return value
        raise ValueError('expected true, false or "auto"')

    def parse_env(self, text, ctx):
        return "auto" if text.strip().lower() == "auto" else Bool().parse_env(text, ctx)


class Size(Kind):
    type = int | str  # bytes, or "auto"
    doc = '"auto" or a size ("64GiB", "500MB", bytes)'

    def __init__(self, auto: bool = True):
        self.auto = auto
        if not auto:
            self.doc, self.type = 'a size ("64GiB", "500MB", bytes)', int

    def parse(self, value, ctx):
        v = parse_size(value)
        if v == "auto" and not self.auto:
            raise ValueError('expected a size like "64GiB", "500MB" ("auto" has no meaning here)')
        return v

    def parse_env(self, text, ctx):
        return self.parse(int(text) if text.strip().isdigit() else text, ctx)

    def toml(self, value) -> str:
        return toml_value(format_size(value))


class SizeOrOff(Kind):
    """A size limit that may be switched off: "off" (no limit, the value 0) or a size."""
    type = int  # bytes, 0 = off

    doc = '"off" or a size ("8GiB", "500MB", bytes)'

    def parse(self, value, ctx):
        if isinstance(value, str) and value.strip().lower() in ("off", "", "0"):
            return 0
        size = parse_size(value)
        if size == "auto":
            raise ValueError('expected "off" or a size like "8GiB", "500MB"')
        return size

    def parse_env(self, text, ctx):
        return self.parse(int(text) if text.strip().isdigit() and int(text) > 0 else text, ctx)

    def toml(self, value) -> str:
        return toml_value(format_size(value) if value else "off")


class Duration(Kind):
    type = float  # seconds
    doc = 'a duration ("60s", "500ms", "2m")'

    def __init__(self, env_unit: float = 1.0, positive: bool = False):
        self.env_unit = env_unit  # what a bare number in the environment counts (0.001: milliseconds)
        self.positive = positive  # 0 refused

    def parse(self, value, ctx):
        return self._checked(parse_duration(value))

    def parse_env(self, text, ctx):
        try:
            seconds = parse_duration(float(text) * self.env_unit)
        except ValueError:
            seconds = parse_duration(text)
        return self._checked(seconds)

    def _checked(self, seconds: float) -> float:
        if self.positive and seconds <= 0:
            raise ValueError("must be positive")
        return seconds

    def toml(self, value) -> str:
        return toml_value(format_duration(value))


class Text(Kind):
    type = str
    doc = "string"

    def parse(self, value, ctx):
        return _typed(value, str, "a string")


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

    @property
    def local(self) -> bool:
        """A unix socket or a loopback address: only this host can connect (docs/security.md)."""
        if self.kind == "unix" or self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:  # a host name: it may resolve to anything
            return False


MAX_SOCKET_PATH = 107  # bytes of a unix socket path (sun_path, its NUL excluded)


def socket_path_too_long(path) -> bool:
    return len(os.fsencode(str(path))) > MAX_SOCKET_PATH


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
        if socket_path_too_long(path):
            raise ValueError(f"unix socket path {str(path)!r} is longer than the {MAX_SOCKET_PATH} bytes the kernel allows")
        return Listen("unix", path=os.path.normpath(str(path)))
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)|([^:\[\]]+):(\d+)", text)
    if not m:
        raise ValueError(f'{text!r} is not "HOST:PORT" (IPv6: "[::1]:PORT") or "unix:PATH"')
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is outside 1-65535")
    return Listen("tcp", host=host, port=port)


class Address(Kind):
    def __init__(self, tcp_only: bool = False, optional: bool = False):
        self.tcp_only, self.optional = tcp_only, optional
        self.type = Listen | None if optional else Listen
        self.doc = '"HOST:PORT"' if tcp_only else '"HOST:PORT" or "unix:PATH"'
        if optional:
            self.doc += ' ("" = off)'

    def parse(self, value, ctx):
        _typed(value, str, "a string")
        if self.optional and value == "":
            return None
        lst = parse_listen(value, ctx.base)
        if self.tcp_only and lst.kind != "tcp":
            raise ValueError('expected "HOST:PORT" (the status endpoint is HTTP over TCP)')
        return lst

    def toml(self, value) -> str:
        return toml_value("" if value is None else value.grpc)

    def plain(self, value):
        return None if value is None else value.grpc


class RayAddress(Kind):
    """Where the cluster front finds Ray: "" (off), "local", "auto", "HOST:PORT" or "ray://HOST:PORT"."""
    type = str

    doc = '"" (off) | "local" | "auto" | "HOST:PORT" | "ray://HOST:PORT"'

    def parse(self, value, ctx):
        v = _typed(value, str, "a string").strip()
        if v.lower() in ("", "local", "auto"):
            return v.lower()
        host_port = v[len("ray://"):] if v.startswith("ray://") else v
        if not re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[^:/\[\]\s]+):(\d{1,5})", host_port) or \
                not 1 <= int(host_port.rsplit(":", 1)[1]) <= 65535:
            raise ValueError('expected "" (off), "local", "auto", "HOST:PORT" (the head\'s GCS) or "ray://HOST:PORT" '
                             "(Ray Client)")
        return v


class FilePath(Kind):
    """A file the daemon writes: its directory must exist (or be creatable) and be writable.
    With `off`, "off" (or "") turns the feature off and parses to "off"."""
    type = str  # a path, or "off" where off is allowed

    doc = "path (relative to the config file)"

    def __init__(self, off: bool = False):
        self.off = off
        if off:
            self.doc = 'path (relative to the config file), or "off"'

    def parse(self, value, ctx):
        v = _typed(value, str, "a string")
        if self.off and v.strip().lower() in ("", "off"):
            return "off"
        p = resolve_path(v, ctx.base)
        d = p.parent
        while not d.exists() and d.parent != d:
            d = d.parent
        if not d.is_dir():
            raise ValueError(f"{d} is not a directory")
        if not os.access(d, os.W_OK | os.X_OK):
            raise ValueError(f"directory {d} is not writable")
        if p.is_dir():
            raise ValueError(f"{p} is a directory")
        return str(p)


class ReadFile(Kind):
    """A file the daemon reads (a certificate, a key, a token file): it must exist and be
    readable. "" = not set (None)."""
    type = str | None

    doc = 'readable file (relative to the config file); "" = none'

    def parse(self, value, ctx):
        v = _typed(value, str, "a string")
        if v == "":
            return None
        p = resolve_path(v, ctx.base)
        if not p.exists():
            raise ValueError(f"no such file {p}")
        if not p.is_file():
            raise ValueError(f"{p} is not a file")
        if not os.access(p, os.R_OK):
            raise ValueError(f"{p} is not readable")
        return str(p)

    def toml(self, value) -> str:
        return toml_value("" if value is None else value)


class DirPath(Kind):
    """An existing directory."""
    type = str

    doc = "directory (relative to the config file)"

    def parse(self, value, ctx):
        p = resolve_path(_typed(value, str, "a string"), ctx.base)
        if not p.is_dir():
            raise ValueError("not an existing directory" if not p.exists() else "not a directory")
        return str(p)

    def parse_env(self, text, ctx):
        # an environment path is relative to the working directory, not the config file
        return self.parse(text, Context(Path.cwd(), ctx.env, ctx.values))


class DirList(Kind):
    """A list of existing directories."""
    type = tuple[str, ...]

    doc = "list of directories"

    def parse(self, value, ctx):
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ValueError('expected a list of directory paths, e.g. ["/srv/witness"]')
        return tuple(DirPath().parse(x, ctx) for x in value)

    def plain(self, value):
        return list(value)


class OptionalDir(Kind):
    """A directory the daemon creates, or "" for none."""
    type = str  # "" = off

    doc = 'directory, or "" (off)'

    def parse(self, value, ctx):
        v = _typed(value, str, "a string")
        return str(resolve_path(v, ctx.base)) if v else ""


class CachePath(Kind):
    """A cache directory (created on first use), or "off"."""
    type = str  # a directory, or "off"

    doc = 'directory, or "off"'

    def parse(self, value, ctx):
        v = _typed(value, str, "a string")
        if v.strip().lower() in ("", "0", "off", "no", "false"):
            return "off"
        return str(resolve_path(v, ctx.base))


class Devices(Kind):
    type = tuple[int, ...]
    doc = "list of device indices ([] = every GPU, else the CPU)"

    def parse(self, value, ctx):
        if not isinstance(value, list) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in value):
            raise ValueError("expected a list of device indices, e.g. [0, 1] (empty = auto)")
        if len(set(value)) != len(value):
            raise ValueError("lists a device twice")
        return tuple(value)

    def plain(self, value):
        return list(value)




class EntryError(ValueError):
    """A bad entry of a table setting: names the entry, e.g. [keys.preload] mine = "x.zkey"."""

    def __init__(self, entry: str, message: str, value=None):
        super().__init__(message)
        self.entry, self.value = entry, value


class KeyTable(Kind):
    """A TOML table of key id = "path.zkey" (paths relative to [keys] param_cache)."""
    type = dict[str, str]

    doc = 'table: key id = "path.zkey"'

    def __init__(self, relative_to: tuple[str, str]):
        self.relative_to = relative_to

    def parse(self, value, ctx):
        if not isinstance(value, dict):
            raise ValueError('expected a table of key id = "path.zkey"')
        base = Path(ctx.values[self.relative_to])
        out = {}
        for kid, kpath in value.items():
            if not KEY_ID.fullmatch(kid):
                raise EntryError(kid, "key ids may use letters, digits and _ . : - only", None)
            if not isinstance(kpath, str):
                raise EntryError(kid, f"expected a path string, got {type(kpath).__name__}", kpath)
            p = resolve_path(kpath, base)
            if not p.exists():
                raise EntryError(kid, f"no such file {p}", kpath)
            if not p.is_file():
                raise EntryError(kid, f"{p} is not a file", kpath)
            if not os.access(p, os.R_OK):
                raise EntryError(kid, f"{p} is not readable", kpath)
            out[kid] = str(p)
        return out

    def plain(self, value):
        return dict(value)
