"""The bench client (`snarkd bench`): load a daemon with c jobs, j in flight; report and timeline.

    runner.py    run_bench(addr, key, witness=... | inputs=..., count, inflight, partitions) -> run dict
    report.py    summarize / format_report: throughput, latency, phase medians, busy fraction, daemon facts
    timeline.py  draw(run, "timeline.png"): phases per worker over time
"""

from snarkd.bench.report import format_report, summarize
from snarkd.bench.runner import run_bench

__all__ = ["run_bench", "summarize", "format_report"]
