"""The doctor's output: sections of lines, each marked ✓ (works), – (absent, a normal state) or
✗ (broken, or in the way of what gpuprof measures). Symbols and colour on a terminal; plain ASCII
on a pipe or a log, and where NO_COLOR is set (no-color.org)."""

import os
from dataclasses import dataclass, field

OK, NONE, BAD = "ok", "none", "bad"

SYMBOLS = {OK: "✓", NONE: "–", BAD: "✗"}
ASCII = {OK: "+", NONE: "-", BAD: "x"}
COLOURS = {OK: "\033[32m", NONE: "\033[2m", BAD: "\033[31m"}
BOLD, RESET = "\033[1m", "\033[0m"


@dataclass
class Line:
    status: str
    text: str
    detail: list = field(default_factory=list)     # indented lines under it (no mark)


@dataclass
class Section:
    title: str
    lines: list


def fancy(stream, environ=None) -> bool:
    """Symbols and colour: only on a terminal, and never with NO_COLOR set (to anything)."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def render(sections: list, pretty: bool = False, width: int = None) -> str:
    """The sections as text; with `width`, each line wrapped to it, hanging under its text."""
    out = []
    for section in sections:
        out.append(f"{BOLD}{section.title}{RESET}" if pretty else section.title)
        for line in section.lines:
            first = _wrapped(line.text, width, 4)
            out.append(f"  {mark(line.status, pretty)} {first[0]}")
            out.extend(first[1:])
            for more in line.detail:
                pieces = _wrapped(more, width, 6)
                out.extend([" " * 6 + pieces[0]] + pieces[1:])
        out.append("")
    return "\n".join(out)


def _wrapped(text: str, width, indent: int) -> list:
    """`text` in pieces of at most `width - indent` characters (later pieces indented by `indent`,
    the first left to its caller), broken at spaces, never inside a path or a hyphenated word
    unless one is longer than the line."""
    if not width:
        return [text]
    import textwrap
    pieces = textwrap.wrap(text, max(width - indent, 20), break_on_hyphens=False) or [""]
    return pieces[:1] + [" " * indent + piece for piece in pieces[1:]]


def mark(status: str, pretty: bool) -> str:
    if pretty:
        return f"{COLOURS[status]}{SYMBOLS[status]}{RESET}"
    return ASCII[status]
