"""Small number formatters shared by the renderers."""

import os

from gpuprof.analysis import bottlenecks


def other_interpreter(report: dict):
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


def plural(count, word: str, words: str = None) -> str:
    """`1 process`, `2 processes`."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def gain(item: dict) -> str:
    """An advice item's gain: `up to 1.85x` (every estimate is an upper bound), or for a memory fix
    the memory it frees."""
    measured = item.get("measured")
    if measured and measured.get("speedup") is not None:
        estimate = f"up to {item['estimated_speedup']:.2f}x, " if item.get("estimated_speedup") is not None else ""
        return f"{estimate}measured {measured['speedup']:.2f}x"
    if item.get("estimated_speedup") is not None:
        return f"up to {item['estimated_speedup']:.2f}x"
    if item.get("prior") is not None:
        return f"not estimated: gpuprof try --fix {item['id']}"
    if item.get("frees_bytes"):
        return f"frees about {size(item['frees_bytes'])}"
    addresses = item.get("addresses") or []
    if bottlenecks.MEMORY_SHM.id in addresses:
        return "lets the run finish"
    return "frees memory" if bottlenecks.MEMORY_OOM.id in addresses else "gain not estimated"


def scaled(values, factor: float) -> list:
    """A series in the unit a picture shows (a missing value stays missing)."""
    return [v * factor if v is not None else None for v in values]


def command_line(report: dict) -> str:
    """The command as the user would type it: the interpreter by its name, not its full path."""
    argv = [str(a) for a in report.get("command") or []]
    if argv and os.path.isabs(argv[0]):
        argv[0] = os.path.basename(argv[0])
    return " ".join(argv)


def spread_text(steps: dict) -> str:
    """`, p90 X, p99 Y, slowest Z` of the measured steps, where the record has them (a median and a
    mean alone hide periodic slow steps)."""
    if steps.get("p90_step_s") is None:
        return ""
    return (f", p90 {seconds(steps['p90_step_s'])}, p99 {seconds(steps.get('p99_step_s'))}, "
            f"slowest {seconds(steps.get('max_step_s'))}")
