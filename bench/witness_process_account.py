"""Where a one-shot `snarkd witness` process's time goes: each step of the cached path timed in fresh processes,
medians over rounds (round 34, issue 37: the whole process against circom's C++ generator).

    python bench/witness_process_account.py ROUNDS CIRCUIT.wasm INPUT.json [--src TREE/src] [--json OUT]
    python bench/witness_process_account.py --importtime ROUNDS CIRCUIT.wasm INPUT.json [--src TREE/src]

--importtime: the console script's command under `python -X importtime`, ROUNDS times: each module's self and
cumulative microseconds, medians (the modules of the slowest 30 cumulative figures, in import order).

Each round runs three children (alternated with the others' rounds, so a busy spell hits all of them):
  - `python -S -c pass` and `python -c pass` (the interpreter's start, then with site), CPU by wait4;
  - the command itself as the console script runs it (`snarkd witness --engine native --quiet ...`), CPU by wait4;
  - the command in a child that wraps the steps below with thread-CPU and wall timers and runs `snarkd.cli.main`
    as the console script would (os._exit at its end included), reporting each step's time on a pipe.
Steps timed in the wrapped child (each once per process, nested steps are inside their parent's figure):
  imports (snarkd.cli + the command module, then what _calculate imports), inputs (load_input_json), wasm read,
  wasm SHA-256, program header (program_file.read), compiled library load (its header, identity, tag, dlopen),
  the run, the .wtns write. The steps' CPU is the main thread's (time.thread_time); the run's own thread (the
  compiled library runs on a 256 MiB stack of its own) shows in the process's CPU, not in thread time, so the run
  is given in wall time as well.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

PY = sys.executable


def _child(argv: list[str], fd: int) -> None:
    """Runs in the wrapped child: time the steps, then the command."""
    t_start = time.perf_counter(), time.thread_time()
    marks: dict[str, list[float]] = {}

    def timed(owner, name, label):
        fn = getattr(owner, name)

        def wrapper(*a, **k):
            w, c = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                got = marks.setdefault(label, [0.0, 0.0])
                got[0] += (time.thread_time() - c) * 1e3
                got[1] += (time.perf_counter() - w) * 1e3

        setattr(owner, name, wrapper)

    w, c = time.perf_counter(), time.thread_time()
    import snarkd.cli
    import snarkd.cli.witness as cw

    marks["import cli + cli.witness"] = [(time.thread_time() - c) * 1e3, (time.perf_counter() - w) * 1e3]
    w, c = time.perf_counter(), time.thread_time()
    import snarkd.formats.wtns  # noqa: F401 - run_witness's first import
    import snarkd.witness as sw
    import snarkd.witness.native as nat

    marks["import wtns + witness + witness.native"] = [(time.thread_time() - c) * 1e3, (time.perf_counter() - w) * 1e3]
    import snarkd.witness.inputs as inp
    from snarkd.formats import file_trust
    from snarkd.witness import program_file

    w, c = time.perf_counter(), time.thread_time()
    import snarkd.witness.compiled as comp  # imported by the library's load otherwise: timed apart here

    marks["import witness.compiled"] = [(time.thread_time() - c) * 1e3, (time.perf_counter() - w) * 1e3]
    timed(file_trust, "tag", "HMAC tags (file_trust.tag)")
    timed(comp, "_header_deps", "library: header read (_header_deps)")
    timed(comp, "identity", "library: identity (sources' digest)")
    timed(file_trust, "read_cache", "read_cache (open, checks, read, tag)")
    timed(comp.CompiledProgram, "_load_copy", "library: dlopen of the checked bytes (_load_copy)")
    timed(comp.CompiledProgram, "run", "library: run")
    timed(nat, "_zero_pages", "the witness's buffer (_zero_pages)")
    timed(nat.NativeCalculator, "prepare", "inputs' preparation (prepare)")
    timed(nat.NativeCalculator, "__init__", "NativeCalculator() (wasm read + digest, program header)")

    timed(sw, "load_input_json", "inputs (load_input_json)")
    timed(inp, "read_wasm", "wasm read")
    timed(program_file, "read", "program header (program_file.read)")
    timed(nat.NativeCalculator, "_load_compiled", "compiled library load (import, header, tag, dlopen)")
    timed(nat.NativeCalculator, "calculate_bytes", "calculate_bytes (library load + run + inputs' preparation)")
    timed(snarkd.formats.wtns, "write_wtns", "write .wtns")
    hl = sys.modules.get("hashlib")
    if hl is not None:
        # the wasm's digest: NativeCalculator calls hashlib.sha256 once on its bytes (hashlib is imported by then)
        orig = hl.sha256

        def sha(*a, **k):
            w, c = time.perf_counter(), time.thread_time()
            try:
                return orig(*a, **k)
            finally:
                got = marks.setdefault("sha256 calls", [0.0, 0.0])
                got[0] += (time.thread_time() - c) * 1e3
                got[1] += (time.perf_counter() - w) * 1e3

        hl.sha256 = sha
    real_exit = os._exit

    def report_and_exit(code):
        marks["python until os._exit (from the child's first line)"] = [
            (time.thread_time() - t_start[1]) * 1e3, (time.perf_counter() - t_start[0]) * 1e3]
        os.write(fd, json.dumps(marks).encode())
        real_exit(code)

    os._exit = report_and_exit
    sys.argv = ["snarkd", *argv]
    snarkd.cli.main()
    raise SystemExit("the command returned instead of ending the process")


def _run(argv: list[str], env: dict) -> tuple[float, float, bytes]:
    r, wfd = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        env = {**env, "SNARKD_ACCOUNT_FD": str(wfd)}
        os.set_inheritable(wfd, True)
        os.execvpe(argv[0], argv, env)
    os.close(wfd)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    if status != 0:
        raise SystemExit(f"{argv}: exit status {status}")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall, out


def _importtime(rounds: int, argv: list[str], env: dict) -> None:
    import subprocess

    selfs: dict[str, list[int]] = {}
    cums: dict[str, list[int]] = {}
    order: list[str] = []
    for _ in range(rounds):
        err = subprocess.run([PY, "-X", "importtime", *argv], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, check=True).stderr.decode()
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, cum, name = line[len("import time:"):].split("|")
            key = name.rstrip()
            if key not in selfs:
                order.append(key)
            selfs.setdefault(key, []).append(int(own))
            cums.setdefault(key, []).append(int(cum))
    top = set(sorted(order, key=lambda k: -statistics.median(cums[k]))[:30])
    print(f"{rounds} runs of -X importtime, medians (us): self, cumulative, module")
    for key in order:
        if key in top:
            print(f"{statistics.median(selfs[key]):8.0f} {statistics.median(cums[key]):8.0f}  {key}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2:], int(os.environ["SNARKD_ACCOUNT_FD"]))
        return 0
    args = sys.argv[1:]
    importtime = "--importtime" in args
    if importtime:
        args.remove("--importtime")
    src = json_out = None
    if "--src" in args:
        i = args.index("--src")
        src = args[i + 1]
        del args[i: i + 2]
    if "--json" in args:
        i = args.index("--json")
        json_out = args[i + 1]
        del args[i: i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rounds, wasm, inputs = int(args[0]), args[1], args[2]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src:
        env["PYTHONPATH"] = src
    out = "/tmp/wit34-account.wtns"
    cmd = ["witness", "--engine", "native", "--quiet", wasm, inputs, out]
    script = os.path.join(os.path.dirname(PY), "snarkd")
    if importtime:
        print(f"load {open('/proc/loadavg').read().split()[:3]}")
        _importtime(rounds, [script, *cmd], env)
        return 0
    children = {
        "python -S -c pass": [PY, "-S", "-c", "pass"],
        "python -c pass": [PY, "-c", "pass"],
        "snarkd witness (console script)": [script, *cmd],
        "wrapped child": [PY, os.path.abspath(__file__), "--child", *cmd],
    }
    cpu = {k: [] for k in children}
    wall = {k: [] for k in children}
    steps: dict[str, list[list[float]]] = {}
    before = " ".join(open("/proc/loadavg").read().split()[:3])
    for k in range(rounds):
        for name in (list(children) if k % 2 == 0 else list(children)[::-1]):
            u, w, got = _run(children[name], env)
            cpu[name].append(u)
            wall[name].append(w)
            if got:
                for label, (c, wl) in json.loads(got).items():
                    steps.setdefault(label, []).append([c, wl])
    after = " ".join(open("/proc/loadavg").read().split()[:3])
    result = {"rounds": rounds, "load_before": before, "load_after": after, "wasm": wasm, "inputs": inputs,
              "process_cpu_ms": {k: statistics.median(v) for k, v in cpu.items()},
              "process_wall_ms": {k: statistics.median(v) for k, v in wall.items()},
              "steps_median_ms": {k: {"thread_cpu": statistics.median(c for c, _ in v),
                                      "wall": statistics.median(w for _, w in v)} for k, v in steps.items()}}
    print(f"{rounds} rounds, load {before} -> {after}")
    for k in children:
        print(f"process CPU median {result['process_cpu_ms'][k]:7.2f} ms  wall {result['process_wall_ms'][k]:7.2f}  {k}")
    for k, v in result["steps_median_ms"].items():
        print(f"  step: thread CPU {v['thread_cpu']:7.2f} ms  wall {v['wall']:7.2f}  {k}")
    if json_out:
        with open(json_out, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
