"""Layout pieces the terminal report's sections share: hanging indents, and code snippets that are
never wrapped nor cut (a pasted snippet must run)."""

import re

from rich.console import Group
from rich.table import Table
from rich.text import Text


def hanging(first: str, rest, style_first: str = None, style_rest: str = None, indent: int = 3):
    """`first` then `rest` on one line; wrapped lines of `rest` hang under its start."""
    grid = Table.grid(padding=(0, 0))
    grid.add_column(no_wrap=True, width=len(first) if indent is None else max(len(first), indent))
    grid.add_column()
    grid.add_row(Text(first, style=style_first or ""), rest if isinstance(rest, Text) else Text(rest, style=style_rest or ""))
    return grid


_SNIPPETS = []       # code lines of the report being rendered, put in after rich lays it out


def snippet(code: str, indent: int = 5):
    """Code never wraps nor is cut: a pasted snippet must run. Each line is laid out as a short
    placeholder and written in whole afterwards (console_text); a line longer than the terminal
    runs past its edge, which the terminal shows soft-wrapped and copies as one line."""
    lines = []
    for line in code.splitlines():
        _SNIPPETS.append(" " * indent + line)
        lines.append(Text(f"\x00{len(_SNIPPETS) - 1}\x00", no_wrap=True))
    return Group(*lines)


def start() -> None:
    """Forget the snippets of the report rendered before."""
    del _SNIPPETS[:]


def put_snippets_back(text: str, terminal: bool) -> str:
    def whole(match):
        line = _SNIPPETS[int(match.group(1))]
        return f"\x1b[32m{line}\x1b[0m" if terminal else line
    return re.sub(r"\x00(\d+)\x00[ ]*", whole, text)
