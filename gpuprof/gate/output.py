"""Gate results as JUnit XML (one testcase per threshold) and as Markdown."""

from xml.etree import ElementTree as ET

from gpuprof.gate.decide import FAIL, MISSING, SKIPPED


def fmt(value, name: str) -> str:
    if value is None:
        return "n/a"
    if name in ("max_data_wait", "min_gpu_util"):
        return f"{value:.1%}"
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
    skipped = sum(c.status == SKIPPED for c in result.checks)
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
        elif check.status == SKIPPED:
            ET.SubElement(case, "skipped", message=check.detail)
        else:
            ET.SubElement(case, "system-out").text = f"measured {measured}, limit {limit_text(check)}. {check.detail}"
    suites = ET.Element("testsuites")
    suites.append(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def markdown(result, report: dict) -> str:
    icon = {"pass": "✅ pass", "fail": "❌ fail", "missing": "❌ missing", "skipped": "⏭️ skipped"}
    lines = [f"### gpuprof gate: {'passed' if result.passed else 'FAILED'}", "",
             f"`{' '.join(report.get('command') or [])}`", "",
             "| threshold | measured | limit | result | detail |", "|---|---|---|---|---|"]
    for check in result.checks:
        lines.append(f"| {check.name} | {fmt(check.measured, check.name)} | {limit_text(check)} | "
                     f"{icon.get(check.status, check.status)} | {check.detail.replace('|', '/')} |")
    lines.append("")
    if result.summary:
        lines += [f"**Verdict:** {result.summary}", ""]
    advice = report.get("advice") or []
    if advice and not result.passed:
        top = advice[0]
        gain = (f"up to {top['estimated_speedup']:.2f}x" if top.get("estimated_speedup") is not None
                else "frees memory")
        lines += [f"**Top fix:** {top['title']} ({gain})"
                  + (f" at `{top['where']}`" if top.get("where") else "") + f": {top.get('detail', '')}", ""]
    return "\n".join(lines) + "\n"
