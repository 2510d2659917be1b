"""The report as Markdown, for a pull-request comment or a CI step summary."""

from gpuprof.render.units import pct, rate, seconds, size


def render_markdown(report: dict) -> str:
    system = report.get("system", {})
    job = system.get("job", {})
    lines = [f"### gpuprof: `{' '.join(report.get('command') or [])}`", "",
             f"{report.get('outcome', '')} after {seconds(report.get('duration_s'))}.", ""]
    verdict = report.get("verdict")
    if verdict:
        lines += [f"**{verdict.get('summary', '')}**", ""]
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
