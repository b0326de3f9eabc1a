"""start / stop / restart / status, as the CLI runs them. Each one verifies its outcome.

start    spawn `snarkd serve` detached (own session), hand it the already-read
         config through an inherited file descriptor, and wait on a readiness
         pipe: "ready PID ADDR FINGERPRINT" or "error CAUSE" or EOF (it died).
         Then check health SERVING and the fingerprint over gRPC. No sleeps.
stop     the pid file's process must be our daemon (lock held, same start time
         and command line); SIGTERM, wait until it is gone and the address is
         free, SIGKILL after the timeout; report what happened.
restart  a verified stop, then a verified start.
status   ask the daemon over gRPC; say plainly when none runs.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

import snarkd
from snarkd.config import Config, Listen, parse_listen
from snarkd.daemon.client import Client
from snarkd.daemon.logsetup import private_file, tail
from snarkd.daemon.private_dir import open_private
from snarkd.daemon.netcheck import check_free, is_free
from snarkd.daemon.pidfile import describe_pid, is_same_process, lock_is_held, read_pid_file
from snarkd.daemon.security import local_target
from snarkd.errors import DaemonError, SnarkdError

LOG_TAIL = 20


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Started:
    pid: int
    listen: str
    fingerprint: str
    log_file: str


# --------------------------------------------------------------------------- start


def _precheck(cfg: Config) -> None:
    """Fail fast, naming the holder, before spawning anything."""
    pf = cfg.daemon.pid_file
    if lock_is_held(pf):
        info = read_pid_file(pf)
        who = describe_pid(info.pid) if info and info.pid else "another process"
        where = f" listening on {info.meta.get('listen')}" if info and info.meta.get("listen") else ""
        fp = f" (config fingerprint {info.meta.get('fingerprint')})" if info and info.meta.get("fingerprint") else ""
        raise DaemonError(f"snarkd is already running: {who}{where}{fp} holds the pid file {pf}. "
                          f"Use `snarkd restart` to replace it, or `snarkd stop` first.")
    info = read_pid_file(pf)
    if info is not None:
        ok, why = is_same_process(info)
        _say(f"snarkd: warning: stale pid file {pf} ({why or 'nobody holds its lock'}); it will be replaced")
    busy = check_free(cfg.daemon.listen)
    if busy:
        raise DaemonError(busy)


def _child_env() -> dict:
    env = dict(os.environ)
    # The child must import this same snarkd, whether installed or run from a source tree.
    pkg_parent = str(Path(snarkd.__file__).resolve().parent.parent)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if pkg_parent not in parts:
        env["PYTHONPATH"] = os.pathsep.join([pkg_parent, *parts])
    return env


def _stop_child(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait(5)


def start(cfg: Config, timeout: float = 600.0) -> Started:
    _precheck(cfg)
    log_file = Path(cfg.daemon.log_file)
    try:
        private_file(log_file)  # 0600 from the first byte: the daemon's own
        logfh = os.fdopen(open_private(log_file, os.O_WRONLY | os.O_APPEND), "ab")
    except OSError as exc:
        raise DaemonError(f"cannot open log file {log_file}: {exc.strerror}") from None
    offset = logfh.seek(0, os.SEEK_END)

    cfg_file = tempfile.TemporaryFile()  # unlinked: nothing is left behind
    cfg_file.write(cfg.text.encode())
    cfg_file.flush()
    cfg_file.seek(0)
    r, w = os.pipe()
    cmd = [sys.executable, "-m", "snarkd", "serve", "--daemonized", "--ready-fd", str(w),
           "--config-fd", str(cfg_file.fileno()), "--config-source", cfg.source, "--config-base", cfg.base_dir]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logfh, stderr=logfh, env=_child_env(),
                                start_new_session=True, pass_fds=(w, cfg_file.fileno()), close_fds=True)
    finally:
        os.close(w)
        cfg_file.close()
        logfh.close()

    def failure(cause: str) -> DaemonError:
        lines = tail(log_file, LOG_TAIL, offset)
        shown = "\n".join("  | " + ln for ln in lines) if lines else "  (the log is empty)"
        return DaemonError(f"snarkd did not start: {cause}\nlast lines of {log_file}:\n{shown}")

    buf = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                _stop_child(proc)
                raise failure(f"not ready after {timeout:g}s (pid {proc.pid}); stopped it")
            ready, _, _ = select.select([r], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(r, 4096)
            if not chunk:
                break  # EOF: the child closed the pipe without a line -> it died
            buf += chunk
    except KeyboardInterrupt:
        _stop_child(proc)
        raise failure(f"interrupted while waiting for readiness; stopped the starting daemon (pid {proc.pid})") from None
    finally:
        os.close(r)

    line = buf.decode("utf-8", "replace").strip()
    if line.startswith("ready "):
        _, pid, listen, fingerprint = line.split(" ", 3)
        _verify_serving(cfg, int(pid), listen, fingerprint, proc, failure)
        return Started(int(pid), listen, fingerprint, str(log_file))
    try:
        code = proc.wait(10)
    except subprocess.TimeoutExpired:
        _stop_child(proc)
        code = None
    if line.startswith("error "):
        raise failure(line[6:])
    if code is None:
        raise failure(f"it closed its readiness pipe without a word (pid {proc.pid}); stopped it")
    if code < 0:
        raise failure(f"the daemon was killed by {signal.Signals(-code).name} before it was ready")
    raise failure(f"the daemon exited with code {code} before it was ready")


def _verify_serving(cfg: Config, pid: int, listen: str, fingerprint: str, proc, failure) -> None:
    problem = None
    addr, token = local_target(cfg)
    with Client(addr, token=token) as c:
        try:
            health = c.health(timeout=10)
            st = c.status(timeout=10)
        except SnarkdError as exc:
            problem = f"it reported ready but does not answer: {exc}"
        else:
            if health != "SERVING":
                problem = f"it reported ready but health is {health}"
            elif st["pid"] != pid or st["config_fingerprint"] != cfg.fingerprint:
                problem = (f"the daemon answering on {listen} is pid {st['pid']} with fingerprint "
                           f"{st['config_fingerprint']}, not the one just started (pid {pid}, {cfg.fingerprint})")
    if problem:
        _stop_child(proc)
        raise failure(problem)


# --------------------------------------------------------------------------- stop


@dataclass
class Stopped:
    pid: int | None
    message: str
    was_running: bool


def _gone(pid: int, create_time: float | None) -> bool:
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return True
        return create_time is not None and abs(p.create_time() - create_time) > 0.05
    except psutil.NoSuchProcess:
        return True
    except psutil.AccessDenied:
        return False


def _addresses(cfg: Config, meta: dict) -> list[Listen]:
    out = [cfg.daemon.listen]
    try:
        recorded = parse_listen(meta.get("listen", ""), Path(cfg.base_dir))
        if recorded != cfg.daemon.listen:
            out.append(recorded)
    except ValueError:
        pass
    return out


def stop(cfg: Config, timeout: float | None = None) -> Stopped:
    timeout = cfg.daemon.drain_timeout + 10 if timeout is None else timeout
    pf = cfg.daemon.pid_file
    info = read_pid_file(pf)
    if info is None or not lock_is_held(pf):
        stale = ""
        if info is not None:
            ok, why = is_same_process(info)
            stale = f" (removed a stale pid file {pf}: {why or 'nobody holds its lock'})"
            try:
                if not lock_is_held(pf):
                    os.unlink(pf)
            except FileNotFoundError:
                pass
        busy = check_free(cfg.daemon.listen)
        if busy:
            raise DaemonError(f"no snarkd pid file at {pf}{stale}, but {busy.split('in use by ', 1)[-1]} "
                              f"listens on {cfg.daemon.listen}; not stopping a process I cannot verify as snarkd")
        return Stopped(None, f"snarkd is not running (no daemon holds {pf}){stale}", False)

    ok, why = is_same_process(info)
    if not ok:
        raise DaemonError(f"the pid file {pf} is locked, but {why}; refusing to signal it. "
                          f"Check with `snarkd status` and `ps`.")
    pid, ct = info.pid, info.create_time
    addrs = _addresses(cfg, info.meta)
    t0 = time.monotonic()
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise DaemonError(f"not allowed to signal snarkd pid {pid} (another user's process)") from None

    def wait(until: float) -> bool:
        while time.monotonic() < until:
            if _gone(pid, ct) and all(is_free(a) for a in addrs):
                return True
            time.sleep(0.05)
        return _gone(pid, ct) and all(is_free(a) for a in addrs)

    if wait(t0 + timeout):
        took = time.monotonic() - t0
        return Stopped(pid, f"snarkd stopped: pid {pid} exited after {took:.1f}s; "
                            f"{', '.join(map(str, addrs))} free", True)
    if _gone(pid, ct):
        busy = [check_free(a) for a in addrs]
        raise DaemonError(f"snarkd pid {pid} exited, but {'; '.join(b for b in busy if b)}")
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if not wait(time.monotonic() + 10):
        raise DaemonError(f"could not stop snarkd pid {pid}: still running 10s after SIGKILL "
                          f"(state {_state(pid)})")
    try:
        if not lock_is_held(pf):
            os.unlink(pf)
    except FileNotFoundError:
        pass
    return Stopped(pid, f"snarkd pid {pid} did not exit within {timeout:g}s of SIGTERM (drain_timeout "
                        f"{cfg.daemon.drain_timeout:g}s): killed it with SIGKILL; removed its pid file; "
                        f"{', '.join(map(str, addrs))} free. Unfinished proofs were lost.", True)


def _state(pid: int) -> str:
    try:
        return psutil.Process(pid).status()
    except psutil.Error:
        return "gone"


# --------------------------------------------------------------------------- status


def status(cfg: Config) -> dict:
    """The running daemon's Status, plus what the pid file says. DaemonError when none runs."""
    pf = cfg.daemon.pid_file
    info = read_pid_file(pf)
    addr, token = local_target(cfg)
    with Client(addr, token=token) as c:
        try:
            st = c.status(timeout=5)
            st["health"] = c.health(timeout=5)
        except SnarkdError as exc:
            if info is not None and lock_is_held(pf):
                raise DaemonError(f"snarkd pid {info.pid} holds {pf} but does not answer on "
                                  f"{cfg.daemon.listen} (starting up, or stuck): {exc}") from None
            raise DaemonError(f"snarkd is not running: nothing answers on {cfg.daemon.listen} and no daemon "
                              f"holds {pf}") from None
    st["pid_file"] = pf
    st["log_file"] = cfg.daemon.log_file
    st["pid_file_pid"] = info.pid if info else None
    st["warnings"] = config_warnings(cfg, st)
    return st


def config_warnings(cfg: Config, st: dict) -> list[str]:
    """What is off between the config named and the daemon that answered: the pid and log paths printed are
    the named config's, so say when that daemon was started from another config."""
    if st.get("config_fingerprint") in (None, "", cfg.fingerprint):
        return []
    return [f"the daemon answering (pid {st.get('pid')}) was started from {st.get('config_path') or 'another config'} "
            f"(fingerprint {st['config_fingerprint']}), not from {cfg.source} (fingerprint {cfg.fingerprint}): the "
            f"pid file and log shown are {cfg.source}'s, not necessarily that daemon's"]


def _mib(n) -> str:
    return f"{int(n) / 2**20:.1f} MiB"


def format_status(st: dict) -> str:
    lines = [
        f"snarkd {st['version']} running: pid {st['pid']}, up {st['uptime_s']:.1f}s, {st['state']} on {st['listen']} "
        f"(health {st['health']})",
        f"config: {st['config_path']} (fingerprint {st['config_fingerprint']})",
        f"pid file: {st['pid_file']}    log: {st['log_file']}",
    ]
    if st.get("pid_file_pid") not in (None, st["pid"]):
        lines.append(f"WARNING: the pid file names pid {st['pid_file_pid']}, but pid {st['pid']} answers")
    lines += [f"WARNING: {w}" for w in st.get("warnings", ())]
    if st["keys"]:
        lines.append("keys:")
        for k in st["keys"]:
            lines.append(f"  {k['id']}: {k['curve']}, {_mib(k['bytes'])}, domain {k['domain_size']}, "
                         f"{k['proofs']} proof(s){', preloaded' if k['preloaded'] else ''}"
                         f"{'' if k.get('resident', True) else ', evicted'} ({k['path']})")
    else:
        lines.append("keys: none loaded")
    lines.append(f"jobs: {st['queued']} queued, {st['in_flight']} in flight, {st['completed']} completed, "
                 f"{st['failed']} failed, {st['cancelled']} cancelled, {st.get('expired', 0)} expired")
    lines += _eta_lines(st.get("engine_json", ""))
    lines += _lane_lines(st.get("lanes", ()))
    lines += _unverified_lines(st.get("engine_json", ""))
    lines.append(f"memory: RSS {_mib(st['rss_bytes'])}, peak {_mib(st['peak_rss_bytes'])}")
    lines.append(f"workers: {st['workers']}, devices: {', '.join(st['devices']) or 'auto'}")
    lines += _preemption_lines(st.get("engine_json", ""))
    lines += _cluster_lines(st.get("engine_json", ""))
    return "\n".join(lines)


def _lane_lines(lanes) -> list[str]:
    """One line per lane ([scheduler.lanes]; "default" always): its order, share, bound and what it holds."""
    out = ["lanes:"] if lanes else []
    for ln in lanes:
        g = ln.get
        bound = f"{g('weight', 0):.4g} of {g('max_queued'):.4g} units" if g("max_queued") else \
            f"{g('weight', 0):.4g} units"
        out.append(f"  {g('name')}: priority {g('priority', 0)}, share {g('share', 0):g} "
                   f"({g('slots', 0)}/{g('reserved_slots', 0)} reserved slots held), {g('queued', 0)} queued, "
                   f"{g('running', 0)} running, {bound}, deadline {g('deadline_s', 0):g}s, "
                   f"{g('expired', 0)} expired, {g('deadline_missed', 0)} missed")
    return out


def _eta_lines(engine_json: str) -> list[str]:
    """The completion model deadlines are admitted by (engine/eta.py): the backlog and each key's service time."""
    try:
        eta = json.loads(engine_json or "{}").get("eta")
    except ValueError:
        return []
    if not eta:
        return []
    keys = ", ".join(f"{k} {v:.3g}s, then {eta['interval_s'][k]:.3g}s each ({eta['samples'].get(k, 0)} measured)"
                     for k, v in sorted(eta["latency_s"].items()))
    return [f"deadlines: backlog ~{eta['backlog_s']:.3g}s; per key, a partition's latency: {keys or 'none measured yet'}"]


def _unverified_lines(engine_json: str) -> list[str]:
    """With [pipeline] self_verify = false: a warning, and the proofs returned unverified per key (issue 33)."""
    try:
        es = json.loads(engine_json or "{}")
    except ValueError:
        return []
    if es.get("config", {}).get("self_verify", True) and not es.get("unverified_proofs"):
        return []
    per_key = ", ".join(f"{k} {n}" for k, n in sorted(es.get("unverified_proofs", {}).items())) or "none yet"
    return [f"unverified: [pipeline] self_verify = false: proofs of jobs without batch_verify are returned "
            f"unverified; so far, per key: {per_key}"]


def _preemption_lines(engine_json: str) -> list[str]:
    """Device stages run at a lower lane's yield point, and those skipped by reason, per device (once any were)."""
    try:
        devices = json.loads(engine_json or "{}").get("devices") or []
    except ValueError:
        return []
    if not any(d.get("preemptions") or d.get("preempt_skipped") for d in devices):
        return []

    def one(d) -> str:
        skipped = ", ".join(f"{r} {n}" for r, n in sorted(d.get("preempt_skipped", {}).items()))
        return f"{d['name']} {d.get('preemptions', 0)}" + (f" (skipped: {skipped})" if skipped else "")

    return ["preemptions: " + "; ".join(one(d) for d in devices)]


def _cluster_lines(engine_json: str) -> list[str]:
    """A cluster front's nodes and actors (from the engine snapshot in the Status reply)."""
    try:
        cl = json.loads(engine_json or "{}").get("cluster")
    except ValueError:
        return []
    if not cl:
        return []
    live = [a for a in cl["actors"] if a["state"] != "dead"]
    out = [f"cluster: {cl['address']}, {cl['nodes_alive']} node(s) alive, {cl['actors_ready']} of {len(live)} actors "
           f"ready, {cl['front']['pending']} partition(s) queued at the front, {cl['front']['retried']} retried"]
    for a in cl["actors"]:
        why = f" ({a['error']})" if a["error"] else ""
        out.append(f"  {a['name']}: {a['state']}{why}, devices {','.join(a['devices']) or '-'}, keys "
                   f"{','.join(a['keys']) or '-'}, {a['outstanding']}/{a['capacity']} in flight, {a['completed']} "
                   f"proved, {a['throughput']:.2f} proofs/s")
    return out


def status_json(st: dict) -> str:
    return json.dumps(st, indent=1, sort_keys=True)
