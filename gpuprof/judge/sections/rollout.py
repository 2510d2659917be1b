"""Collection and learning as measured phases (reinforcement learning): the rollout probe writes each
collection phase between two updates (its span, the env steps and the policy's inference in it,
and the stack samples taken in it, those converting data apart); this module clips them to the
measured window and splits the rollout into its parts.

- collection: the phases' time inside the window; learning: the rest of the window (the update's
  minibatches, their forward, backward and optimizer steps);
- env stepping and policy inference: timed by the probes in each phase (the policy's forward calls);
- the time neither timed is split by the stack samples taken outside env steps and module calls:
  drawing actions from the policy's distribution (torch.distributions, added to policy inference),
  host conversions (numpy <-> tensor, `.cpu()`, `.item()`; None, not measured, where no sample fell
  in a rollout) and the rest;
- the rest: what remains of the rollout (logging, the user's Python, advantages).

Each part is also given at its uncontended pace (`uncontended`), for a run beside other processes:
a busy machine stretches some calls far more than others (an op of torch's intra-op threads waits
for its slowest thread while another process holds a core; a single-threaded env step only runs a
little slower), so the measured shares shift towards the multi-threaded parts. The fastest
UNCONTENDED_QUANTILE of a part's calls ran with the cores the job would have alone: each timed part
is scaled by that quantile over its mean call (env stepping by the env steps', policy inference by
the policy calls'), the update by the policy calls' (the same model's ops on the same threads), the
conversions and the rest by the env steps' (single-threaded Python), and the shares are taken
again. The report's verdict reads them only where other processes held notable cores."""

from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS
from gpuprof.priors.verdicts import UNCONTENDED_QUANTILE

#: Parts of the rollout, in the order the report names them.
PARTS = ("env", "inference", "conversions", "rest")
WORDS = {"env": "env stepping", "inference": "policy inference", "conversions": "host conversions",
         "rest": "the rest of the rollout (logging, Python)"}
#: Collection phases needed in the window to speak of phases.
MIN_PHASES = 1
#: Calls of a part needed to read its uncontended pace.
MIN_PACED_CALLS = 20
#: Duration buckets per doubling in the rollout probe's histograms (gpuprof.capture.probes.rollout).
BUCKETS_PER_OCTAVE = 4
#: Half a bucket up from a bucket's lower edge on that doubling scale: its geometric middle.
BUCKET_MIDDLE = 0.5


def measured_phases(rollouts: list, pid, start: float, end: float, window: float):
    """{"basis", "count", "collection", "learning", "rollout", "parts", ...} or None.
    `rollouts`: rollout events (every process); `window`: the window's seconds less evaluation."""
    clipped = [_clipped(e, start, end) for e in rollouts if e.get("pid") == pid]
    clipped = [c for c in clipped if c is not None]
    if len(clipped) < MIN_PHASES or window <= 0:
        return None
    collection = min(sum(c["seconds"] for c in clipped), window)
    if collection <= 0:
        return None
    env = min(sum(c["env_s"] for c in clipped), collection)
    forwards = inference = min(sum(c["inf_s"] for c in clipped), collection - env)
    untimed = collection - env - forwards
    sampled = sum(c["sampled_us"] for c in clipped)
    # The samples outside env steps and module calls split the time the probes did not time.
    untimed_us = sampled - sum(c["env_us"] + c["fwd_us"] for c in clipped)
    conversions = None
    if untimed_us > 0:
        drawing = untimed * min(sum(c["dist_us"] for c in clipped) / untimed_us, 1.0)
        inference += drawing        # drawing the action from the policy's distribution
        conversions = min(untimed * sum(c["conv_us"] for c in clipped) / untimed_us, untimed - drawing)
    elif sampled > 0:
        conversions = 0.0
    rest = max(collection - env - inference - (conversions or 0.0), 0.0)
    seconds = {"env": env, "inference": inference, "conversions": conversions, "rest": rest}
    parts = {k: (round(v / window, REPORT_DIGITS) if v is not None else None) for k, v in seconds.items()}
    calls = sum(c["inf_calls"] for c in clipped)
    env_calls = sum(c["env_calls"] for c in clipped)
    pace = {"env": pace_of([c["env_hist"] for c in clipped], env / env_calls if env_calls else None),
            "inference": pace_of([c["inf_hist"] for c in clipped], forwards / calls if calls else None)}
    return {
        "basis": "measured: collection phases from the first env step after an update to the next update's forward",
        "count": len(clipped),
        "collection": {"seconds": round(collection, REPORT_DIGITS),
                       "share": round(collection / window, REPORT_DIGITS)},
        "learning": {"seconds": round(window - collection, REPORT_DIGITS),
                     "share": round(1 - collection / window, REPORT_DIGITS)},
        "rollout": {"env_share": round(env / collection, REPORT_DIGITS),
                    "other_share": round(1 - env / collection, REPORT_DIGITS)},
        "parts": parts,
        "largest": largest_part(parts),
        "inference_calls": calls,
        "inference_per_call_s": round(forwards / calls, FINE_DIGITS) if calls else None,
        "env_calls": int(round(env_calls)),
        "sampled_s": round(sampled / 1e6, 3),
        "uncontended": uncontended(seconds, window - collection, pace),
    }


def pace_of(histograms: list, mean_s):
    """The UNCONTENDED_QUANTILE of the calls' durations over their mean (at most 1), from the probe's
    histograms ([[bucket, count], ...] each); None with too few calls."""
    counts: dict = {}
    for histogram in histograms:
        for entry in histogram if isinstance(histogram, (list, tuple)) else ():
            if isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(v, (int, float)) for v in entry):
                counts[int(entry[0])] = counts.get(int(entry[0]), 0) + entry[1]
    total = sum(counts.values())
    if not mean_s or mean_s <= 0 or total < MIN_PACED_CALLS:
        return None
    reach, seen = UNCONTENDED_QUANTILE.value * total, 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= reach:
            fast = 2.0 ** ((bucket + BUCKET_MIDDLE) / BUCKETS_PER_OCTAVE)
            return round(min(fast / mean_s, 1.0), REPORT_DIGITS)
    return None


def uncontended(seconds: dict, learning: float, pace: dict):
    """The rollout's parts and the update at each one's uncontended pace, as shares of their new sum
    (see the module's note), or None where a pace is not known."""
    env_pace, model_pace = pace.get("env"), pace.get("inference")
    if env_pace is None or model_pace is None:
        return None
    paced = {"env": seconds["env"] * env_pace, "inference": seconds["inference"] * model_pace,
             "conversions": seconds["conversions"] * env_pace if seconds["conversions"] is not None else None,
             "rest": seconds["rest"] * env_pace}
    update = max(learning, 0.0) * model_pace
    total = sum(v for v in paced.values() if v is not None) + update
    if total <= 0:
        return None
    parts = {k: (round(v / total, REPORT_DIGITS) if v is not None else None) for k, v in paced.items()}
    return {"basis": f"each part at the pace of its fastest {UNCONTENDED_QUANTILE.value:.0%} of calls",
            "pace": pace, "parts": parts, "largest": largest_part(parts),
            "collection": {"share": round(1 - update / total, REPORT_DIGITS)},
            "learning": {"share": round(update / total, REPORT_DIGITS)}}


def _clipped(event: dict, start: float, end: float):
    """The part of one collection phase inside [start, end], its figures scaled to that part."""
    t0, t1 = event.get("t0"), event.get("t")
    if t0 is None or t1 is None or t1 <= t0:
        return None
    inside = min(t1, end) - max(t0, start)
    if inside <= 0:
        return None
    f = inside / (t1 - t0)
    return {"seconds": inside, "env_s": (event.get("env_s") or 0.0) * f, "inf_s": (event.get("inf_s") or 0.0) * f,
            "env_hist": event.get("env_hist") or (), "inf_hist": event.get("inf_hist") or (),
            "env_calls": (event.get("env_calls") or 0) * f, "inf_calls": int(round((event.get("inf_calls") or 0) * f)),
            **{key: (event.get(key) or 0) * f for key in ("sampled_us", "env_us", "fwd_us", "conv_us", "dist_us")}}


def largest_part(parts: dict) -> str:
    """The rollout's part that takes the most time (unmeasured parts never win)."""
    return max(PARTS, key=lambda k: parts.get(k) or 0.0)

