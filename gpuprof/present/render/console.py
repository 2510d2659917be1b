"""The terminal report, written to stderr so the program's stdout stays the user's alone.

Sections are small functions over the Report dict, in the order below; each returns a renderable
or None (gpuprof.present.render.console_verdict, gpuprof.present.render.console_tables)."""

from rich.console import Console, Group

from gpuprof.record.report_format import Report
from gpuprof.present.render import console_layout
from gpuprof.present.render.console_attached import attached_table
from gpuprof.present.render.console_tables import (copies_and_files, gpu_table, loader_tables, loop_table, memory_table,
                                           nodes_table, notes, ranks_table, system_table)
from gpuprof.present.render.console_verdict import advice_list, header, verdict_line
from gpuprof.present.render.text_width import text_width
from gpuprof.present.render.efficiency_text import console_table as efficiency_table
from gpuprof.present.render.self_cost_text import console_line as self_cost_line

SECTIONS = (header, verdict_line, advice_list, loop_table, attached_table, ranks_table, nodes_table, loader_tables,
            copies_and_files, memory_table, system_table, gpu_table, efficiency_table, notes, self_cost_line)


def render(report: Report, options) -> str:
    return console_text(report, terminal=options.terminal, width=options.width)


def render_console(report: Report, console: Console) -> None:
    parts = [part for part in (func(report) for func in SECTIONS) if part is not None]
    console.print(Group(*parts))


def stream_console(stream) -> Console:
    """A console for `stream`: colours on a terminal, plain on a log or a pipe; wrapped to COLUMNS,
    else the terminal's width, else 100 columns (gpuprof.present.render.text_width)."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    if terminal:
        return Console(file=stream, force_jupyter=False, highlight=False, width=text_width(True))
    return Console(file=stream, force_jupyter=False, force_terminal=False, no_color=True, width=text_width(False),
                   highlight=False, color_system=None)


def console_text(report: Report, terminal: bool = False, width: int = None) -> str:
    """The report as text, wrapped with hanging indents to `width` (else COLUMNS, the terminal's
    width or 100 columns): with colours for a terminal, plain for a log or a pipe."""
    import io

    buffer = io.StringIO()
    width = text_width(terminal, width)
    if terminal:
        console = Console(file=buffer, force_jupyter=False, force_terminal=True, width=width, highlight=False)
    else:
        console = Console(file=buffer, force_jupyter=False, force_terminal=False, no_color=True, width=width,
                          highlight=False, color_system=None)
    console_layout.start(width)
    render_console(report, console)
    text = console_layout.put_snippets_back(buffer.getvalue(), terminal, width)
    if not terminal:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text
