"""Small number formatters shared by the renderers."""

import os
from typing import Mapping

from gpuprof.advise.wording import range_words
from gpuprof.judge.verdict import bottlenecks
from gpuprof.record.report_format import Report


def other_interpreter(report: Report):
    """"ran under X, not gpuprof's own interpreter (Y)" when the program ran in another environment
    than gpuprof's, else None: a user who called gpuprof from a venv without activating it sees
    which python ran the program."""
    interpreter = report.get("interpreter") or {}
    if not interpreter.get("path") or interpreter.get("same_environment", True):
        return None
    return f"ran under {interpreter['path']}, not gpuprof's own interpreter ({interpreter.get('gpuprof')})"


def pct(value, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value * 100:.{digits}f}%"


def seconds(value) -> str:
    if value is None:
        return "n/a"
    if value == 0:
        return "0 s"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    if value < 120:
        return f"{value:.2f} s"
    return f"{value / 60:.1f} min"


def size(value) -> str:
    if value is None:
        return "n/a"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000.0
    return f"{value:.1f} TB"


def rate(value_mb_s) -> str:
    return "n/a" if value_mb_s is None else f"{value_mb_s:.1f} MB/s"


def producing_cpu(ratio, cores) -> str:
    """The producers' CPU over the time they spent making batches, as a share of one core (`99%`),
    or above one core in cores of the job's (`1.8 of 2 cores`): never more than the job's cores,
    whatever the clocks' granularity made of short batches."""
    if ratio is None:
        return "n/a"
    if ratio <= 1.0 or not cores:
        return pct(min(ratio, 1.0) if not cores else ratio)
    return f"{min(ratio, cores):.1f} of {cores} cores"


def workers_words(loader: dict) -> str:
    """How many workers made batches: per epoch, with the epochs (`2 workers (2 epochs)`); workers
    started again each epoch are the same workers, not more of them."""
    per_epoch = loader.get("workers_per_epoch")
    if per_epoch is None:
        per_epoch = loader.get("workers_seen") or 0
    epochs = loader.get("epochs") or 0
    return plural(per_epoch, "worker") + (f" ({plural(epochs, 'epoch')})" if epochs > 1 else "")


def plural(count, word: str, words: str = None) -> str:
    """`1 process`, `2 processes`."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def gain(item: Mapping) -> str:
    """An advice item's gain: its estimate as a range (`est. 1.20–1.60x`) and, once `gpuprof try`
    measured it, the measurement beside it; for a memory fix the memory it frees."""
    measured = item.get("measured")
    if measured and measured.get("speedup") is not None:
        estimate = f"est. {range_words(item)}, " if item.get("estimated_speedup") is not None else ""
        return f"{estimate}measured {measured['speedup']:.2f}x"
    if item.get("estimated_speedup") is not None:
        return f"est. {range_words(item)}"
    if item.get("prior") is not None:
        from gpuprof.advise import fixes
        fix = fixes.get(item.get("id"))
        return f"not estimated: gpuprof try --fix {item['id']}" if fix is not None and fix.is_setting \
            else "not estimated"
    if item.get("frees_bytes"):
        return f"frees about {size(item['frees_bytes'])}"
    addresses = item.get("addresses") or []
    if bottlenecks.MEMORY_SHM.id in addresses:
        return "lets the run finish"
    return "frees memory" if bottlenecks.MEMORY_OOM.id in addresses else "gain not estimated"


def gain_tone(item: Mapping) -> str:
    """How a gain reads: "loss" for a fix `gpuprof try` measured slower, "same" for one it measured
    no faster or below 1.0x within its noise, "gain" otherwise; every renderer colours it by this."""
    measured = item.get("measured") or {}
    if measured.get("conclusion") == "slower":
        return "loss"
    if measured.get("conclusion") == "same" or (measured.get("speedup") is not None and measured["speedup"] < 1.0):
        return "same"
    return "gain"


def scaled(values, factor: float) -> list:
    """A series in the unit a picture shows (a missing value stays missing)."""
    return [v * factor if v is not None else None for v in values]


def command_line(report: Report) -> str:
    """The command as the user would type it: the interpreter by its name, not its full path."""
    argv = [str(a) for a in report.get("command") or []]
    if argv and os.path.isabs(argv[0]):
        argv[0] = os.path.basename(argv[0])
    return " ".join(argv)


def spread_text(steps: Mapping) -> str:
    """`, p90 X, p99 Y, slowest Z` of the measured steps, where the record has them (a median and a
    mean alone hide periodic slow steps)."""
    if steps.get("p90_step_s") is None:
        return ""
    return (f", p90 {seconds(steps['p90_step_s'])}, p99 {seconds(steps.get('p99_step_s'))}, "
            f"slowest {seconds(steps.get('max_step_s'))}")
