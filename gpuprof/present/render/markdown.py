"""The report as Markdown, for a pull-request comment or a CI step summary.

Text from the report is escaped (`__getitem__` stays as written, not bold); identifiers go in code
spans; table cells hold short values only, longer texts follow the table as a list."""

from typing import Mapping

from gpuprof.record.report_format import Report
from gpuprof.present.render.markdown_text import code, escape
from gpuprof.present.render.copies_text import WAIT_LABEL, copies_cell, copies_rows
from gpuprof.present.render.efficiency_text import markdown_lines as efficiency_markdown
from gpuprof.present.render.self_cost_text import self_cost_lines
from gpuprof.present.render.gpu_text import gpu_name, job_gpus_line, rank_gpus_text, utilisation_short
from gpuprof.advise.wording import no_fix_helped_line
from gpuprof.present.render.units import command_line, gain, gain_tone, other_interpreter, pct, rate, seconds, size

def render(report: Report, options) -> str:
    return render_markdown(report)


def render_markdown(report: Report) -> str:
    lines = [f"### gpuprof: {code(command_line(report))}", "",
             f"{escape(report.get('outcome', ''))} after {seconds(report.get('duration_s'))}."
             + (f" {escape(other_interpreter(report))}." if other_interpreter(report) else ""), ""]
    lines += _verdict_lines(report)
    if no_fix_helped_line(report):
        lines += [f"**{escape(no_fix_helped_line(report))}**", ""]
    lines += _advice_lines(report.get("advice") or [])
    lines += _rank_lines(report)
    lines += _steps_lines(report.get("steps") or {})
    lines += _measure_lines(report)
    lines += efficiency_markdown(report)
    lines += _note_lines(report)
    return "\n".join(lines) + "\n"


def _verdict_lines(report: Report) -> list:
    """The verdict, then the other findings as a list under it."""
    lines = []
    verdict = report.get("verdict")
    if verdict:
        lines += [f"**{escape(verdict.get('summary', ''))}** (confidence {verdict.get('confidence', 0):.0%})", ""]
        if verdict.get("busy_machine"):
            lines += [f"Busy machine: {escape(verdict['busy_machine'])}", ""]
        for finding in report.get("findings") or []:
            of = (finding.get("evidence") or {}).get("share_of") or "step time"
            lines.append(f"- also `{finding['bottleneck']}` ({finding['share']:.0%} of {of}): "
                         f"{escape(finding['reason'])}")
        for memory_finding in ((report.get("memory") or {}).get("findings")) or []:
            lines.append(f"- memory: {escape(memory_finding['summary'])}")
        if report.get("findings") or ((report.get("memory") or {}).get("findings")):
            lines.append("")
    return lines


#: Markdown has no colour: a measured loss, or no gain, is marked as the gate's output marks a failure.
TONE_MARK = {"gain": "", "same": "⚠️ ", "loss": "❌ "}


def _advice_lines(advice: list) -> list:
    """The fixes as a table of short cells, their details as a list after it, then the top fix's code."""
    lines = []
    if advice:
        lines += ["| # | fix | speed-up | where |", "|---|---|---|---|"]
        for rank, item in enumerate(advice, 1):
            where = code(item["where"]) if item.get("where") else ""
            lines.append(f"| {rank} | {escape(item['title'])} (`{item['id']}`) | {TONE_MARK[gain_tone(item)]}{gain(item)} "
                         f"| {where} |")
        lines.append("")
        for rank, item in enumerate(advice, 1):
            if item.get("detail"):
                lines.append(f"{rank}. `{item['id']}`: {escape(item['detail'])}")
        lines.append("")
        top = advice[0]
        if top.get("snippet"):
            lines += [f"Top fix, `{top['id']}`:", "", "```python", top["snippet"], "```", ""]
    return lines


def _rank_lines(report: Report) -> list:
    """One table row per rank of a distributed job, the straggler marked; a GPU column only when known."""
    lines = []
    ranks = report.get("ranks") or []
    if ranks:
        straggler = ((report.get("job") or {}).get("straggler") or {}).get("rank")
        with_gpus = any(row.get("gpus") for row in ranks)
        lines += ["| rank | host | " + ("GPU | " if with_gpus else "") + "step time | own work | data wait "
                  "| waiting on others | verdict |", "|---|---|---|---|---|---|---|" + ("---|" if with_gpus else "")]
        for row in ranks:
            mark = " (straggler)" if row.get("rank") == straggler else ""
            gpu = f" {escape(rank_gpus_text(row))} |" if with_gpus else ""
            lines.append(f"| {row.get('rank')} | {escape(row.get('host'))} |{gpu} {seconds(row.get('mean_step_s'))} "
                         f"| {seconds(row.get('own_step_s'))} | {pct(row.get('data_wait_share'))} "
                         f"| {pct(row.get('waiting_share'))} | `{(row.get('verdict') or {}).get('bottleneck')}`{mark} |")
        lines.append("")
    return lines


def _steps_lines(steps: Mapping) -> list:
    """The step count and median, saying when evaluation passes were left out of them."""
    if not steps.get("count"):
        return []
    evaluation = steps.get("evaluation")
    left_out = (f" Evaluation ({evaluation['passes']} passes, {seconds(evaluation['seconds'])}) is left out of "
                "both." if evaluation else "")
    return [f"Steps: {steps['count']}, median {seconds(steps.get('median_step_s'))}, "
            f"data wait {pct(steps.get('data_wait_share'))} of step time.{left_out}", ""]


def _measure_lines(report: Report) -> list:
    """The measures table: CPU, disk, each GPU and the copies to it."""
    system = report.get("system", {})
    job = system.get("job", {})
    lines = ["| measure | value |", "|---|---|"]
    cores = job.get("cores_busy")
    lines.append(f"| job CPU | {'n/a' if cores is None else f'{cores:.2f}'} of {system.get('cpu_count')} cores |")
    lines.append(f"| machine iowait | {pct(system.get('cpu', {}).get('iowait'))} |")
    lines.append(f"| disk read | {rate(system.get('disk', {}).get('read_mb_s'))} |")
    lines.append(f"| job disk reads | {size(job.get('read_bytes'))} |")
    for gpu in system.get("gpus", []):
        lines.append(f"| {escape(gpu_name(gpu))} utilisation | {escape(utilisation_short(gpu))} |")
        if gpu.get("sm_active") is not None:
            lines.append(f"| {escape(gpu.get('label'))} SM activity (GPM) | {pct(gpu['sm_active'])} |")
    copies = report.get("copies") or {}
    if copies.get("count"):
        lines.append(f"| copies to GPU | {escape(copies_cell(copies))} |")
    if copies.get("count") and copies.get("device_wait_s"):
        lines.append(f"| host waiting for the device in copies | {pct(copies.get('device_wait_share'), 1)} of step "
                     "time (the device was busy: not copy time) |")
    lines.append("")
    return lines


def _note_lines(report: Report) -> list:
    """The longer texts after the table: copies, the job's GPUs and the notes."""
    system = report.get("system", {})
    copies = report.get("copies") or {}
    lines = [f"- {label}: {escape(text)}" for label, text in copies_rows(copies) if label != WAIT_LABEL]
    chosen = job_gpus_line(system.get("gpu_status") or {}, system.get("gpus"))
    if chosen:
        lines.append(f"- job's GPUs: {escape(chosen)}")
    for note in report.get("notes") or []:
        lines.append(f"- note: {escape(note)}")
    lines += [f"- {escape(line)}" for line in self_cost_lines(report)]
    return lines
