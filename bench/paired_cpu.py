"""Whole-process CPU time of commands run alternately (the order reversed every other round), each child's user +
system time from wait4 (microseconds, where GNU time's are 10 ms steps): the median, lower quartile and minimum of
each, and its wall median. For side-by-side start-up figures on a shared machine, where the wall time of one run says
little and a process's own CPU time says more.

    python bench/paired_cpu.py ROUNDS 'CMD A' 'CMD B' ...

Commands are split as a shell would (shlex), run with their output discarded, and with PYTHONDONTWRITEBYTECODE
removed from the environment (Python's bytecode read and written, as users run it); any failure stops the run.
"""

from __future__ import annotations

import os
import shlex
import statistics
import sys
import time


def run(argv: list[str], env: dict) -> tuple[float, float]:
    """(CPU ms, wall ms) of one child."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: output discarded, then the command
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execvpe(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    if status != 0:
        raise SystemExit(f"{shlex.join(argv)}: exit status {status}")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rounds, commands = int(sys.argv[1]), sys.argv[2:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu: dict[str, list[float]] = {c: [] for c in commands}
    wall: dict[str, list[float]] = {c: [] for c in commands}
    before = " ".join(open("/proc/loadavg").read().split()[:3])
    for k in range(rounds):
        for c in commands if k % 2 == 0 else commands[::-1]:
            u, w = run(shlex.split(c), env)
            cpu[c].append(u)
            wall[c].append(w)
    after = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"{rounds} rounds, load {before} -> {after}")
    for c in commands:
        q1 = statistics.quantiles(cpu[c], n=4)[0]
        print(f"CPU median {statistics.median(cpu[c]):6.1f} ms  lower quartile {q1:6.1f}  min {min(cpu[c]):6.1f}  "
              f"wall median {statistics.median(wall[c]):6.1f} ms  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
