"""Help text wrapped at spaces only: a path or a hyphenated name (`~/.local/state/gpuprof/runs`,
`--warmup-steps`) is moved whole to the next line rather than cut inside. A path longer than the
whole line is broken after one of its slashes, the one place a reader still sees where it goes on.
The width is click's: COLUMNS or the terminal's, at most 80."""

import re
import shutil
import textwrap

import typer

_Formatter = typer.Context.formatter_class


class _Wrapper(textwrap.TextWrapper):
    def __init__(self, width: int, **kwargs):
        super().__init__(width, break_on_hyphens=False, replace_whitespace=False, **kwargs)

    def _split(self, text):
        pieces = []
        for chunk in super()._split(text):
            if len(chunk) > self.width and "/" in chunk:
                pieces.extend(re.findall(r"[^/]*/+|[^/]+$", chunk))
            else:
                pieces.append(chunk)
        return pieces


def wrap(text: str, width: int, indent: str = "") -> str:
    """`text` wrapped to `width`, paragraph by paragraph (blank lines between them kept)."""
    width = max(width, 10)
    paragraphs = [" ".join(part.split()) for part in re.split(r"\n\s*\n", text.strip())]
    wrapper = _Wrapper(width, initial_indent=indent, subsequent_indent=indent)
    return "\n\n".join(wrapper.fill(paragraph) for paragraph in paragraphs if paragraph)


class HelpFormatter(_Formatter):
    """click's formatter with `wrap` for the description and the options' help, and no wider than
    COLUMNS however narrow (click's own floor is 50 columns)."""

    def __init__(self, indent_increment: int = 2, width: int = None, max_width: int = None):
        super().__init__(indent_increment, width, max_width)
        if width is None:
            self.width = min(self.width, max(shutil.get_terminal_size((80, 24)).columns - 2, 20))

    def write_text(self, text: str) -> None:
        self.write(wrap(text, self.width, " " * self.current_indent))
        self.write("\n")

    def write_dl(self, rows, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((len(first) for first, _ in rows), default=0), col_max) + col_spacing
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            lines = wrap(second, max(self.width - first_col - self.current_indent, 10)).splitlines() or [""]
            self.write(f"{lines[0]}\n")
            for line in lines[1:]:
                self.write(f"{'':>{first_col + self.current_indent}}{line}\n")


class HelpContext(typer.Context):
    formatter_class = HelpFormatter
