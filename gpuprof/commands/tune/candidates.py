"""Combinations one setting away from the best so far: the coordinate-wise candidates of the search.
A combination is a dict of settings relative to the program as it is ({} is the program unchanged),
kept normalised (a value the program already has is left out, and with no workers the settings that
need them are dropped, as the probes drop them), so two ways of writing one combination are one.
Pure."""

from gpuprof.record import changes

WORKER_DEPENDENT = ("prefetch_factor", "persistent_workers")
UNCHANGED_KEY = ()


def normalise(combination: dict, facts) -> dict:
    out = {k: v for k, v in combination.items() if v != facts.current(k)}
    workers = out.get("num_workers", facts.current("num_workers"))
    if not workers:
        for key in WORKER_DEPENDENT:
            out.pop(key, None)
    return dict(sorted(out.items()))


def key_of(combination: dict) -> tuple:
    return tuple(sorted(combination.items()))


def label_of(combination: dict) -> str:
    return changes.label(combination) if combination else "as it is"


def effective(combination: dict, facts, key: str):
    """The value `key` takes in the program with `combination` applied."""
    return combination[key] if key in combination else facts.current(key)


def worker_counts(cores: int, now: int, wide: bool) -> list:
    """0, 1 and powers of two up to the cores, and the cores (`wide`: the first search of an input-
    bound program); else the ladder's neighbours of `now` and the midpoints between them and it."""
    ladder = sorted({0, 1, cores} | {2 ** p for p in range(1, 12) if 2 ** p < cores})
    if wide:
        return [w for w in ladder if w != now]
    below = [w for w in ladder if w < now]
    above = [w for w in ladder if w > now]
    picks = set()
    if below:
        picks |= {below[-1], (below[-1] + now) // 2}
    if above:
        picks |= {above[0], (above[0] + now + 1) // 2}
    return sorted(w for w in picks if w != now and 0 <= w <= cores)


def thread_counts(facts, workers: int, now: int) -> list:
    """One thread, the cores the workers leave, and torch's own default (the program's today)."""
    return sorted({1, max(1, facts.cores - workers), facts.threads} - {now})


def around(best: dict, facts, searched: frozenset, wide: bool = False) -> list:
    """The combinations one setting away from `best`, normalised, without `best` and the program as
    it is (measured every round anyway)."""
    workers = effective(best, facts, "num_workers")
    raw = []
    threads = effective(best, facts, "torch_threads")
    if "num_workers" in searched:
        for count in worker_counts(facts.cores, workers, wide):
            raw.append(dict(best, num_workers=count))
            if "torch_threads" in searched and count + threads > facts.cores:
                # more workers beside as many threads as cores oversubscribe the CPU: also try them
                # with the threads the workers leave, or the search could never take both steps
                raw.append(dict(best, num_workers=count, torch_threads=max(1, facts.cores - count)))
    if "torch_threads" in searched:
        now = threads
        raw += [dict(best, torch_threads=t) for t in thread_counts(facts, workers, now)]
    if workers and "prefetch_factor" in searched and effective(best, facts, "prefetch_factor") != 4:
        raw.append(dict(best, prefetch_factor=4))
    if workers and "persistent_workers" in searched:
        raw.append(dict(best, persistent_workers=not effective(best, facts, "persistent_workers")))
    for key in ("pin_memory", "cudnn_benchmark", "allow_tf32", "autocast"):
        if key in searched:
            raw.append(dict(best, **{key: not effective(best, facts, key)}))
    if "echo" in searched:
        raw.append(dict(best, echo=2 if effective(best, facts, "echo") == 1 else 1))
    if "batch_size" in searched and facts.batch_size:
        raw.append(dict(best, batch_size=2 * effective(best, facts, "batch_size")))
    return unique([normalise(c, facts) for c in raw], exclude=(best, {}))


def merged(best: dict, other: dict, facts) -> dict:
    """`other`'s settings with `best`'s over them: two winners of one stage combined."""
    return normalise(dict(other, **best), facts)


def unique(combinations, exclude=()) -> list:
    seen = {key_of(c) for c in exclude}
    out = []
    for combination in combinations:
        key = key_of(combination)
        if key not in seen:
            seen.add(key)
            out.append(combination)
    return out
