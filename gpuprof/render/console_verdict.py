"""The terminal report's top: the command and its outcome, the verdict with its findings, and the
ranked fixes (their shared wording from gpuprof.advice.wording)."""

from rich.console import Group
from rich.text import Text

from gpuprof.advice.wording import advice_heading, next_steps_for_compute
from gpuprof.analysis import bottlenecks
from gpuprof.render.console_layout import hanging, snippet
from gpuprof.render.units import gain, other_interpreter, seconds


def header(report: dict):
    text = Text()
    text.append("gpuprof", style="bold cyan")
    command = " ".join(report.get("command") or [])
    text.append(f"  {command}\n", style="bold")
    text.append(f"{report.get('outcome', '')} after {seconds(report.get('duration_s'))}")
    if len(report.get("run_dirs") or []) > 1:
        text.append(f"  ·  merged from {len(report['run_dirs'])} run folders", style="dim")
    elif report.get("run_dir"):
        text.append(f"  ·  run saved in {report['run_dir']}", style="dim")
    if other_interpreter(report):
        text.append(f"\n{other_interpreter(report)}", style="yellow")
    return text


def verdict_line(report: dict):
    verdict = report.get("verdict")
    if not verdict:
        return None
    parts = [Text("")]
    style = "bold green" if verdict.get("bottleneck") == bottlenecks.COMPUTE.id else "bold yellow"
    parts.append(Text(verdict.get("summary", ""), style=style))
    if verdict.get("bottleneck"):
        caveat = f" ({verdict['caveat']})" if verdict.get("caveat") else ""
        parts.append(Text(f"confidence {verdict.get('confidence', 0):.0%}{caveat}", style="dim"))
    for finding in report.get("findings") or []:
        of = (finding.get("evidence") or {}).get("share_of") or "step time"
        parts.append(hanging("also: ", f"{finding['bottleneck']} ({finding['share']:.0%} of {of}): "
                             f"{finding['reason']}", "dim", "dim", indent=None))
    for finding in ((report.get("memory") or {}).get("findings")) or []:
        parts.append(hanging("memory: ", finding["summary"] + (f"; fix: {finding['fix']}" if finding.get("fix") else ""),
                             "yellow", None, indent=None))
    return Group(*parts)


def speedup_text(item: dict) -> str:
    """Every estimate is an upper bound: it says so."""
    return gain(item)


def advice_list(report: dict):
    advice = report.get("advice") or []
    verdict = report.get("verdict") or {}
    if not advice:
        if verdict.get("bottleneck") == bottlenecks.COMPUTE.id:
            return Text("\n" + next_steps_for_compute(report), style="dim")
        return None
    parts = [Text("\n" + advice_heading(report), style="bold")]
    for rank, item in enumerate(advice[:6], 1):
        head = Text()
        head.append(item["title"], style="bold")
        head.append(f"  {speedup_text(item)}", style="bold green")
        head.append(f"  [{item['id']}]", style="dim")
        parts.append(hanging(f"{rank}. ", head, indent=3))
        body = Text()
        if item.get("where"):
            body.append(f"at {item['where']}: ", style="cyan")
        body.append(item.get("detail") or "")
        parts.append(hanging("", body, indent=3))
        if item.get("snippet"):
            parts.append(snippet(item["snippet"]))
        if item.get("why"):
            parts.append(hanging("", Text("why: " + item["why"], style="dim"), indent=3))
        if item.get("ranked_by"):
            parts.append(hanging("", Text("ranked " + item["ranked_by"], style="dim"), indent=3))
    return Group(*parts)
