"""A variant's speed-up over rounds as one statistic: the geometric mean of the paired round ratios
(baseline step / variant step of the same round), with the 90% t interval of the log ratios that is
centred on it, and what that interval decides.

One statistic, so the headline lies at the centre of its own interval (a median beside a t interval
can fall far from it), and so that it equals the ratio of the geometric-mean step times over the
same rounds: the table's step column and its speed-up agree. An interval whose ends lie more than
MAX_SPREAD apart (two rounds that disagree give one from 0.00x to 10708x) decides nothing: it is
inconclusive, and `too_wide` says its ends are not worth printing. Pure arithmetic."""

import math
import statistics
from typing import NamedTuple, Optional

from gpuprof.stats import noise
#: An interval whose high end is more than this many times its low end is too wide to state.
MAX_SPREAD = 10.0


class Speedup(NamedTuple):
    centre: Optional[float]        # the geometric mean of the ratios (None: no ratio)
    low: Optional[float]           # the 90% interval (None: fewer than two ratios)
    high: Optional[float]
    conclusion: Optional[str]      # faster, slower, same, inconclusive; None without a ratio
    too_wide: bool                 # an interval so wide that its ends are shown as "not decided"


def geometric_mean(values) -> Optional[float]:
    """exp(mean(log v)) of the positive values, or None when there are none."""
    logs = [math.log(v) for v in values if v and v > 0]
    return math.exp(statistics.fmean(logs)) if logs else None


def judge(ratios) -> Speedup:
    """The speed-up the paired round ratios give, its interval, and what it decides."""
    centre, low, high = noise.interval(ratios)
    if centre is None:
        return Speedup(None, None, None, None, False)
    if low is None:
        return Speedup(centre, None, None, noise.conclusion(None, None), False)
    if too_wide(low, high):
        return Speedup(centre, low, high, "inconclusive", True)
    return Speedup(centre, low, high, noise.conclusion(low, high), False)


def too_wide(low, high) -> bool:
    """An interval that spans more than a factor of MAX_SPREAD: after few rounds that disagree, its
    low end nears 0 or its high end is enormous, and neither says anything."""
    if low is None or high is None:
        return False
    return low <= 0 or high / low > MAX_SPREAD
