"""The one table of output formats. Every renderer is a module with one function,
`render(document, options) -> str`, over a Report (gpuprof.report/N) or a `try` record
(gpuprof.try/N); the table says which, and whether it also reads the run record (the pictures
plot its time series). Renderers are imported only when used: `run` shows a report without
loading the HTML or trace code."""

import importlib
from dataclasses import dataclass
from typing import Optional

REPORT = "report"
TRY = "try"


@dataclass(frozen=True)
class RenderOptions:
    terminal: bool = False     # colours and wrapping for a terminal, else plain unwrapped text
    width: Optional[int] = None          # the terminal's width (None: measured, or a default)
    record: Optional[dict] = None        # the run record, for formats that read it
    tried: Optional[dict] = None         # the `try` record `run --verify` left beside the run, if any


@dataclass(frozen=True)
class Format:
    subject: str               # REPORT or TRY
    module: str
    reads_record: bool = False


FORMATS = {
    "console": Format(REPORT, "gpuprof.present.render.console"),
    "json": Format(REPORT, "gpuprof.present.render.json_report"),
    "markdown": Format(REPORT, "gpuprof.present.render.markdown"),
    "trace": Format(REPORT, "gpuprof.present.render.trace", reads_record=True),
    "html": Format(REPORT, "gpuprof.present.render.html", reads_record=True),
    "try-console": Format(TRY, "gpuprof.present.render.try_console"),
    "try-markdown": Format(TRY, "gpuprof.present.render.try_markdown"),
    "try-json": Format(TRY, "gpuprof.present.render.try_json"),
}


def names(subject: str = REPORT) -> tuple:
    """The formats of one subject, as `gpuprof report --format` lists them."""
    return tuple(name[len(subject) + 1:] if subject != REPORT else name
                 for name, fmt in FORMATS.items() if fmt.subject == subject)


def reads_record(fmt: str) -> bool:
    return FORMATS[fmt].reads_record


def render(fmt: str, document: dict, **options) -> str:
    """`document` in format `fmt` (a key of FORMATS). Raises KeyError for an unknown format."""
    module = importlib.import_module(FORMATS[fmt].module)
    return module.render(document, RenderOptions(**options))
