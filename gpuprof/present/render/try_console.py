"""The `gpuprof try` record (gpuprof.try/1) as a table for a terminal or a log, wrapped to the
width (gpuprof.present.render.text_width); where the table's cells cannot all fit whole, each variant is
a label with its named figures under it."""

import io

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from gpuprof.present.render.console_layout import hanging
from gpuprof.present.render.try_text import estimate_cell, lines, speedup_cell, verdict_cell
from gpuprof.present.render.text_width import text_width
from gpuprof.present.render.units import seconds

COLUMNS = ("variant", "step (mean)", "steps/s", "measured speed-up", "estimate", "verdict")
PADDING = 2


def render(record: dict, options) -> str:
    return render_try(record, terminal=options.terminal, width=options.width)


def render_try(record: dict, terminal: bool = False, width: int = None) -> str:
    buffer = io.StringIO()
    width = text_width(terminal, width)
    console = (Console(file=buffer, force_jupyter=False, force_terminal=True, width=width, highlight=False) if terminal else
               Console(file=buffer, force_jupyter=False, force_terminal=False, no_color=True, width=width, highlight=False,
                       color_system=None))
    s = record.get("settings") or {}
    console.print(Text(f"\ngpuprof try: {' '.join(record.get('command') or [])}", style="bold"))
    console.print(Text(f"{s.get('rounds')} rounds, {s.get('steps')} measured steps after {s.get('warmup_steps')} "
                       f"warm-up per run; runs kept in {record.get('folder')}", style="dim"))
    rows = record.get("rows") or []
    cells = [_cells(row) for row in rows]
    styles = [_speedup_style(row) for row in rows]
    console.print(_table(cells, styles) if _table_width(cells) <= width else _stacked(cells, styles))
    for line in lines(record):
        console.print(Text(line))
    text = buffer.getvalue()
    if not terminal:
        text = "\n".join(part.rstrip() for part in text.split("\n"))
    return text


def _cells(row: dict) -> tuple:
    return (row["label"], seconds(row.get("step_time_s")),
            f"{row['steps_per_s']:.1f}" if row.get("steps_per_s") else "n/a",
            speedup_cell(row), estimate_cell(row), verdict_cell(row))


#: The measured speed-up's colour by try's conclusion: a loss reads as one, as in every output.
SPEEDUP_STYLE = {"slower": "bold red", "same": "yellow", "faster": "green"}


def _speedup_style(row: dict) -> str:
    if row.get("label") == "baseline" or row.get("speedup") is None:
        return ""
    if row.get("conclusion") in SPEEDUP_STYLE:
        return SPEEDUP_STYLE[row["conclusion"]]
    return "yellow" if row["speedup"] < 1.0 else ""


def _table_width(cells: list) -> int:
    widths = [max([len(name)] + [len(row[i]) for row in cells]) for i, name in enumerate(COLUMNS)]
    return sum(widths) + PADDING * (len(COLUMNS) + 1)


def _table(cells: list, styles: list) -> Table:
    """One row per variant, when the line is wide enough for the whole of every cell."""
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, PADDING))
    for name in COLUMNS:
        table.add_column(name, no_wrap=True)
    for row, style in zip(cells, styles):
        table.add_row(*row[:3], Text(row[3], style=style), *row[4:])
    return table


def _stacked(cells: list, styles: list) -> Group:
    """Each variant's label on a line of its own and its figures, named, under it: a narrow line
    would otherwise cut labels or drop columns."""
    parts = []
    for (label, step, rate, speedup, estimate, verdict), style in zip(cells, styles):
        parts.append(Text(f"  {label}", style="bold"))
        figures = Text(f"step {step}, {rate} steps/s, measured speed-up ")
        figures.append(speedup, style=style)
        figures.append(f", estimate {estimate}, verdict {verdict}")
        parts.append(hanging("      ", figures, indent=6))
    return Group(*parts)
