"""comm: a rank of a distributed job whose step goes to collectives: waiting for slower ranks (in
DDP's gradient all-reduce, barriers), or, with balanced ranks, the all-reduce itself.

It reads the rank's place in the job, `sections["rank"]` (docs/distributed.md): its `waiting_share`
(judge/verdict/ranks.py's attribution), its `rank`, and the job's `straggler`; and DDP's own timing,
`sections["ddp_comm"]`. It replaces a step verdict that only says nothing else is the limit, or
one whose share is below the wait."""

from gpuprof.judge.verdict.bottleneck import LEADS, Bottleneck

ID = "comm"

WAITING_NOTABLE = 0.2       # a share of the step spent waiting on other ranks that is worth a verdict
#: The exposed all-reduce (DDP's own timing) as a share of the step from which balanced ranks are
#: communication-bound: more of the step than the model's compute. Below it, an all-reduce slowed by
#: a busy machine still leaves the verdict to the compute it mostly is.
COLLECTIVE_BOUND = 0.5
WAITING_CONFIDENCE = 0.7        # a wait on other ranks, as judge/verdict/ranks.py attributes it
COLLECTIVE_CONFIDENCE = 0.75    # the exposed all-reduce, from DDP's own timing


def leads(sections: dict, before: dict):
    """The rank's comm verdict (the step verdict's other keys kept), or None."""
    rank = sections.get("rank")
    if not rank:
        return None
    from gpuprof.judge.verdict.bottlenecks import says_nothing_else
    own = before.get("bottleneck")
    waiting = rank.get("waiting_share") or 0.0
    straggler = rank.get("straggler")
    if waiting >= WAITING_NOTABLE and (straggler is None or rank.get("rank") != straggler["rank"]) \
            and (says_nothing_else(own) or (before.get("share") or 0.0) < waiting):
        return dict(before, **waiting_verdict(waiting, straggler))
    inside = ((sections.get("ddp_comm") or {}).get("exposed_comm_share")) or 0.0
    if inside >= COLLECTIVE_BOUND and says_nothing_else(own):
        return dict(before, **collective_verdict(inside))
    return None


def waiting_verdict(share: float, straggler: dict) -> dict:
    """The verdict of a rank that mostly waits for another one (in DDP's all-reduce, a barrier, ...)."""
    on = f"rank {straggler['rank']}" if straggler else "the other ranks"
    reason = f"{share:.0%} of each step waits for {on} in collectives (DDP's gradient all-reduce, barriers)"
    return {"bottleneck": ID, "share": share, "confidence": WAITING_CONFIDENCE,
            "reason": reason, "summary": f"Waiting on {on}: {reason}."}


def collective_verdict(share: float) -> dict:
    """The verdict of a rank whose step is mostly DDP's gradient all-reduce itself (balanced ranks:
    none waits for another, yet the collective is the step): communication, from DDP's own timing."""
    reason = (f"{share:.0%} of each step is DDP's gradient all-reduce that the backward pass does not hide "
              "(DDP's own timing; the ranks are balanced, so this is the collective itself, not a wait for a "
              "slower rank)")
    return {"bottleneck": ID, "share": share, "confidence": COLLECTIVE_CONFIDENCE, "reason": reason,
            "summary": f"Communication-bound: {reason}."}


BOTTLENECK = Bottleneck(id=ID, label="Communication-bound", tier=LEADS, leads=leads)
