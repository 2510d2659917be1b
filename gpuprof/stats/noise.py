"""The noise of repeated measurements, for `try` (speed-ups over rounds) and the gate (step times
over rounds): which rounds were disturbed, and how sure a ratio is. Pure arithmetic on lists.

On a small shared machine the same command's step time varies by up to +-25% between runs, and one
disturbed run (another process compiling, a page cache warming) can move a median of two. So:
a run far from the others of its series is left out when at least two others agree, and a
speed-up is an interval over rounds (a t interval of the log ratios) that must clear 1.0 before it
counts as a gain or a loss."""

import math
import statistics

#: A run this far from its series' median (relative), and beyond 3 scaled MADs, is disturbed.
DISTURBED = 0.15
MAD_SCALE = 1.4826          # MAD of a normal sample to its standard deviation
#: Two-sided 90% Student t quantiles by degrees of freedom (1..10); larger n uses T90_NORMAL.
T90 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833, 10: 1.812}
T90_NORMAL = 1.645          # the normal distribution's two-sided 90% quantile
SAME = 0.03                 # ratios within 3% of 1.0 are no measurable change
MIN_RUNS = 4                # runs needed to call one disturbed: it, and three that agree


def disturbed(values: list) -> list:
    """Indexes of the values far from the others: more than DISTURBED from the median and beyond
    3 scaled MADs of the rest, where the rest agree (all within DISTURBED of each other) and at
    least three remain. A series that is noisy throughout has no disturbed value: it is noisy; and
    of three runs, two that agree are not enough to call the third disturbed."""
    present = [(i, v) for i, v in enumerate(values) if v]
    if len(present) < MIN_RUNS:
        return []
    out = []
    for i, v in present:
        rest = [w for j, w in present if j != i]
        centre = statistics.median(rest)
        spread = MAD_SCALE * statistics.median(abs(w - centre) for w in rest)
        agree = (max(rest) - min(rest)) <= DISTURBED * centre
        if agree and abs(v - centre) > max(DISTURBED * centre, 3 * spread):
            out.append(i)
    if len(present) - len(out) < 3:
        return []
    return out


def interval(ratios: list):
    """(centre, low, high): the geometric mean of the ratios and the 90% interval from the t
    distribution of their logs, which is centred on it; (r, None, None) for a single ratio, (None,
    None, None) for none."""
    ratios = [r for r in ratios if r and r > 0]
    if not ratios:
        return None, None, None
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), None, None
    half = T90.get(len(logs) - 1, T90_NORMAL) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def conclusion(low, high) -> str:
    """What an interval says: "faster" or "slower" when it clears 1.0 (beyond SAME), "same" when it
    lies within SAME of 1.0, else "inconclusive"."""
    if low is None or high is None:
        return "inconclusive"
    if low > 1 + SAME:
        return "faster"
    if high < 1 - SAME:
        return "slower"
    if low >= 1 - SAME and high <= 1 + SAME:
        return "same"
    return "inconclusive"


def separated(a: tuple, b: tuple) -> bool:
    """Whether two (low, high) intervals do not overlap."""
    if None in a or None in b:
        return False
    return a[0] > b[1] or b[0] > a[1]
