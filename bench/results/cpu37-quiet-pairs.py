#!/usr/bin/env python3
"""Wall time of two commands, alternated, counted only where the machine was otherwise idle: before each pair the
system's idle share over 0.3 s (/proc/stat) must be at least IDLE (both cores free), and during the pair the other
processes' CPU (all CPU time less the two children's, from /proc/stat and wait4) must stay under OTHERS of the
pair's wall. For a wall difference of a millisecond or two on the shared 2-vCPU VM, where paired_cpu.py's wall
medians move by tens of ms with the load.

    python cpu37-quiet-pairs.py SECONDS PAIRS 'CMD A' 'CMD B'
"""
import os, shlex, statistics, sys, time

IDLE, OTHERS = 0.90, 0.10
HZ = os.sysconf("SC_CLK_TCK")


def cpu_times():
    f = open("/proc/stat").readline().split()[1:]
    v = list(map(int, f))
    return sum(v), v[3] + v[4]  # total, idle + iowait


def run(argv):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1); os.dup2(null, 2)
        os.execvp(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    assert status == 0, argv
    return (time.perf_counter() - t0) * 1e3, ru.ru_utime + ru.ru_stime


def main():
    limit, pairs = float(sys.argv[1]), int(sys.argv[2])
    cmds = [shlex.split(c) for c in sys.argv[3:5]]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    walls = [[], []]
    tried = 0
    end = time.monotonic() + limit
    while time.monotonic() < end and len(walls[0]) < pairs:
        a0, i0 = cpu_times(); time.sleep(0.3); a1, i1 = cpu_times()
        if (i1 - i0) / max(1, a1 - a0) < IDLE:
            continue
        tried += 1
        order = (0, 1) if tried % 2 else (1, 0)
        s0, j0 = cpu_times()
        t0 = time.perf_counter()
        got, own = {}, 0.0
        for k in order:
            w, c = run(cmds[k]); got[k] = w; own += c
        wall = time.perf_counter() - t0
        s1, j1 = cpu_times()
        others = ((s1 - s0) - (j1 - j0)) / HZ - own  # all CPUs' busy time over the pair less the children's
        if others > OTHERS * wall * os.cpu_count():
            continue
        walls[0].append(got[0]); walls[1].append(got[1])
    print(f"{len(walls[0])} quiet pairs ({tried} tried) in {limit:.0f} s; pre-pair idle >= {IDLE:.0%}, others' CPU "
          f"during a pair < {OTHERS:.0%} of both cores; "
          f"load {open('/proc/loadavg').read().strip()}")
    for k in (0, 1):
        w = sorted(walls[k])
        if w:
            print(f"wall median {statistics.median(w):7.1f} ms  LQ {w[len(w)//4]:7.1f}  min {w[0]:7.1f}  {sys.argv[3+k]}")
    if walls[0]:
        d = sorted(b - a for a, b in zip(*walls))
        print(f"per-pair difference (B - A): median {statistics.median(d):+.1f} ms, quartiles {d[len(d)//4]:+.1f} / {d[3*len(d)//4]:+.1f}; "
              f"B faster in {sum(x < 0 for x in d)} of {len(d)} pairs")
        print("pairs (A, B) ms:", " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(*walls)))


main()
