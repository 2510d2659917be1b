"""`gpuprof report RUN`: its command line (the workflow is gpuprof.commands.workflows.report)."""

from typing import List, Optional

import typer


def report(
    run_dirs: List[str] = typer.Argument(..., metavar="RUN...",
                                         help="A run folder written by `gpuprof run`, `attach` or a notebook "
                                              "cell; several (or a folder holding several, one per node) make one "
                                              "report for the job; a report JSON (`run --json`, report.json) "
                                              "rendered as it is; or a `gpuprof try` folder (or its try.json), "
                                              "whose table is shown again."),
    fmt: str = typer.Option("console", "--format", "-f", metavar="FORMAT",
                            help="console, json, markdown, trace (Perfetto / Chrome trace JSON) or html "
                                 "(one self-contained page with plots)."),
    out_path: Optional[str] = typer.Option(None, "--out", "-o", metavar="FILE",
                                           help="Write the report to FILE instead of stdout."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                            help="Also write the report as JSON to FILE ('-' for stdout)."),
):
    """Analyse a saved run again and write its report to stdout (or --out FILE).

    `--format html` gives one self-contained page with plots; `--format trace` a timeline that
    opens in ui.perfetto.dev or chrome://tracing."""
    from gpuprof.commands.workflows.report import report_runs
    return report_runs(run_dirs, fmt, out_path=out_path, json_path=json_path)
