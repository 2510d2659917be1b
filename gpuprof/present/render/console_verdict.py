"""The terminal report's top: the command and its outcome, the verdict with its findings, and the
ranked fixes (their shared wording from gpuprof.advise.wording)."""

from typing import Mapping

from rich.console import Group
from rich.text import Text

from gpuprof.advise.wording import advice_heading, next_steps_for_compute, no_fix_helped_line
from gpuprof.judge.verdict import bottlenecks
from gpuprof.record.report_format import Memory, Report
from gpuprof.present.render.console_layout import hanging, snippet, whole_word
from gpuprof.present.render.units import gain, gain_tone, other_interpreter, seconds


def header(report: Report):
    text = Text()
    text.append("gpuprof", style="bold cyan")
    command = " ".join(report.get("command") or [])
    text.append(f"  {command}\n", style="bold")
    text.append(f"{report.get('outcome', '')} after {seconds(report.get('duration_s'))}")
    if len(report.get("run_dirs") or []) > 1:
        text.append(f"  ·  merged from {len(report['run_dirs'])} run folders", style="dim")
    elif run_dir := report.get("run_dir"):
        # the run folder is copied by readers: never cut, on a line of its own when it does not fit
        text.append(f"  ·  run saved in {whole_word(run_dir)}", style="dim")
    if other_interpreter(report):
        text.append(f"\n{other_interpreter(report)}", style="yellow")
    return text


def verdict_line(report: Report):
    verdict = report.get("verdict")
    if not verdict:
        return None
    parts = [Text("")]
    style = "bold green" if verdict.get("bottleneck") == bottlenecks.COMPUTE.id else "bold yellow"
    parts.append(Text(verdict.get("summary", ""), style=style))
    if verdict.get("bottleneck"):
        caveat = f" ({verdict['caveat']})" if verdict.get("caveat") else ""
        parts.append(Text(f"confidence {verdict.get('confidence', 0):.0%}{caveat}", style="dim"))
    if verdict.get("busy_machine"):
        parts.append(hanging("busy machine: ", verdict["busy_machine"], "yellow", None, indent=None))
    for finding in report.get("findings") or []:
        of = (finding.get("evidence") or {}).get("share_of") or "step time"
        parts.append(hanging("also: ", f"{finding['bottleneck']} ({finding['share']:.0%} of {of}): "
                             f"{finding['reason']}", "dim", "dim", indent=None))
    memory: Memory = report.get("memory") or {}
    for found in memory.get("findings") or []:
        parts.append(hanging("memory: ", found["summary"] + (f"; fix: {found['fix']}" if found.get("fix") else ""),
                             "yellow", None, indent=None))
    return Group(*parts)


def speedup_text(item: Mapping) -> str:
    """The estimate's range, and what `gpuprof try` measured beside it."""
    return gain(item)


#: A gain's style by its tone (gpuprof.present.render.units.gain_tone): a measured loss reads as one.
TONE_STYLE = {"gain": "bold green", "same": "bold yellow", "loss": "bold red"}


def advice_list(report: Report):
    advice = report.get("advice") or []
    verdict = report.get("verdict") or {}
    if not advice:
        if verdict.get("bottleneck") == bottlenecks.COMPUTE.id:
            return Text("\n" + next_steps_for_compute(report), style="dim")
        return None
    parts = [Text("\n" + advice_heading(report), style="bold")]
    if no_fix_helped_line(report):
        parts.append(Text(no_fix_helped_line(report), style="bold red"))
    for rank, item in enumerate(advice[:6], 1):
        head = Text()
        head.append(item["title"], style="bold")
        head.append(f"  {speedup_text(item)}", style=TONE_STYLE[gain_tone(item)])
        head.append(f"  [{item['id']}]", style="dim")
        parts.append(hanging(f"{rank}. ", head, indent=3))
        body = Text()
        if item.get("where"):
            body.append(f"at {item['where']}: ", style="cyan")
        body.append(item.get("detail") or "")
        parts.append(hanging("", body, indent=3))
        if code := item.get("snippet"):
            parts.append(snippet(code))
        if why := item.get("why"):
            parts.append(hanging("", Text("why: " + why, style="dim"), indent=3))
        if item.get("ranked_by"):
            parts.append(hanging("", Text("ranked " + item["ranked_by"], style="dim"), indent=3))
    return Group(*parts)
