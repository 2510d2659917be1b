"""The `gpuprof try` record (gpuprof.try/1) as a table for a terminal or a log."""

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuprof.render.units import seconds


def speedup_cell(row: dict) -> str:
    if row.get("failed") and not row.get("speedup"):
        return f"crashed (status {row['failed'][0]})"
    if row.get("speedup") is None:
        return "n/a"
    if row["label"] == "baseline":
        return "1.00x"
    text = f"{row['speedup']:.2f}x"
    if row.get("speedup_min") is not None and row["rounds"] > 1:
        text += f" ({row['speedup_min']:.2f}-{row['speedup_max']:.2f})"
    return text


def estimate_cell(row: dict) -> str:
    return f"up to {row['estimate']:.2f}x" if row.get("estimate") else "-"


def verdict_cell(row: dict) -> str:
    verdicts = [v for v in row.get("verdicts") or [] if v]
    if not verdicts:
        return "-"
    most = max(set(verdicts), key=verdicts.count)
    return most if verdicts.count(most) == len(verdicts) else f"{most} ({verdicts.count(most)}/{len(verdicts)})"


def change_line(row: dict, loader) -> str:
    """The line the user would change to keep this variant, and how."""
    settings = {k: v for k, v in (row.get("settings") or {}).items()
                if k in ("num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "batch_size")}
    if settings:
        args = ", ".join(f"{k}={v}" for k, v in settings.items())
        threads = (row.get("settings") or {}).get("torch_threads")
        before = f"torch.set_num_threads({threads}) in the training process, and " if threads else ""
        return f"{before}at {loader or 'the DataLoader'}: DataLoader(..., {args})"
    if row.get("fix") == "batch-echoing":
        return "in the training loop: train on each batch twice before taking the next (see the batch-echoing fix)"
    if row.get("fix") == "hdf5-chunk-cache":
        return "where the file is opened: h5py.File(path, 'r', rdcc_nbytes=..., rdcc_nslots=...), and keep the data set handle"
    return ""


def lines(record: dict) -> list:
    """Everything below the table: the best variant, the input check, cautions, failures, notes."""
    out = []
    loader = (record.get("settings") or {}).get("loader")
    rows = record.get("rows") or []
    best = next((r for r in rows if r["label"] == record.get("best")), None)
    if best is not None:
        change = change_line(best, loader)
        out.append(f"best: {best['label']}, measured {best['speedup']:.2f}x" + (f"; to keep it, {change}" if change else ""))
    elif len(rows) > 1:
        out.append("no variant was measurably faster than the baseline (within 3%)")
    for sweep in record.get("sweeps") or []:
        out.append(f"sweep of {sweep['key']}: best {sweep['best']} ({sweep['speedup']:.2f}x); as good within the "
                   f"spread of the rounds: {', '.join(str(v) for v in sweep['as_good'])}")
    check = record.get("input_check")
    if check:
        out.append(f"input check: with the input made free, steps were {check['ceiling_speedup']:.2f}x faster: the input "
                   f"costs {check['measured_input_share']:.0%} of each step (the baseline waited "
                   f"{(check.get('data_wait_share') or 0):.0%} for data)")
        if check.get("corrected"):
            out.append(f"verdict corrected: {check['corrected']}")
    for row in rows[1:]:
        if row.get("error"):
            out.append(f"{row['label']}: not applied ({row['error']})")
        elif row.get("applied") is None and (row.get("settings") or {}) and not row.get("failed") \
                and not {"ceiling", "echo"} & set(row["settings"]):
            out.append(f"{row['label']}: the probes found nothing to change (no matching DataLoader or file)")
        if row.get("failed"):
            out.append(f"{row['label']}: the program failed in {len(row['failed'])} of {row['rounds']} runs "
                       f"(status {row['failed'][0]}); see {row['run_dirs'][0]}/program-stderr.txt")
        if row.get("caution"):
            out.append(f"{row['label']}: {row['caution']}")
    out.extend(record.get("notes") or [])
    if record.get("interrupted"):
        out.append("stopped by a signal: the table holds the runs that finished")
    return out


def render_try(record: dict, terminal: bool = False, width: int = None) -> str:
    buffer = io.StringIO()
    console = (Console(file=buffer, force_terminal=True, width=width or 120, highlight=False) if terminal else
               Console(file=buffer, force_terminal=False, no_color=True, width=width or 100000, highlight=False,
                       soft_wrap=True, color_system=None))
    s = record.get("settings") or {}
    console.print(Text(f"\ngpuprof try: {' '.join(record.get('command') or [])}", style="bold"))
    console.print(Text(f"{s.get('rounds')} rounds, {s.get('steps')} measured steps after {s.get('warmup_steps')} "
                       f"warm-up per run; runs kept in {record.get('folder')}", style="dim"))
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for name in ("variant", "step (mean)", "steps/s", "measured speed-up", "estimate", "verdict"):
        table.add_column(name, no_wrap=True)
    for row in record.get("rows") or []:
        table.add_row(row["label"], seconds(row.get("step_time_s")),
                      f"{row['steps_per_s']:.1f}" if row.get("steps_per_s") else "n/a",
                      speedup_cell(row), estimate_cell(row), verdict_cell(row))
    console.print(table)
    for line in lines(record):
        console.print(Text(line))
    text = buffer.getvalue()
    if not terminal:
        text = "\n".join(part.rstrip() for part in text.split("\n"))
    return text
