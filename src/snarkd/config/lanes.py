"""[scheduler.lanes.NAME]: named lanes, each with its priority, its reserved share, its queue bound and its
default deadline (docs/daemon.md "Lanes").

    [scheduler.lanes.urgent]
    priority = 10        # lanes are served by this first, then by the job's own priority
    share = 0.4          # reserved share of the pipeline slots and of the memory budget (0: none)
    max_queued = 50      # unfinished work in the lane, in weight units (0: no bound)
    deadline = "2s"      # a job of this lane that gives none gets this one ("0s": none)

A request names its lane (ProveRequest.lane), or its token is bound to one ([daemon] token_file, a fourth
field `lane=NAME`); a job that names none runs in lane "default", which exists even when not configured
(priority 0, no share, no bound, no deadline). Checked here, before anything starts: every error names the
lane and the field.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from snarkd.config.kinds import EntryError, Kind
from snarkd.units import format_duration, parse_duration

DEFAULT_LANE = "default"
LANE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
FIELDS = ("priority", "share", "max_queued", "deadline")


@dataclass(frozen=True)
class Lane:
    name: str
    priority: int = 0
    share: float = 0.0  # of the pipeline slots and of the memory budget, kept free for this lane
    max_queued: float = 0.0  # weight units of unfinished work (engine/weight.py); 0: no bound
    deadline: float = 0.0  # seconds: the default deadline of its jobs; 0: none


def lanes_with_default(lanes: dict) -> dict[str, Lane]:
    """The configured lanes, with the implicit "default" lane when it is not among them."""
    out = dict(lanes or {})
    out.setdefault(DEFAULT_LANE, Lane(DEFAULT_LANE))
    return out


class LaneTable(Kind):
    """A table of lanes: [scheduler.lanes.NAME] with priority, share, max_queued, deadline."""
    type = dict[str, Lane]  # the configured lanes ("default" is added where they are used: lanes_with_default)

    doc = "table of tables: [scheduler.lanes.NAME] priority, share, max_queued, deadline"

    def parse(self, value, ctx):
        if not isinstance(value, dict):
            raise ValueError("expected tables [scheduler.lanes.NAME]")
        out, total = {}, 0.0
        for name, body in value.items():
            if not LANE_NAME.fullmatch(name):
                raise EntryError(name, "a lane name is 1-32 letters, digits, _ or -", None)
            if not isinstance(body, dict):
                raise EntryError(name, "expected a table [scheduler.lanes." + name + "]", None)
            for k in body:
                if k not in FIELDS:
                    raise EntryError(name, f"{k}: unknown field (a lane takes {', '.join(FIELDS)})", None)
            out[name] = lane = Lane(name, _int(name, body), _share(name, body), _bound(name, body), _deadline(name, body))
            total += lane.share
        if total > 1.0 + 1e-9:
            raise ValueError(f"the lanes' shares add up to {total:g}: at most 1 (" +
                             ", ".join(f"{n}.share = {lane.share:g}" for n, lane in out.items() if lane.share) + ")")
        return out

    def plain(self, value):
        return {n: {k: v for k, v in asdict(lane).items() if k != "name"} for n, lane in value.items()}

    def tables(self, value) -> dict[str, list[str]]:
        """Each lane as TOML lines (`snarkd config show`)."""
        return {n: [f"priority = {lane.priority}", f"share = {lane.share!r}", f"max_queued = {lane.max_queued!r}",
                    f'deadline = "{format_duration(lane.deadline)}"'] for n, lane in value.items()}


def _int(name, body) -> int:
    v = body.get("priority", 0)
    if isinstance(v, bool) or not isinstance(v, int) or abs(v) > 2**31 - 1:
        raise EntryError(name, f"priority: expected an integer, got {v!r}", None)
    return v


def _number(name, body, key, default=0.0) -> float:
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0:
        raise EntryError(name, f"{key}: expected a number >= 0, got {v!r}", None)
    return float(v)


def _share(name, body) -> float:
    v = _number(name, body, "share")
    if v > 1:
        raise EntryError(name, f"share: expected a fraction from 0 to 1 of the slots and memory budget, got {v!r}",
                         None)
    return v


def _bound(name, body) -> float:
    return _number(name, body, "max_queued")


def _deadline(name, body) -> float:
    v = body.get("deadline", 0)
    try:
        return parse_duration(v)
    except ValueError as exc:
        raise EntryError(name, f"deadline: {exc}", None) from None
