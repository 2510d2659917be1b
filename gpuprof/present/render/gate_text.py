"""Gate results as JUnit XML (one testcase per threshold) and as Markdown."""

from xml.etree import ElementTree as ET
from typing import Mapping

from gpuprof.advise.wording import no_fix_helped_line
from gpuprof.gate.statuses import DISTURBED, FAIL, MISSING, SKIPPED
from gpuprof.present.render.units import gain, gain_tone


def fmt(value, name: str) -> str:
    if value is None:
        return "n/a"
    if name in ("max_data_wait", "min_gpu_util"):
        return f"{value:.1%}"
    if name == "min_mfu":
        return f"{value:.2%}"
    if name == "max_regression":
        return f"{value:+.1%}"
    if name == "max_p90_step":
        return f"{value * 1e3:.1f} ms"
    return f"{value:.1f}"


def limit_text(check) -> str:
    op = "<=" if check.name.startswith("max_") else ">="
    return f"{op} {fmt(check.limit, check.name)}"


def junit_xml(result, report_path: str) -> str:
    failures = sum(c.status in (FAIL, MISSING) for c in result.checks)
    skipped = sum(c.status in (SKIPPED, DISTURBED) for c in result.checks)
    suite = ET.Element("testsuite", name="gpuprof.gate", tests=str(len(result.checks)),
                       failures=str(failures), errors="0", skipped=str(skipped))
    for check in result.checks:
        case = ET.SubElement(suite, "testcase", classname="gpuprof.gate", name=check.name)
        measured = fmt(check.measured, check.name)
        if check.status in (FAIL, MISSING):
            failure = ET.SubElement(case, "failure", type=check.status,
                                    message=f"{check.label}: measured {measured}, limit {limit_text(check)}")
            failure.text = (f"{check.label}: measured {measured}, limit {limit_text(check)}. {check.detail}\n"
                            f"Verdict: {result.summary}\nReport: {report_path}")
        elif check.status in (SKIPPED, DISTURBED):
            ET.SubElement(case, "skipped", message=check.detail)
        else:
            ET.SubElement(case, "system-out").text = f"measured {measured}, limit {limit_text(check)}. {check.detail}"
    suites = ET.Element("testsuites")
    suites.append(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _top_fix(report: Mapping, top: Mapping) -> list:
    """The report's first fix as every other output words it (its estimate's range, what `gpuprof
    try` measured beside it), or that the measured fixes did not help."""
    if no_fix_helped_line(report):
        return [f"**Top fix:** none: {no_fix_helped_line(report)}", ""]
    mark = {"loss": "❌ ", "same": "⚠️ "}.get(gain_tone(top), "")
    return [f"**Top fix:** {top['title']} ({mark}{gain(top)})"
            + (f" at `{top['where']}`" if top.get("where") else "") + f": {top.get('detail', '')}", ""]


def markdown(result, report: dict) -> str:
    icon = {"pass": "✅ pass", "fail": "❌ fail", "missing": "❌ missing", "skipped": "⏭️ skipped",
            "disturbed": "⚠️ disturbed"}
    outcome = "passed" if result.passed else ("not decided (busy machine)" if getattr(result, "undecided", False)
                                              else "FAILED")
    lines = [f"### gpuprof gate: {outcome}", "",
             f"`{' '.join(report.get('command') or [])}`", "",
             "| threshold | measured | limit | result | detail |", "|---|---|---|---|---|"]
    for check in result.checks:
        lines.append(f"| {check.name} | {fmt(check.measured, check.name)} | {limit_text(check)} | "
                     f"{icon.get(check.status, check.status)} | {check.detail.replace('|', '/')} |")
    lines.append("")
    if getattr(result, "disturbed", ""):
        lines += [f"**Busy machine:** {result.disturbed}", ""]
    if result.summary:
        lines += [f"**Verdict:** {result.summary}", ""]
    advice = report.get("advice") or []
    if advice and not result.passed:
        lines += _top_fix(report, advice[0])
    return "\n".join(lines) + "\n"
