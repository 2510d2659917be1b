"""The terminal report, written to stderr so the program's stdout stays the user's alone.

Sections are small functions over the Report dict, in the order below; each returns a renderable
or None (gpuprof.render.console_verdict, gpuprof.render.console_tables)."""

from rich.console import Console, Group

from gpuprof.render import console_layout
from gpuprof.render.console_attached import attached_table
from gpuprof.render.console_tables import (copies_and_files, gpu_table, loader_tables, loop_table, memory_table,
                                           nodes_table, notes, ranks_table, system_table)
from gpuprof.render.console_verdict import advice_list, header, verdict_line

SECTIONS = (header, verdict_line, advice_list, loop_table, attached_table, ranks_table, nodes_table, loader_tables,
            copies_and_files, memory_table, system_table, gpu_table, notes)


def render(report: dict, options) -> str:
    return console_text(report, terminal=options.terminal, width=options.width)


def render_console(report: dict, console: Console) -> None:
    parts = [part for part in (func(report) for func in SECTIONS) if part is not None]
    console.print(Group(*parts))


def stream_console(stream) -> Console:
    """A console for `stream`: colours and the terminal's width on a terminal; plain and never
    wrapped on a log or a pipe (CI logs keep whole sentences)."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    if terminal:
        return Console(file=stream, force_jupyter=False, highlight=False)
    return Console(file=stream, force_jupyter=False, force_terminal=False, no_color=True, width=100000, highlight=False,
                   soft_wrap=True, color_system=None)


def console_text(report: dict, terminal: bool = False, width: int = None) -> str:
    """The report as text. For a terminal: colours, wrapped to its width with hanging indents. For
    a log or a pipe: plain text, never wrapped (a line is as long as what it says)."""
    import io
    import shutil

    buffer = io.StringIO()
    if terminal:
        width = width or shutil.get_terminal_size((100, 24)).columns
        console = Console(file=buffer, force_jupyter=False, force_terminal=True, width=width, highlight=False)
    else:
        console = Console(file=buffer, force_jupyter=False, force_terminal=False, no_color=True, width=width or 100000,
                          highlight=False, soft_wrap=True, color_system=None)
    console_layout.start()
    render_console(report, console)
    text = console_layout.put_snippets_back(buffer.getvalue(), terminal)
    if not terminal:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text
