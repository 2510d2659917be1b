"""The report as Markdown, for a pull-request comment or a CI step summary."""

from gpuprof.render.units import pct, rate, seconds, size


def render_markdown(report: dict) -> str:
    system = report.get("system", {})
    job = system.get("job", {})
    lines = [f"### gpuprof: `{' '.join(report.get('command') or [])}`", "",
             f"{report.get('outcome', '')} after {seconds(report.get('duration_s'))}.", ""]
    verdict = report.get("verdict")
    if verdict:
        lines += [f"**{verdict.get('summary', '')}** (confidence {verdict.get('confidence', 0):.0%})", ""]
        for finding in report.get("findings") or []:
            lines.append(f"- also `{finding['bottleneck']}` ({finding['share']:.0%} of step time): {finding['reason']}")
        if report.get("findings"):
            lines.append("")
    advice = report.get("advice") or []
    if advice:
        lines += ["| # | fix | est. speed-up | where | change |", "|---|---|---|---|---|"]
        for rank, item in enumerate(advice, 1):
            where = f"`{item['where']}`" if item.get("where") else ""
            lines.append(f"| {rank} | {item['title']} (`{item['id']}`) | {item['estimated_speedup']:.2f}x | {where} | "
                         f"{(item.get('detail') or '').replace('|', '/')} |")
        lines.append("")
        top = advice[0]
        if top.get("snippet"):
            lines += [f"Top fix, `{top['id']}`:", "", "```python", top["snippet"], "```", ""]
    steps = report.get("steps") or {}
    if steps.get("count"):
        lines += [f"Steps: {steps['count']}, median {seconds(steps.get('median_step_s'))}, "
                  f"data wait {pct(steps.get('data_wait_share'))} of step time.", ""]
    lines += ["| measure | value |", "|---|---|"]
    cores = job.get("cores_busy")
    lines.append(f"| job CPU | {'n/a' if cores is None else f'{cores:.2f}'} of {system.get('cpu_count')} cores |")
    lines.append(f"| machine iowait | {pct(system.get('cpu', {}).get('iowait'))} |")
    lines.append(f"| disk read | {rate(system.get('disk', {}).get('read_mb_s'))} |")
    lines.append(f"| job disk reads | {size(job.get('read_bytes'))} |")
    for gpu in system.get("gpus", []):
        lines.append(f"| GPU {gpu.get('index')} util | {pct(gpu.get('util_gpu'))} |")
    lines.append("")
    for note in report.get("notes") or []:
        lines.append(f"- note: {note}")
    return "\n".join(lines) + "\n"
