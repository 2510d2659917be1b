"""The `gpuprof try` record (gpuprof.try/1) as a table for a terminal or a log."""

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuprof.render.try_text import estimate_cell, lines, speedup_cell, verdict_cell
from gpuprof.render.units import seconds


def render(record: dict, options) -> str:
    return render_try(record, terminal=options.terminal, width=options.width)


def render_try(record: dict, terminal: bool = False, width: int = None) -> str:
    buffer = io.StringIO()
    console = (Console(file=buffer, force_jupyter=False, force_terminal=True, width=width or 120, highlight=False) if terminal else
               Console(file=buffer, force_jupyter=False, force_terminal=False, no_color=True, width=width or 100000, highlight=False,
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
