"""The daemon's peak RSS is its own, not the peak of the process that spawned it."""

from __future__ import annotations

import subprocess
import sys

from clirun import env


def test_peak_rss_is_not_inherited_from_a_bigger_parent():
    big = bytearray(256 << 20)
    for i in range(0, len(big), 4096):  # touch every page: the parent's RSS is now > 256 MiB
        big[i] = 1
    code = ("import resource; from snarkd.daemon.status import peak_rss; "
            "print(peak_rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert out.returncode == 0, out.stderr
    own, ru_maxrss = map(int, out.stdout.split())
    assert own < 200 << 20, own  # the child (python + snarkd imports) is far below the parent's 256 MiB
    assert ru_maxrss > 256 << 20  # what getrusage says: the parent's peak, carried over exec
    del big
