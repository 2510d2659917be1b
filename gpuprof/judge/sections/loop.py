"""The training loop: steps, their median time, and the share of step time spent waiting for data.

Step boundaries come from optimizer steps; without any, from backward passes (loops that update
parameters by hand); without those, from successive batches of the dominant DataLoader. The data wait is the time blocked in the DataLoader inside the measured window, or,
for hand-written batching loops, the host time between a step's end and the next first forward.
The first step (start-up) and any warm-up steps are left out of the window."""

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.stats.series import P25, P75, P90, P99, count, durations, total, weighted_median, weighted_quantile
from gpuprof.judge.sections.eval_phases import during, merged, phases_in, steps_outside
from gpuprof.judge.sections.spikes import periodic_spikes, slow_start, slow_steps_at
from gpuprof.judge.sections.loaders import pipeline_key


def _by_process(events):
    groups: dict[int | None, list[dict]] = {}
    for event in events:
        groups.setdefault(event.get("pid"), []).append(event)
    return groups


def _in_window(events, start, end):
    return [e for e in events if start < e["t"] <= end]


def _training_boundaries(step_groups, batch_groups, backward_groups, loaders):
    """(pid, the step boundaries of the process that stepped most, their source), or None: optimizer
    steps, else backward passes, else the batches of the dominant loader."""
    if step_groups or backward_groups:
        groups, source = (step_groups, "optimizer") if step_groups else (backward_groups, "backward")
        pid = max(groups, key=lambda p: sum(count(e) for e in groups[p]))
        return pid, sorted(groups[pid], key=lambda e: e["t"]), source
    if batch_groups:
        pid = max(batch_groups, key=lambda p: sum(count(e) for e in batch_groups[p]))
        line = line_of(loaders)
        dominant = dominant_loader(batch_groups[pid], line)
        boundaries = sorted((e for e in batch_groups[pid] if line(e.get("l")) == dominant), key=lambda e: e["t"])
        return pid, boundaries, "dataloader"
    return None


def _loader_waits(in_window, loaders, window, phases) -> tuple:
    """(the training loader's batches in the window, their wait, other loaders' wait, the
    evaluation entry): waits are None when no batch fell in the window."""
    if not in_window:
        return in_window, None, None, (_evaluation([], [], window, phases) if phases else None)
    # The training pipeline is the loader line that gave most batches in the window; batches
    # of other loaders (evaluation, a probe set) are time spent evaluating, never data wait.
    line = line_of(loaders)
    training = dominant_loader(in_window, line)
    # Batches taken while the model is in eval mode are evaluation's too, whatever line built
    # their loader (a Trainer builds its training and evaluation loaders at one user line).
    # A batch of a loader a training method built (get_train_dataloader) is training's even then: the
    # next training batch is fetched before the model goes back to training mode.
    trains = {loader.get("l") for loader in loaders if loader.get("role") == "train"}
    evaluating = {id(e) for e in in_window
                  if line(e.get("l")) != training or (e.get("l") not in trains and during(e["t"], phases))}
    others = [e for e in in_window if id(e) in evaluating]
    in_window = [e for e in in_window if id(e) not in evaluating]
    evaluation = _evaluation(in_window, others, window, phases)
    if evaluation and others:
        # Which loader line trained and which evaluated, for the loaders' roles.
        evaluation.update(training_loader=training, loaders=sorted({line(e.get("l")) for e in others}, key=str))
    return in_window, total(in_window, "w"), (total(others, "w") if others else None), evaluation


def _gap_waits(boundaries, phases, start):
    """(batch preparation, the host's waits for the GPU, the CPU share of the preparation) over the
    host time before each training step's first forward, or None without such gaps."""
    training = steps_outside(boundaries, phases) if phases else range(len(boundaries))
    gaps = [e for i, e in enumerate(boundaries) if i in training and e["t"] > start and "f" in e]
    if not gaps:
        return None
    data_wait, device_wait = _preparation(gaps)
    return data_wait, device_wait, _gap_cpu_share(gaps)


def _preparation(gaps):
    """(batch preparation, the host's waits for the GPU) in the gaps: those waits (a blocking copy
    that first waits for the previous step's kernels, an .item()) are not batch preparation."""
    gap = total(gaps, "f")
    device_wait = min(total(gaps, "fw"), gap)
    return gap - device_wait, device_wait


def _gap_cpu_share(gaps):
    """The CPU share of the batch preparation, over the gaps whose thread CPU was read (the step
    probe reads it only while gaps are long enough to matter), or None."""
    timed = [e for e in gaps if "fc" in e]
    preparation = _preparation(timed)[0]
    return min(total(timed, "fc") / preparation, 1.0) if timed and preparation > 0 else None


def analyse_loop(steps, batches, loaders, warmup_steps: int = 0, backward_steps=(), eval_phases=()) -> dict:
    """`steps`, `batches`: events from every process (tagged with pid); `loaders`: loader events;
    `backward_steps`: backward passes of loops without an optimizer (used only when no optimizer
    step was seen); `eval_phases`: the trained model's eval-mode phases, evaluation like the passes
    over other loaders."""
    step_groups = _by_process(steps)
    batch_groups = _by_process(batches)
    found = _training_boundaries(step_groups, batch_groups, _by_process(backward_steps), loaders)
    if found is None:
        return {"count": 0, "source": None, "data_wait_share": None, "median_step_s": None,
                "samples_per_second": None, "measured": 0}
    pid, boundaries, source = found
    total_steps = sum(count(e) for e in boundaries)
    start, end = _measured_window(boundaries, warmup_steps)
    window = max(end - start, 0.0)
    step_durations = [(d, w) for t, d, w in durations(boundaries) if t > start]
    measured_count = sum(w for _, w in step_durations)

    process_batches = batch_groups.get(pid, [])
    phases = phases_in(eval_phases, pid, start, end)
    data_wait, wait_source, gap_cpu_share, device_wait, other_wait, evaluation = _data_waits(
        boundaries, source, _in_window(process_batches, start, end), loaders, window, phases, start)
    # Evaluation passes are left out of both the data wait and the time it is a share of.
    training_window = window - (evaluation or {}).get("seconds", 0.0)
    share = min(data_wait / training_window, 1.0) if data_wait is not None and training_window > 0 else None
    backward = _backward_seconds(boundaries, start)
    batch_size = _batch_size(loaders, process_batches)
    steps_per_second = measured_count / training_window if training_window > 0 else None
    steady = _steady(step_durations)
    return {
        "count": total_steps,
        "measured": measured_count,
        "warmup": total_steps - measured_count,
        "source": source,
        "pid": pid,
        "processes": len(step_groups) or len(batch_groups),
        "window_s": window,
        "window_start": start,
        "window_end": end,
        "median_step_s": weighted_median(step_durations),
        "mean_step_s": training_window / measured_count if measured_count else None,
        **_step_spread(boundaries, step_durations, start),
        "data_wait_s": data_wait,
        "data_wait_share": share,
        "data_wait_source": wait_source,
        "data_wait_cpu_share": gap_cpu_share,
        **({"gpu_wait_before_forward_s": device_wait} if device_wait else {}),
        "backward_s": backward,
        "backward_share": min(backward / window, 1.0) if backward is not None and window > 0 else None,
        "other_loaders_wait_s": other_wait,
        "batch_size": batch_size,
        "steps_per_second": steps_per_second,
        "samples_per_second": steps_per_second * batch_size if steps_per_second and batch_size else None,
        "steady": steady,
        **({"evaluation": evaluation} if evaluation else {}),
    }


def _measured_window(boundaries: list, warmup_steps) -> tuple:
    """(start, end) of the measured steps: skipping the first and warm-up steps leaves compilation out."""
    skip = 1 + max(int(warmup_steps or 0), 0)
    items = _expand_marks(boundaries)
    if len(items) <= skip:
        skip = min(1, len(items) - 1) if len(items) > 1 else 0
    start = items[skip - 1] if skip > 0 and items else (items[0] if items else 0.0)
    end = items[-1] if items else 0.0
    return start, end


def _data_waits(boundaries, source, in_window_batches, loaders, window, phases, start) -> tuple:
    """The DataLoader's waits where its batches fill the window, else the gaps before each first forward."""
    in_window, data_wait, other_wait, evaluation = _loader_waits(in_window_batches, loaders, window, phases)
    wait_source = "dataloader" if data_wait is not None else None
    gap_cpu_share = None
    device_wait = None
    if not in_window and source in ("optimizer", "backward"):
        gap = _gap_waits(boundaries, phases, start)
        if gap is not None:
            data_wait, device_wait, gap_cpu_share = gap
            wait_source = "before-first-forward"
    return data_wait, wait_source, gap_cpu_share, device_wait, other_wait, evaluation


def _step_spread(boundaries: list, step_durations: list, start: float) -> dict:
    """How the measured steps' durations spread: slow steps, their pattern, and the tail quantiles."""
    per_step = [d for d, w in step_durations if w == 1]      # blocks of steps hold no single slow step
    timed_steps = [(t, d) for t, d, w in durations(boundaries) if t > start and w == 1]
    return {
        "periodic_slow_steps": periodic_spikes(per_step),
        "slow_start": slow_start(per_step),
        "slow_steps_at": slow_steps_at(timed_steps),
        "p90_step_s": weighted_quantile(step_durations, P90) if step_durations else None,
        "p99_step_s": weighted_quantile(step_durations, P99) if step_durations else None,
        "max_step_s": max((d for d, _ in step_durations), default=None),
    }


def _backward_seconds(boundaries: list, start: float):
    """The measured steps' timed backward passes in seconds (None where no step timed its backward)."""
    timed_backward = [b for b in boundaries if b["t"] > start and "b" in b]
    return total(timed_backward, "b") if timed_backward else None


def _evaluation(training: list, others: list, window: float, phases=()):
    """The evaluation passes inside the window: runs of batches from other loaders (a test loader
    each epoch) between two training batches, and the trained model's eval-mode phases, joined
    where they overlap. A pass over a loader lasts from the wait for its first batch to the wait for
    the next training batch (the evaluation's compute included). None without any."""
    if not (others or phases) or window <= 0:
        return None
    batches = sorted([(e["t"], e.get("w") or 0.0, True) for e in training] +
                     [(e["t"], e.get("w") or 0.0, False) for e in others])
    passes, intervals, began = 0, [], None
    for t, wait, is_training in batches:
        if not is_training and began is None:
            began, passes = t - wait, passes + 1
        elif is_training and began is not None:
            intervals.append((began, max(t - wait, began)))
            began = None
    if began is not None:
        intervals.append((began, max(batches[-1][0], began)))
    if phases:
        intervals = merged(intervals + list(phases))
        passes = len(intervals)
    seconds = min(sum(ended - began for began, ended in intervals), window)
    return {"passes": passes, "seconds": round(seconds, REPORT_DIGITS), "share": round(seconds / window, REPORT_DIGITS),
            "wait_s": round(total(others, "w"), REPORT_DIGITS)}


STEADY_SKIP = 0.1      # share of the measured steps treated as warm-up for comparisons
MEAN_DIGITS = 9        # the steady mean and its standard error, to the nanosecond (compare and the gate read them)
SQUARE_ROOT = 0.5      # as a power, a square root (of the variance of the mean: its standard error)


def _steady(step_durations) -> dict:
    """The median step time of the steady part: the measured steps less their first 10%
    (caches, allocators and JIT settle there). `steps` says how many the median rests on; the mean
    and its standard error are kept for steps that split into two groups."""
    total_weight = sum(w for _, w in step_durations)
    skip = int(total_weight * STEADY_SKIP)
    kept, seen = [], 0
    for duration, weight in step_durations:
        if seen >= skip:
            kept.append((duration, weight))
        elif seen + weight > skip:
            kept.append((duration, seen + weight - skip))
        seen += weight
    steps = sum(w for _, w in kept)
    mean, mean_se = _mean_and_error(kept, steps)
    return {"median_step_s": weighted_median(kept), "p25_step_s": weighted_quantile(kept, P25),
            "p75_step_s": weighted_quantile(kept, P75), "steps": steps, "skipped": skip,
            "mean_step_s": mean, "mean_se_s": mean_se}


def _mean_and_error(kept, steps):
    """The steady steps' mean time and the standard error of that mean: where the steps split into
    instant ones and ones that wait (prefetching workers), the median sits in one group and says
    nothing of the throughput, and the mean is what compare and the gate fall back to."""
    if steps <= 0:
        return None, None
    mean = sum(d * w for d, w in kept) / steps
    if steps < 2:
        return round(mean, MEAN_DIGITS), None
    variance = sum(w * (d - mean) ** 2 for d, w in kept) / (steps - 1)
    return round(mean, MEAN_DIGITS), round((variance / steps) ** SQUARE_ROOT, MEAN_DIGITS)


def _expand_marks(boundaries):
    """End times of every item; a block contributes its end time once per item, spread evenly."""
    marks = []
    previous = None
    for event in boundaries:
        n = count(event)
        if n == 1 or previous is None:
            marks.append(event["t"])
        else:
            step = (event["t"] - previous) / n
            marks.extend(previous + step * (i + 1) for i in range(n))
        previous = event["t"]
    return marks


def line_of(loaders):
    """Loader id -> its pipeline: the line that built it, and its role where a method named for one
    built it (loaders re-created at one line for one role are one pipeline)."""
    where = {loader.get("l"): pipeline_key(loader.get("where"), loader.get("role")) for loader in loaders}
    return lambda loader_id: where.get(loader_id) or loader_id


def dominant_loader(batches, line=lambda loader_id: loader_id):
    counts: dict[str | None, int] = {}
    for event in batches:
        key = line(event.get("l"))
        counts[key] = counts.get(key, 0) + count(event)
    return max(counts, key=lambda k: counts[k])


def _batch_size(loaders, batches):
    if not batches:
        return None
    line = line_of(loaders)
    dominant = dominant_loader(batches, line)
    for loader in loaders:
        if line(loader.get("l")) == dominant and loader.get("batch_size"):
            return loader["batch_size"]
    return None
