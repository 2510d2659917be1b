"""Evaluation phases as time intervals: the trained model's eval-mode phases (probes.eval_phases)
and the passes over other DataLoaders are one evaluation wherever they overlap (a validation loop
under model.eval() is one pass, not two). A reinforcement-learning policy switched to eval mode for its
rollout is collecting, not evaluating: a phase in which the program stepped its environments is
no evaluation."""


def phases_in(events, pid, start: float, end: float) -> list:
    """(began, ended) of the training process's eval-mode phases, clipped to the window."""
    out = []
    for event in events:
        if event.get("pid") != pid or event.get("t0") is None or event.get("t") is None:
            continue
        began, ended = max(event["t0"], start), min(event["t"], end)
        if ended > began:
            out.append((began, ended))
    return out


def during(t: float, phases: list) -> bool:
    """Whether the moment t falls inside one of the phases."""
    return any(began < t <= ended for began, ended in phases)


def merged(intervals) -> list:
    """Overlapping or touching intervals joined, in time order."""
    out: list = []
    for began, ended in sorted(intervals):
        if out and began <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], ended))
        else:
            out.append((began, ended))
    return out


def steps_outside(boundaries: list, phases: list) -> set:
    """Indices (into `boundaries`, in time order) of the steps whose span, from the previous
    boundary to their own, overlaps no phase: training steps, not steps that held an evaluation."""
    kept, previous = set(), None
    for i, event in enumerate(boundaries):
        began = previous if previous is not None else event["t"]
        if not any(b < event["t"] and d > began for b, d in phases):
            kept.add(i)
        previous = event["t"]
    return kept


def outside_rollouts(events, rollouts) -> list:
    """The eval-mode phase events in which no collection phase (gpuprof.judge.sections.rollout) stepped an
    environment."""
    spans = [(r.get("pid"), r["first"], r["last"]) for r in rollouts
             if r.get("first") is not None and r.get("last") is not None and r.get("env_calls")]
    return [e for e in events if not _overlaps(e, spans)]


def _overlaps(event: dict, spans: list) -> bool:
    t0, t = event.get("t0"), event.get("t")
    return t0 is not None and t is not None and any(
        pid == event.get("pid") and began < t and ended > t0 for pid, began, ended in spans)
