"""The report as one self-contained HTML file: the verdict and the ranked fixes first, then plots of
the run over time. No network at view time (no CDN, no fonts to fetch): styles and the few lines of
script are inline, and the charts are SVG drawn here (gpuprof.present.render.svg), so the page prints as
it shows and reads without script."""

import html
from typing import Mapping, Optional

from gpuprof.record.report_format import Report
from gpuprof.present.render.efficiency_text import html_section as efficiency_html
from gpuprof.present.render.self_cost_text import html_line as self_cost_html
from gpuprof.advise.wording import advice_heading, next_steps_for_compute, no_fix_helped_line
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.sections.timeline import build_timeline
from gpuprof.present.render.copies_text import copies_rows
from gpuprof.present.render.gpu_text import gpu_name, gpu_phrases, job_gpus_line, rank_gpus_text
from gpuprof.present.render.html_assets import SCRIPT, STYLE
from gpuprof.present.render.html_plots import (cpu_plot, disk_plot, gpu_plots, memory_plot, pressure_plot,
                                       rank_plot, step_plot, time_frame, try_plot, worker_plot)
from gpuprof.present.render.units import (command_line, gain, gain_tone, other_interpreter, pct, plural, producing_cpu, rate,
                                  seconds, size, spread_text)


def render(report: Report, options) -> str:
    return render_html(options.record, report, tried=options.tried)


def render_html(record: dict, report: Report, tried: Optional[dict] = None) -> str:
    """The page. `tried`: a `gpuprof try` record (gpuprof.try/1) of this run's program, if any."""
    timeline = build_timeline(record, report)
    frame = time_frame(timeline)
    plots = [plot for plot in (
        step_plot(timeline, report, frame),
        rank_plot(timeline, report, frame),
        worker_plot(timeline, frame),
        cpu_plot(timeline, frame),
        disk_plot(timeline, frame),
        memory_plot(timeline, frame),
        *gpu_plots(timeline, frame),
        pressure_plot(timeline, frame),
        try_plot(report, tried),
    ) if plot]
    body = "".join([_header(report), _verdict(report), _fixes(report), _ranks(report), _figures(report), efficiency_html(report),
                    '<h2>Over time</h2>' if plots else "", "".join(plots), _notes(report), self_cost_html(report)])
    title = f"gpuprof: {html.escape(command_line(report))}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{title}</title><style>{STYLE}</style></head>'
            f'<body><main>{body}</main><div id="readout" hidden></div><script>{SCRIPT}</script></body></html>\n')


def _esc(value) -> str:
    return html.escape(str(value if value is not None else ""))


def _header(report: Report) -> str:
    facts = [f"{_esc(report.get('outcome'))} after {seconds(report.get('duration_s'))}"]
    if report.get("started_at"):
        facts.append(f"started {_esc(report['started_at'])}")
    facts.append(f"gpuprof {_esc(report.get('gpuprof_version'))}")
    if other_interpreter(report):
        facts.append(_esc(other_interpreter(report)))
    return (f'<header><h1>gpuprof report</h1><p class="command"><code>{_esc(command_line(report))}</code></p>'
            f'<p class="facts">{" · ".join(facts)}</p></header>')


def _verdict(report: Report) -> str:
    verdict = report.get("verdict") or {}
    bottleneck = verdict.get("bottleneck")
    kind = "good" if bottleneck == bottlenecks.COMPUTE.id else ("none" if not bottleneck else "warn")
    parts = [f'<section class="verdict {kind}"><h2>Verdict</h2>']
    if bottleneck:
        parts.append(f'<p class="id"><code>{_esc(bottleneck)}</code> · confidence {verdict.get("confidence", 0):.0%}</p>')
    parts.append(f'<p class="summary">{_esc(verdict.get("summary") or "No verdict.")}</p>')
    if verdict.get("corrected"):
        parts.append(f'<p class="caution">{_esc(verdict["corrected"])}</p>')
    if verdict.get("busy_machine"):
        parts.append(f'<p class="caution">Busy machine: {_esc(verdict["busy_machine"])}</p>')
    extra = [f'also <code>{_esc(f["bottleneck"])}</code> ({f["share"]:.0%} of '
             f'{_esc((f.get("evidence") or {}).get("share_of") or "step time")}): {_esc(f["reason"])}'
             for f in report.get("findings") or []]
    extra += [f'memory: {_esc(f["summary"])}' for f in ((report.get("memory") or {}).get("findings")) or []]
    if extra:
        parts.append("<ul>" + "".join(f"<li>{e}</li>" for e in extra) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _gain_class(item: Mapping) -> str:
    """A measured loss in red, no measured gain in amber, a gain in green (html_assets' styles)."""
    tone = gain_tone(item)
    return "gain" if tone == "gain" else f"gain {tone}"


def _fixes(report: Report) -> str:
    advice = report.get("advice") or []
    verdict = report.get("verdict") or {}
    if not advice:
        if verdict.get("bottleneck") == bottlenecks.COMPUTE.id:
            return f'<section><h2>Fixes</h2><p>{_esc(next_steps_for_compute(report))}</p></section>'
        return ""
    heading = advice_heading(report)
    items = []
    for item in advice:
        parts = [f'<li><p class="fix"><strong>{_esc(item.get("title"))}</strong> '
                 f'<span class="{_gain_class(item)}">{_esc(gain(item))}</span> '
                 f'<code class="fixid">{_esc(item.get("id"))}</code></p>']
        detail = _esc(item.get("detail"))
        if item.get("where"):
            detail = f'at <code>{_esc(item["where"])}</code>: {detail}'
        parts.append(f"<p>{detail}</p>")
        if item.get("snippet"):
            parts.append(f'<pre><code>{_esc(item["snippet"])}</code></pre>')
        if item.get("why"):
            parts.append(f'<p class="why">why: {_esc(item["why"])}</p>')
        if item.get("ranked_by"):
            parts.append(f'<p class="why">ranked {_esc(item["ranked_by"])}</p>')
        items.append("".join(parts) + "</li>")
    helped = f'<p class="gain loss">{_esc(no_fix_helped_line(report))}</p>' if no_fix_helped_line(report) else ""
    return f'<section><h2>{heading}</h2>{helped}<ol class="fixes">{"".join(items)}</ol></section>'


def _ranks(report: Report) -> str:
    """One row per rank of a distributed job, the straggler marked."""
    rows = report.get("ranks") or []
    if not rows:
        return ""
    straggler = ((report.get("job") or {}).get("straggler") or {}).get("rank")
    with_gpus = any(r.get("gpus") for r in rows)
    head = "".join(f"<th>{h}</th>" for h in ("rank", "host") + (("GPU",) if with_gpus else ()) + (
        "step time", "own work", "data wait", "waiting on others", "verdict"))
    body = "".join(
        f"<tr><td>{_esc(r.get('rank'))}</td><td>{_esc(r.get('host'))}</td>"
        + (f"<td>{_esc(rank_gpus_text(r))}</td>" if with_gpus else "") + f"<td>{seconds(r.get('mean_step_s'))}</td>"
        f"<td>{seconds(r.get('own_step_s'))}</td><td>{pct(r.get('data_wait_share'))}</td>"
        f"<td>{pct(r.get('waiting_share'))}</td><td><code>{_esc((r.get('verdict') or {}).get('bottleneck'))}</code>"
        f"{' <strong>straggler</strong>' if r.get('rank') == straggler else ''}</td></tr>" for r in rows)
    return f'<section><h2>Ranks</h2><table class="small"><tr>{head}</tr>{body}</table></section>'


def _figures(report: Report) -> str:
    """The numbers the verdict rests on, as a short table."""
    steps = report.get("steps") or {}
    system = report.get("system") or {}
    job = system.get("job") or {}
    rows = []
    if steps.get("count"):
        rows.append(("steps", f"{steps['count']} ({steps.get('measured', 0)} measured, from {steps.get('source')})"))
        rows.append(("step time", f"median {seconds(steps.get('median_step_s'))}, mean {seconds(steps.get('mean_step_s'))}{spread_text(steps)}"))
        rows.append(("waiting for data", f"{pct(steps.get('data_wait_share'))} of step time"))
        if steps.get("samples_per_second"):
            rows.append(("throughput", f"{steps['samples_per_second']:.1f} samples/s"))
    for loader in (report.get("dataloaders") or [])[:3]:
        producer = loader.get("producer") or {}
        rows.append((f"DataLoader {loader.get('where')}",
                     f"num_workers={loader.get('num_workers')}, batch_size={loader.get('batch_size')}, "
                     f"{plural(loader.get('batches') or 0, 'batch', 'batches')}, waited {seconds(loader.get('wait_s'))}, "
                     f"a batch takes {seconds(producer.get('wall_per_batch_s'))} to make "
                     f"({producing_cpu(producer.get('cpu_per_wall'), system.get('cpu_count'))} of it on a CPU)"))
    rows.extend(copies_rows(report.get("copies")))
    cores = job.get("cores_busy")
    rows.append(("job CPU", f"{'n/a' if cores is None else f'{cores:.2f}'} of {system.get('cpu_count')} cores busy"))
    rows.append(("disk", f"{rate((system.get('disk') or {}).get('read_mb_s'))} read; the job read "
                         f"{size(job.get('read_bytes'))} from disk"))
    rows.append(("memory", f"peak {size(job.get('rss_peak_bytes'))} over the job"))
    for gpu in system.get("gpus") or []:
        rows.append((gpu_name(gpu), "; ".join(gpu_phrases(gpu))))
    chosen = job_gpus_line(system.get("gpu_status") or {}, system.get("gpus"))
    if chosen:
        rows.append(("job's GPUs", chosen))
    table = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    return f'<section><h2>Evidence</h2><table class="figures">{table}</table></section>'


def _notes(report: Report) -> str:
    notes = report.get("notes") or []
    if not notes:
        return ""
    return '<section class="notes"><h2>Notes</h2><ul>' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul></section>"
