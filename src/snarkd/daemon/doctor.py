"""`snarkd doctor`: what stands between this machine and a working daemon, one line per check.

Each check is a small function returning Check(s): ok, warn or fail, what it saw, and
the fix. The GPU checks go through snarkd.gpu (CuPy, the driver, each GpuDevice: an
NVRTC compile of the kernels and a small MSM checked against the CPU core); without
CuPy or a device they say so in one line. The config-dependent checks run only when
the config loads (a config that does not is itself the failure).
"""

from __future__ import annotations

import os
import random
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from snarkd.config import Config, config_path
from snarkd.daemon.netcheck import check_free
from snarkd.daemon.pidfile import lock_is_held, read_pid_file
from snarkd.errors import SnarkdError
from snarkd.formats.zkey import read_zkey

OK, WARN, FAIL = "ok", "warn", "fail"
MSM_POINTS = 1000  # the GPU self-check: large enough for several windows and full buckets


@dataclass
class Check:
    name: str
    level: str  # ok | warn | fail
    detail: str
    fix: str = ""
    data: dict = field(default_factory=dict)


def _size(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.1f} GiB"
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


# --------------------------------------------------------------------------- the machine


def check_native(ifma: str | None = None) -> Check:
    """ifma: [cpu] ifma as this process applied it (the CLI: $SNARKD_CPU_IFMA, snarkd.native.apply_ifma), None: unset."""
    try:
        from snarkd.native import _core
    except ImportError as exc:
        return Check("native", FAIL, f"the native core does not import: {exc}",
                     "rebuild it: pip install . (a C++17 compiler is needed)")
    march = getattr(_core, "build_march", None)
    build = "unknown build flags" if march is None else ("portable build (-O3)" if not march else f"-march={march} build")
    has, uses = bool(_core.cpu_has_adx()), bool(_core.uses_adx())
    has52, uses52 = bool(_core.cpu_has_simd52()), bool(_core.uses_simd52())
    data = {"build_march": march, "cpu_has_adx": has, "uses_adx": uses, "threads": int(_core.hardware_threads()),
            "cpu_has_avx512_ifma": has52, "uses_avx512_ifma": uses52}
    mul = ("BMI2/ADX multiplication in use" if uses else
           "the CPU has BMI2/ADX but the portable multiplication is in use" if has else
           "this CPU has no BMI2/ADX: the portable multiplication is used")
    lanes = ("AVX-512 IFMA 8-lane MSM/NTT in use" if uses52 else
             "AVX-512 IFMA present but not in use" if has52 else "no AVX-512 IFMA: scalar MSM/NTT (slower, same proofs)")
    if has52 and not uses52 and not (has and not uses) and ifma == "off":  # asked for: [cpu] ifma
        return Check("native", OK, f"{build}; {mul}; {lanes} (SNARKD_CPU_IFMA=off)", data=data)
    if (has and not uses) or (has52 and not uses52):
        return Check("native", WARN, f"{build}; {mul}; {lanes}",
                     "only SNARKD_CPU_IFMA=off ([cpu] ifma = \"off\") turns IFMA off outside tests; otherwise "
                     "rebuild with pip install .", data)
    return Check("native", OK, f"{build}; {mul}; {lanes}", data=data)


def check_host(cfg: Config | None) -> Check:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    vm = psutil.virtual_memory()
    data = {"cores": cores, "cpu_count": os.cpu_count(), "memory_total": vm.total, "memory_available": vm.available}
    detail = f"{cores} core(s) usable of {os.cpu_count()}, memory {_size(vm.available)} available of {_size(vm.total)}"
    if cfg is not None:
        budget = cfg.memory.budget
        if isinstance(budget, int) and budget > vm.available:
            return Check("host", WARN, f"{detail}; [memory] budget {_size(budget)} is more than is available",
                         "lower [memory] budget (or \"auto\": 75% of available at start)", data)
    return Check("host", OK, detail, data=data)


def check_cupy(cfg: Config | None) -> list[Check]:
    """CuPy and the driver; then one check per GPU the daemon would use."""
    from snarkd.gpu.memory import GpuUnavailable, cupy_module

    wanted = list(cfg.gpus.devices) if cfg is not None else []
    must = FAIL if wanted else WARN
    why = f"[gpus] devices = {wanted}: the daemon will not start" if wanted else "the daemon proves on the CPU"
    try:
        cupy = cupy_module()
    except GpuUnavailable as exc:
        return [Check("cupy", must, f"no CuPy: GPUs are not used ({why}); {str(exc).split(': ', 1)[-1]}",
                      "on a machine with an NVIDIA GPU: pip install 'snarkd[gpu]' (CuPy for CUDA 13)")]
    rt = cupy.cuda.runtime
    try:
        driver, runtime, count = rt.driverGetVersion(), rt.runtimeGetVersion(), rt.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CuPy imports but the driver does not answer
        return [Check("cupy", must, f"CuPy {cupy.__version__} imports but the CUDA driver does not answer ({why}): "
                      f"{exc}", "install or repair the NVIDIA driver (nvidia-smi must list the GPU)")]
    data = {"cupy": cupy.__version__, "driver": driver, "runtime": runtime, "devices": count}
    ver = f"CuPy {cupy.__version__}, driver {driver // 1000}.{driver % 1000 // 10}, runtime {runtime // 1000}.{runtime % 1000 // 10}"
    if count == 0:
        return [Check("cupy", must, f"{ver}: no CUDA device visible ({why})",
                      "check nvidia-smi and CUDA_VISIBLE_DEVICES", data)]
    out = [Check("cupy", OK, f"{ver}, {count} device(s)", data=data)]
    for i in wanted:
        if i >= count:
            out.append(Check(f"gpu {i}", FAIL, f"[gpus] devices lists {i}, but only {count} device(s) exist",
                             "fix [gpus] devices (empty = every GPU)"))
    for i in (wanted or range(count)):
        if i < count:
            out.append(check_gpu(i, cfg))
    return out


def check_gpu(index: int, cfg: Config | None) -> Check:
    """Name, memory, compute capability, the kernels (prebuilt, else an NVRTC compile), and an MSM checked
    against the CPU core."""
    import numpy as np

    from snarkd.curves.params import BN254
    from snarkd.gpu import device as gdevice
    from snarkd.gpu import module as gmodule
    from snarkd.native import _core
    from snarkd.setup.groth16_setup import g1_generator_bytes

    name = f"gpu {index}"
    try:
        cupy = gdevice.cupy_module()
        props = cupy.cuda.runtime.getDeviceProperties(index)
        with cupy.cuda.Device(index):
            free, total = cupy.cuda.runtime.memGetInfo()
        budget = cfg.gpus.memory_budget if cfg is not None else "auto"
        dev = gdevice.get(index, None if budget == "auto" else budget, cfg.gpus.cubin_dir if cfg is not None else "")
    except Exception as exc:  # noqa: BLE001
        return Check(name, FAIL, f"cannot open the device: {exc}", "check nvidia-smi; another process may hold it")
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    from snarkd.gpu.stream import largest_power

    largest = {c: largest_power(c, dev.memory.budget) for c in ("bn254", "bls12_381")}
    data = {"name": gpu, "memory_total": total, "memory_free": free, "compute_capability": dev.compute_capability,
            "budget": dev.memory.budget, "largest_circuit": largest}
    head = (f"{gpu}, {_size(free)} free of {_size(total)}, sm_{dev.compute_capability}, budget {_size(dev.memory.budget)}, "
            f"largest circuit 2^{largest['bn254']['power']} BN254 / 2^{largest['bls12_381']['power']} BLS12-381 "
            f"(bases streamed when they do not fit)")
    built = gmodule.prebuilt("bn254", dev.compute_capability, dev.cubin_dir)
    data["kernels"] = str(built) if built is not None else "nvrtc"
    t0 = time.perf_counter()
    try:
        dev.module("bn254")
    except Exception as exc:  # noqa: BLE001
        how = f"the prebuilt kernels {built.name} do not load" if built else "the kernels do not compile with NVRTC"
        return Check(name, FAIL, f"{head}; {how}: {exc}",
                     "install CuPy's NVRTC (the nvidia-cuda-nvrtc wheel for CUDA 13), or set [gpus] cubin_dir to "
                     "prebuilt kernels (python -m snarkd.gpu.module build DIR)", data)
    data["compile_ms"] = (time.perf_counter() - t0) * 1000
    kernels = f"kernels {built.name}" if built else "NVRTC compile"
    nat = _core.bn254
    rng = random.Random(index)
    base = np.frombuffer(g1_generator_bytes(BN254), dtype="<u8").copy()

    def fr(n: int) -> np.ndarray:
        raw = b"".join(rng.randrange(BN254.r).to_bytes(32, "little") for _ in range(n))
        return np.frombuffer(raw, dtype="<u8").reshape(n, 4).copy()

    try:
        points = np.ascontiguousarray(nat.g1_mul(base, fr(MSM_POINTS)).reshape(MSM_POINTS, -1))
        scalars = fr(MSM_POINTS)
        want = np.asarray(nat.msm_g1(points, scalars, 0)).reshape(-1)
        t0 = time.perf_counter()
        with dev.memory.guard("the doctor's MSM"):
            got = dev.msm("bn254", False, cupy.asarray(points.view(np.uint32).reshape(-1)),
                          cupy.asarray(scalars.view(np.uint32).reshape(-1)), MSM_POINTS, nat)
        data["msm_ms"] = (time.perf_counter() - t0) * 1000
    except Exception as exc:  # noqa: BLE001
        return Check(name, FAIL, f"{head}; the test MSM failed to run: {exc}", "see the error; check nvidia-smi", data)
    if not np.array_equal(np.asarray(got).reshape(-1), want):
        return Check(name, FAIL, f"{head}; the test MSM ({MSM_POINTS} points) differs from the CPU core's",
                     "do not prove on this device: report it with `snarkd doctor --json`", data)
    return Check(name, OK, f"{head}; {kernels} {data['compile_ms']:.0f} ms; MSM of {MSM_POINTS} points "
                           f"matches the CPU", data=data)


# --------------------------------------------------------------------------- the config


def load_config(path: str | None) -> tuple[Config | None, Check]:
    try:
        cfg = Config.load(config_path(path))
    except SnarkdError as exc:
        return None, Check("config", FAIL, str(exc), "fix the named key (every key: examples/snarkd.toml, or "
                                                      "`snarkd config show` on a good file)")
    env = f"; from the environment: {', '.join(cfg.overrides)}" if cfg.overrides else ""
    return cfg, Check("config", OK, f"{cfg.source}, fingerprint {cfg.fingerprint}{env}",
                      data={"source": cfg.source, "fingerprint": cfg.fingerprint, "effective": cfg.effective(),
                            "overrides": list(cfg.overrides)})


def _running_pid(cfg: Config) -> int | None:
    """The pid of the snarkd that holds this config's pid file, if one runs."""
    pf = cfg.daemon.pid_file
    if not lock_is_held(pf):
        return None
    info = read_pid_file(pf)
    return info.pid if info else None


def check_address(cfg: Config, what: str, listen) -> Check:
    name = what
    busy = check_free(listen)
    if not busy:
        return Check(name, OK, f"{listen} is free")
    pid = _running_pid(cfg)
    if pid is not None and f"pid {pid} " in busy + " ":
        return Check(name, OK, f"{listen} is served by the running snarkd (pid {pid})", data={"pid": pid})
    return Check(name, FAIL, busy, f"stop that process, or choose another [daemon] {what}")


def check_writable(name: str, path: str) -> Check:
    p = Path(path)
    d = p.parent
    while not d.exists() and d.parent != d:
        d = d.parent
    if p.exists():
        if not os.access(p, os.W_OK):
            return Check(name, FAIL, f"{p} is not writable by uid {os.getuid()}", f"chown or chmod {p}")
        return Check(name, OK, f"{p} (exists, writable)")
    if not os.access(d, os.W_OK | os.X_OK):
        return Check(name, FAIL, f"{p}: directory {d} is not writable by uid {os.getuid()}",
                     f"create {p.parent} for the daemon's user, or set [daemon] {name} elsewhere")
    return Check(name, OK, f"{p} (will be created)")


UNVERIFIED = ("[pipeline] self_verify = false: proofs of jobs that do not ask for batch_verify are returned "
              "unverified (a bad witness then gives a proof snarkjs rejects, with success)")


def check_self_verify(cfg: Config) -> Check:
    if cfg.pipeline.self_verify:
        return Check("self_verify", OK, "every proof is verified before it is returned")
    return Check("self_verify", WARN, UNVERIFIED,
                 "set [pipeline] self_verify = true (about 2 ms a proof), or have every client set batch_verify")


def check_param_cache(cfg: Config) -> Check:
    d = Path(cfg.keys.param_cache)
    if not os.access(d, os.R_OK | os.X_OK):
        return Check("param_cache", FAIL, f"{d} cannot be listed by uid {os.getuid()}", f"chmod u+rx {d}")
    mode = d.stat().st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        return Check("param_cache", WARN, f"{d} is writable by every user: anyone here can replace a key",
                     f"chmod o-w {d}")
    return Check("param_cache", OK, f"{d} (mode {stat.filemode(mode)})")


def check_key(key_id: str, path: str) -> Check:
    name = f"key {key_id}"
    try:
        with open(path, "rb") as fh:
            fh.read(1)
        t0 = time.perf_counter()
        z = read_zkey(path)
    except OSError as exc:
        return Check(name, FAIL, f"{path}: cannot read: {exc.strerror or exc}",
                     f"make {path} readable by the daemon's user (uid {os.getuid()})")
    except SnarkdError as exc:
        return Check(name, FAIL, str(exc), "regenerate the key (snarkjs zkey, or snarkd setup), or fix "
                                           "[keys.preload]")
    try:
        ms = (time.perf_counter() - t0) * 1000
        data = {"path": path, "curve": z.curve.name, "bytes": int(z.nbytes), "domain_size": int(z.domain_size),
                "n_vars": int(z.n_vars)}
        return Check(name, OK, f"{path}: {z.curve.name}, domain 2^{z.domain_power}, {_size(int(z.nbytes))}, "
                               f"read in {ms:.0f} ms", data=data)
    finally:
        z.close()


def check_key_budget(cfg: Config, keys: list[Check]) -> Check | None:
    k = cfg.keys
    if not (k.max_resident or k.host_budget):
        return None
    sizes = [c.data["bytes"] for c in keys if c.level == OK]
    over = (k.max_resident and len(sizes) > k.max_resident) or (k.host_budget and sum(sizes) > k.host_budget)
    detail = (f"max_resident {k.max_resident or 'off'}, host_budget {_size(k.host_budget) if k.host_budget else 'off'}; "
              f"{len(sizes)} preload key(s), {_size(sum(sizes))}")
    if over:
        return Check("key budget", WARN, detail + ": some preloaded keys are evicted at start and reload on first use",
                     "raise [keys] max_resident / host_budget, or preload fewer keys")
    return Check("key budget", OK, detail)


def check_wasm_cache(cfg: Config) -> Check:
    wc = cfg.keys.wasm_cache
    if wc == "off":
        return Check("wasm_cache", OK, "off (circuits compile on every load)")
    return check_writable("wasm_cache", str(Path(wc) / ".probe")) if not Path(wc).is_dir() else (
        Check("wasm_cache", OK, f"{wc} (writable)") if os.access(wc, os.W_OK | os.X_OK)
        else Check("wasm_cache", WARN, f"{wc} is not writable: circuits compile on every load", f"chmod u+w {wc}"))


# --------------------------------------------------------------------------- all of them


def run(path: str | None, ifma: str | None = None) -> list[Check]:
    checks = [check_native(ifma)]
    cfg, c = load_config(path)
    checks.append(check_host(cfg))
    checks += check_cupy(cfg)
    checks.append(c)
    if cfg is None:
        return checks
    checks.append(check_address(cfg, "listen", cfg.daemon.listen))
    if cfg.daemon.status_listen is not None:
        checks.append(check_address(cfg, "status_listen", cfg.daemon.status_listen))
    checks.append(check_writable("pid_file", cfg.daemon.pid_file))
    checks.append(check_writable("log_file", cfg.daemon.log_file))
    checks.append(check_param_cache(cfg))
    checks.append(check_self_verify(cfg))
    checks.append(check_wasm_cache(cfg))
    keys = [check_key(kid, kpath) for kid, kpath in cfg.keys.preload.items()]
    checks += keys
    budget = check_key_budget(cfg, keys)
    if budget is not None:
        checks.append(budget)
    return checks


def failed(checks: list[Check]) -> bool:
    return any(c.level == FAIL for c in checks)


def as_json(checks: list[Check]) -> dict:
    return {"ok": not failed(checks), "checks": [asdict(c) for c in checks]}


def format_report(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.level:<4}  {c.name:<{width}}  {c.detail}")
        if c.fix and c.level != OK:
            lines.append(f"{'':<4}  {'':<{width}}  fix: {c.fix}")
    n = {lvl: sum(c.level == lvl for c in checks) for lvl in (OK, WARN, FAIL)}
    lines.append(f"{n[OK]} ok, {n[WARN]} warning(s), {n[FAIL]} failure(s)")
    return "\n".join(lines)
