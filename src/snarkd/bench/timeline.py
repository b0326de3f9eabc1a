"""The timeline PNG: each partition's phases per worker over time, so device idle gaps show at a glance.

One row per worker (synthesis, device, finalize), plus one "busy" row per device
(the union of its device spans). Stage spans are drawn pale, the phases inside
them (witness, spmv, ntt, msm_*, verify, ...) in colour on top.
"""

from __future__ import annotations

import re

from snarkd.bench.report import device_of, union_seconds
from snarkd.prover.timing import PHASES, STAGES

# the work phases inside a stage (not waits, totals or one-shot steps), coloured in pipeline order
PALETTE = ("#8c564b", "#c49c94", "#e377c2", "#7f7f7f", "#1f77b4", "#aec7e8", "#2ca02c", "#98df8a", "#17becf",
           "#9edae5", "#ff7f0e", "#ffbb78", "#d62728", "#bcbd22", "#9467bd")
WORK_PHASES = [p for p in PHASES if p not in (*STAGES, "load", "write", "total", "queue_wait")
               and not p.endswith(("_queue", "_wait"))]
PHASE_COLORS = dict(zip(WORK_PHASES, PALETTE))
STAGE_COLORS = dict(zip(STAGES, ("#f2e6f0", "#dde8f5", "#fdebd8")))
STAGE_RANK = {"synth": 0, "final": 2}


def _row_key(worker: str):
    kind = worker.split("-", 1)[0]
    rank = STAGE_RANK.get(kind, 1)
    nums = [int(x) for x in re.findall(r"\d+", worker)]
    return (rank, worker.split("/")[0] if rank == 1 else "", nums, worker)


PLOT_EXTRA = "pip install 'snarkd[plot]'"


def missing() -> str:
    """Why a timeline cannot be drawn here ("" when it can): matplotlib is the `plot` extra, not in the
    base install."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return f"--timeline draws with matplotlib, which the base install leaves out: {PLOT_EXTRA}"
    return ""


def draw(run: dict, path: str, title: str | None = None) -> str:
    import matplotlib  # lazy: heavy, and only the --timeline option draws

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t0, t1 = run["t_start"], run["t_end"]
    spans = [s for j in run["jobs"] if j["state"] == "COMPLETED" for p in j.get("partitions", [])
             for s in p.get("spans", [])]
    workers = sorted({s["worker"] for s in spans}, key=_row_key)
    devices = sorted({device_of(w) for w in workers if _row_key(w)[0] == 1})
    rows = workers + [f"{d} busy" for d in devices]
    y = {w: i for i, w in enumerate(rows)}
    fig_h = max(2.5, 0.45 * len(rows) + 1.6)
    fig, ax = plt.subplots(figsize=(13, fig_h), dpi=110)
    used = set()
    spans.sort(key=lambda s: s["stage"] not in STAGE_COLORS)  # stages first, their phases on top
    for s in spans:
        row = y[s["worker"]]
        x, w = s["start"] - t0, s["end"] - s["start"]
        if s["stage"] in STAGE_COLORS:
            ax.barh(row, w, left=x, height=0.8, color=STAGE_COLORS[s["stage"]], edgecolor="#999999", linewidth=0.4)
        else:
            color = PHASE_COLORS.get(s["stage"], "#7f7f7f")
            used.add(s["stage"])
            ax.barh(row, max(w, 1e-4), left=x, height=0.5, color=color, linewidth=0)
    busy = run.get("summary", {}).get("device_busy_fraction", {})
    for d in devices:
        iv = sorted((s["start"], s["end"]) for s in spans if s["stage"] == "device" and device_of(s["worker"]) == d)
        for a, b in iv:
            ax.barh(y[f"{d} busy"], b - a, left=a - t0, height=0.8, color="#333333", linewidth=0)
        frac = busy.get(d, union_seconds(iv, t0, t1) / max(1e-9, t1 - t0))
        ax.text(t1 - t0, y[f"{d} busy"], f"  {frac:.0%}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, (t1 - t0) * 1.06)
    ax.set_xlabel("seconds since the bench started")
    s = run.get("summary", {})
    ax.set_title(title or (f"snarkd bench: {run['key']} c={run['count']} j={run['inflight']} "
                           f"P={run['partitions']}  —  "
                           + (f"{s['s_per_proof']:.3f} s/proof" if s.get("s_per_proof") else "")), fontsize=10)
    order = [k for k in PHASE_COLORS if k in used]
    handles = [Patch(color=STAGE_COLORS[k], label=k) for k in STAGE_COLORS]
    handles += [Patch(color=PHASE_COLORS[k], label=k) for k in order]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18 if len(rows) < 6 else -0.1),
              ncol=min(8, len(handles)), fontsize=7, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
