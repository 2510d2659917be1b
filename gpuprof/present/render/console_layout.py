"""Layout pieces the terminal report's sections share: hanging indents, and code snippets that are
never wrapped nor cut (a pasted snippet must run)."""

import re
from typing import Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from gpuprof.present.render.code_fit import fit_code


def hanging(first: str, rest, style_first: Optional[str] = None, style_rest: Optional[str] = None,
            indent: Optional[int] = 3):
    """`first` then `rest` on one line; wrapped lines of `rest` hang under its start."""
    grid = Table.grid(padding=(0, 0))
    grid.add_column(no_wrap=True, width=len(first) if indent is None else max(len(first), indent))
    grid.add_column()
    grid.add_row(Text(first, style=style_first or ""), rest if isinstance(rest, Text) else Text(rest, style=style_rest or ""))
    return grid


_SNIPPETS: list = []       # code lines of the report being rendered, put in after rich lays it out


def snippet(code: str, indent: int = 5):
    """Code is never cut nor wrapped as prose: a pasted snippet must run. Each line is laid out as
    a short placeholder and written afterwards (console_text); a line longer than the width is
    broken only where Python carries on (gpuprof.present.render.code_fit), and one with no such place runs
    past the edge whole."""
    lines = []
    for line in code.splitlines():
        _SNIPPETS.append(" " * indent + line)
        lines.append(Text(f"\x00{len(_SNIPPETS) - 1}\x00", no_wrap=True))
    return Group(*lines)


_WHOLE: list = []          # words never cut (paths): laid out as placeholders of their length, put back after
_WIDTH = [100]       # the width of the report being rendered


def start(width: int = 100) -> None:
    """Forget the snippets and whole words of the report rendered before."""
    del _SNIPPETS[:]
    del _WHOLE[:]
    _WIDTH[0] = width


def whole_word(word: str) -> str:
    """A word (a path a reader copies) that wraps to a line of its own when it does not fit, and is
    never cut: a placeholder as long as the word (or the line) stands for it while rich lays it out."""
    _WHOLE.append(word)
    mark = f"\ue000{len(_WHOLE) - 1}\ue000"      # printable (private use): rich counts its width
    return mark + "\ue001" * max(min(len(word), _WIDTH[0] - 1) - len(mark), 0)


def put_snippets_back(text: str, terminal: bool, width: int = None) -> str:
    def whole(match):
        lines = fit_code(_SNIPPETS[int(match.group(1))], width) if width else [_SNIPPETS[int(match.group(1))]]
        return "\n".join(f"\x1b[32m{line}\x1b[0m" if terminal else line for line in lines)
    text = re.sub("\ue000(\\d+)\ue000\ue001*", lambda m: _WHOLE[int(m.group(1))], text)
    return re.sub(r"\x00(\d+)\x00[ ]*", whole, text)
