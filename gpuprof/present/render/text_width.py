"""How wide a line of text output may be: COLUMNS when the user (or a CI runner) set it, else the
terminal's width on a terminal, else 100 (a log, a pipe, `| less`): every text format wraps to it.
Markdown tables and JSON are exempt (a wrapped table row or JSON line would no longer parse)."""

import os
import shutil

PIPED_WIDTH = 100        # a log or a pipe, when COLUMNS is not set
NARROWEST = 20           # below this, wrapping would put a word or two on a line: not worth it


def columns_from_env():
    """COLUMNS as a positive whole number, or None when unset or not one."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def text_width(terminal: bool = False, width: int = None) -> int:
    """The width to wrap text to: `width` when the caller knows it, else COLUMNS, else the
    terminal's width (on a terminal) or PIPED_WIDTH."""
    chosen = width or columns_from_env()
    if chosen is None:
        chosen = shutil.get_terminal_size((PIPED_WIDTH, 24)).columns if terminal else PIPED_WIDTH
    return max(chosen, NARROWEST)
