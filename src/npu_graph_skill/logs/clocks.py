"""How far each node's clock is off, from events that every rank logs at nearly the same moment.

Two kinds of event are logged together by the ranks of a job, whatever node they run on:

* the end of a communicator init — HCCL's `[status:init] ... hcom init by file success` record (formats.md §2.6): all
  ranks of a group leave the init handshake together (clock hint `init:<group>`);
* collective timeouts: when one rank dies, every other rank's HCCL socket / notify wait or stream synchronisation times
  out after the same timeout (formats.md §2.6 HCCL lines, 107020; the consequence groups of the report,
  `timeout:<signature>`), within a fraction of a second.

For each node and event, the median time over its ranks is that node's reading of the event and half the spread of
its ranks how sharply it fires. A node's offset from a node already placed is the median, over the events they share,
of the difference of their readings; its uncertainty is the largest disagreement of one event with that median plus
the spreads of both nodes, plus the uncertainty of the node it was placed from. Starting from the reference — the node
sharing most events, or the nodes whose offset the user gave (`--clock-offset`) — the node that can be placed most
precisely is placed next, from the placed node that gives it the smallest uncertainty. An offset within its own
uncertainty is not applied: the clocks agree as far as the events can tell.
"""
from __future__ import annotations

import re
import statistics
from typing import Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.logs.collect import Collected
from npu_graph_skill.logs.model import ClockOffset

MIN_UNCERTAINTY = 0.001  # s: plog prints µs, TORCH_NPU_LOGS G1/G2 ms; below a millisecond nothing is resolved
_OFFSET = re.compile(r"^([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*(ms|s)?$")


def parse_offsets(items: List[str]) -> Dict[str, float]:
    """`node07=+1.8s`, `node03=-250ms`, `node05=2` (seconds) → {node: seconds its clock is ahead}."""
    out: Dict[str, float] = {}
    for item in items:
        node, sep, value = item.partition("=")
        match = _OFFSET.match(value.strip())
        if not sep or not node.strip() or not match:
            raise UserError(f"--clock-offset {item!r}: expected NODE=SECONDS, e.g. node07=+1.8s or node03=-250ms "
                            f"(how far that node's clock is ahead)")
        seconds = float(match.group(1)) / (1000.0 if match.group(2) == "ms" else 1.0)
        out[node.strip()] = seconds
    return out


def readings(part: Collected) -> Dict[str, Tuple[float, float, int]]:
    """event key → (median time over the node's ranks, half their spread, ranks) for the events this node logged."""
    times: Dict[str, List[float]] = {}
    for key, ranks in part.hints.items():
        values = [ts for ts in ranks.values() if ts is not None]
        if values:
            times[key] = values
    for acc in part.groups:
        if acc.kind == "error" and acc.role == "consequence":
            values = [entry[0] for entry in acc.per_rank.values() if entry[0] is not None]
            if values:
                times["timeout:" + acc.signature] = values
    return {key: (statistics.median(v), (max(v) - min(v)) / 2.0, len(v)) for key, v in times.items()}


def estimate(parts: List[Collected], given: Optional[Dict[str, float]] = None) -> List[ClockOffset]:
    """One ClockOffset per part, in part order."""
    given = dict(given or {})
    nodes = [p.node for p in parts]
    unknown = sorted(set(given) - set(nodes))
    if unknown:
        raise UserError(f"--clock-offset {unknown[0]}: no summary of that node (nodes: {', '.join(nodes)})")
    seen = {node: readings(part) for node, part in zip(nodes, parts)}
    placed: Dict[str, Tuple[float, float]] = {}  # node → (offset, uncertainty)
    result: Dict[str, ClockOffset] = {}
    for node in nodes:
        if node in given:
            placed[node] = (given[node], 0.0)
            result[node] = ClockOffset(node=node, offset_s=given[node], uncertainty_s=0.0, method="given",
                                       note="offset given with --clock-offset")
    if not placed and nodes:
        shared = {n: sum(1 for k in seen[n] if any(k in seen[m] for m in nodes if m != n)) for n in nodes}
        reference = max(nodes, key=lambda n: (shared[n], -nodes.index(n)))
        placed[reference] = (0.0, 0.0)
        result[reference] = ClockOffset(node=reference, offset_s=0.0, uncertainty_s=0.0, method="reference",
                                        events=shared[reference], note="the other nodes' clocks are compared with this one")
    while True:  # place the node that can be placed most precisely, from the placed node it is closest to
        best = None
        for node in nodes:
            if node in placed:
                continue
            for m in placed:
                keys = [k for k in seen[node] if k in seen[m]]
                if not keys:
                    continue
                deltas = [(seen[node][k][0] - (seen[m][k][0] - placed[m][0]), seen[node][k][1] + seen[m][k][1])
                          for k in keys]
                value = statistics.median(d for d, _ in deltas)
                spread = max(MIN_UNCERTAINTY, max(abs(d - value) + s for d, s in deltas) + placed[m][1])
                if best is None or (spread, -len(keys)) < (best[2], -best[3]):
                    best = (node, value, spread, len(keys))
        if best is None:
            break
        node, value, spread, events = best
        if abs(value) <= spread:
            placed[node] = (0.0, spread)
            result[node] = ClockOffset(node=node, offset_s=0.0, uncertainty_s=round(spread, 6), method="agrees",
                                       estimate_s=round(value, 6), events=events,
                                       note=f"agrees with the reference within {spread:.3f} s ({events} shared events)")
        else:
            placed[node] = (value, spread)
            result[node] = ClockOffset(node=node, offset_s=round(value, 6), uncertainty_s=round(spread, 6),
                                       method="estimated", estimate_s=round(value, 6), events=events,
                                       note=f"clock {abs(value):.3f} s {'ahead' if value > 0 else 'behind'}, "
                                            f"± {spread:.3f} s, from {events} shared event{'s' if events != 1 else ''}")
    for node in nodes:
        if node not in result:
            result[node] = ClockOffset(node=node, offset_s=0.0, uncertainty_s=None, method="unknown",
                                       note="shares no event with the other nodes: its clock could not be checked, "
                                            "its times are taken as printed (give --clock-offset)")
    return [result[n] for n in nodes]
