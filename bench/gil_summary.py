#!/usr/bin/env python3
"""Where a daemon's threads held the GIL: a summary of py-spy's collapsed stacks (`bench/daemon_inputs.py
--gil-profile` writes them: py-spy record --gil --threads --format raw).

    python bench/gil_summary.py OUT/gil-sha256-inputs.txt [more files] [--top 12]

Per file: the samples, each kind of thread's share (numbers in thread names folded: synth-3 -> synth-N), and the
innermost snarkd frame's share (the code that held the GIL, whatever library it was inside).
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path


def summarize(path: Path, top: int) -> dict:
    threads: collections.Counter = collections.Counter()
    frames: collections.Counter = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = line.rsplit(" ", 1)
        n = int(count)
        total += n
        parts = stack.split(";")
        thread = re.sub(r"\d+", "N", parts[0].split(":", 1)[-1].strip())
        threads[thread] += n
        ours = [f for f in parts[1:] if "snarkd/" in f]
        frames[re.sub(r":\d+\)", ")", ours[-1] if ours else parts[-1])] += n
    share = lambda c: {k: round(v / total, 3) for k, v in c.most_common(top)}  # noqa: E731
    return {"file": str(path), "samples": total, "threads": share(threads), "innermost_snarkd_frames": share(frames)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    for f in a.files:
        s = summarize(f, a.top)
        print(f"{s['file']}: {s['samples']} samples")
        print("  threads: " + ", ".join(f"{k} {v:.0%}" for k, v in s["threads"].items()))
        for k, v in s["innermost_snarkd_frames"].items():
            print(f"  {v:6.1%}  {k}")


if __name__ == "__main__":
    main()
