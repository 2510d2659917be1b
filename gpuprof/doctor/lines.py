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


def render(sections: list, pretty: bool = False) -> str:
    out = []
    for section in sections:
        out.append(f"{BOLD}{section.title}{RESET}" if pretty else section.title)
        for line in section.lines:
            out.append(f"  {mark(line.status, pretty)} {line.text}")
            out.extend(f"      {more}" for more in line.detail)
        out.append("")
    return "\n".join(out)


def mark(status: str, pretty: bool) -> str:
    if pretty:
        return f"{COLOURS[status]}{SYMBOLS[status]}{RESET}"
    return ASCII[status]
