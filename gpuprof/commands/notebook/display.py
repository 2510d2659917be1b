"""A profiled cell's report, inline: one display bundle with the terminal report as text/plain and
the HTML report as text/html. The page, plots and all, sits in an iframe's srcdoc: its styles stay
inside it, nothing is fetched or served, and it needs no script (the page's hover readout, its only
script, is left out), so JupyterLab, classic Notebook and VS Code show it alike. The verdict is
also given outside the frame, for a front end that shows no frames."""

import html
import re

from gpuprof.commands.workflows.messages import error

FRAME_HEIGHT_PX = 900
_SCRIPT = re.compile(r"<script>.*?</script>", re.DOTALL)


def show_report(run_dir: str, json_path=None, html_path=None, quiet: bool = False):
    """Build, save and show the cell's report; returns it (None when it could not be built)."""
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.outputs import try_write
    from gpuprof.present.reporting.pictures import report_text
    from gpuprof.present.reporting.save import build, save_in_run

    try:
        report = build(run_dir)
    except Exception as exc:    # the cell's own outcome must survive any reporting bug
        error(f"could not build the report for {run_dir}: {exc.__class__.__name__}: {exc}")
        return None
    try:
        save_in_run(report, run_dir)
    except OSError as exc:
        error(f"could not save report.json in {run_dir}: {exc.strerror or exc}")
    page = None
    try:
        page = report_text(run_dir, report, "html")
    except Exception as exc:
        error(f"could not build the HTML report for {run_dir}: {exc.__class__.__name__}: {exc}")
    if json_path:
        try_write(json_path, formats.render("json", report), "--json")
    if html_path and page is not None:
        try_write(html_path, page, "--html")
    if not quiet:
        from IPython.display import display
        display(bundle(report, page), raw=True)
    return report


def bundle(report: dict, page) -> dict:
    from gpuprof.present.render.console import console_text
    out = {"text/plain": console_text(report, terminal=False)}
    if page is not None:
        out["text/html"] = inline_html(report, page)
    return out


def inline_html(report: dict, page: str) -> str:
    verdict = (report.get("verdict") or {}).get("summary") or "No verdict."
    framed = _SCRIPT.sub("", page)
    return (f'<div class="gpuprof-report"><p><strong>gpuprof</strong>: {html.escape(verdict)} '
            f'<span style="opacity:0.7">(run folder <code>{html.escape(str(report.get("run_dir") or ""))}</code>)</span></p>'
            f'<iframe title="gpuprof report" srcdoc="{html.escape(framed, quote=True)}" '
            f'style="width:100%;height:{FRAME_HEIGHT_PX}px;border:1px solid #ccc;resize:vertical"></iframe></div>')
