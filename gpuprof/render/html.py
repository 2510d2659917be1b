"""The report as one self-contained HTML file: the verdict and the ranked fixes first, then plots of
the run over time. No network at view time (no CDN, no fonts to fetch): styles and the few lines of
script are inline, and the charts are SVG drawn here (gpuprof.render.svg), so the page prints as
it shows and reads without script."""

import html

from gpuprof.analysis.timeline import build_timeline
from gpuprof.render.svg import PALETTE, Series, bar_chart, line_chart
from gpuprof.render.units import command_line, gain, pct, plural, rate, scaled, seconds, size

MS = 1000.0


def render_html(record: dict, report: dict, tried: dict = None) -> str:
    """The page. `tried`: a `gpuprof try` record (gpuprof.try/1) of this run's program, if any."""
    timeline = build_timeline(record, report)
    frame = _frame(timeline)
    plots = [plot for plot in (
        _step_plot(timeline, report, frame),
        _rank_plot(timeline, report, frame),
        _worker_plot(timeline, frame),
        _cpu_plot(timeline, frame),
        _disk_plot(timeline, frame),
        _memory_plot(timeline, frame),
        *_gpu_plots(timeline, frame),
        _pressure_plot(timeline, frame),
        _try_plot(report, tried),
    ) if plot]
    body = "".join([_header(report), _verdict(report), _fixes(report), _ranks(report), _figures(report),
                    '<h2>Over time</h2>' if plots else "", "".join(plots), _notes(report)])
    title = f"gpuprof: {html.escape(command_line(report))}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{title}</title><style>{STYLE}</style></head>'
            f'<body><main>{body}</main><div id="readout" hidden></div><script>{SCRIPT}</script></body></html>\n')


def _esc(value) -> str:
    return html.escape(str(value if value is not None else ""))


def _header(report: dict) -> str:
    facts = [f"{_esc(report.get('outcome'))} after {seconds(report.get('duration_s'))}"]
    if report.get("started_at"):
        facts.append(f"started {_esc(report['started_at'])}")
    facts.append(f"gpuprof {_esc(report.get('gpuprof_version'))}")
    return (f'<header><h1>gpuprof report</h1><p class="command"><code>{_esc(command_line(report))}</code></p>'
            f'<p class="facts">{" · ".join(facts)}</p></header>')


def _verdict(report: dict) -> str:
    verdict = report.get("verdict") or {}
    bottleneck = verdict.get("bottleneck")
    kind = "good" if bottleneck == "compute" else ("none" if not bottleneck else "warn")
    parts = [f'<section class="verdict {kind}"><h2>Verdict</h2>']
    if bottleneck:
        parts.append(f'<p class="id"><code>{_esc(bottleneck)}</code> · confidence {verdict.get("confidence", 0):.0%}</p>')
    parts.append(f'<p class="summary">{_esc(verdict.get("summary") or "No verdict.")}</p>')
    if verdict.get("corrected"):
        parts.append(f'<p class="caution">{_esc(verdict["corrected"])}</p>')
    extra = [f'also <code>{_esc(f["bottleneck"])}</code> ({f["share"]:.0%} of step time): {_esc(f["reason"])}'
             for f in report.get("findings") or []]
    extra += [f'memory: {_esc(f["summary"])}' for f in ((report.get("memory") or {}).get("findings")) or []]
    if extra:
        parts.append("<ul>" + "".join(f"<li>{e}</li>" for e in extra) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _fixes(report: dict) -> str:
    advice = report.get("advice") or []
    verdict = report.get("verdict") or {}
    if not advice:
        if verdict.get("bottleneck") == "compute":
            from gpuprof.render.console import next_steps_for_compute
            return f'<section><h2>Fixes</h2><p>{_esc(next_steps_for_compute(report))}</p></section>'
        return ""
    heading = ("Fixes, ranked by the memory each frees" if verdict.get("bottleneck") == "memory.oom" else
               "Fixes, ranked by estimated speed-up (each an upper bound)")
    items = []
    for item in advice:
        parts = [f'<li><p class="fix"><strong>{_esc(item.get("title"))}</strong> '
                 f'<span class="gain">{_esc(gain(item))}</span> <code class="fixid">{_esc(item.get("id"))}</code></p>']
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
    return f'<section><h2>{heading}</h2><ol class="fixes">{"".join(items)}</ol></section>'


def _ranks(report: dict) -> str:
    """One row per rank of a distributed job, the straggler marked."""
    rows = report.get("ranks") or []
    if not rows:
        return ""
    straggler = ((report.get("job") or {}).get("straggler") or {}).get("rank")
    head = "".join(f"<th>{h}</th>" for h in ("rank", "host", "step time", "own work", "data wait",
                                             "waiting on others", "verdict"))
    body = "".join(
        f"<tr><td>{_esc(r.get('rank'))}</td><td>{_esc(r.get('host'))}</td><td>{seconds(r.get('mean_step_s'))}</td>"
        f"<td>{seconds(r.get('own_step_s'))}</td><td>{pct(r.get('data_wait_share'))}</td>"
        f"<td>{pct(r.get('waiting_share'))}</td><td><code>{_esc((r.get('verdict') or {}).get('bottleneck'))}</code>"
        f"{' <strong>straggler</strong>' if r.get('rank') == straggler else ''}</td></tr>" for r in rows)
    return f'<section><h2>Ranks</h2><table class="small"><tr>{head}</tr>{body}</table></section>'


def _figures(report: dict) -> str:
    """The numbers the verdict rests on, as a short table."""
    steps = report.get("steps") or {}
    system = report.get("system") or {}
    job = system.get("job") or {}
    rows = []
    if steps.get("count"):
        rows.append(("steps", f"{steps['count']} ({steps.get('measured', 0)} measured, from {steps.get('source')})"))
        rows.append(("step time", f"median {seconds(steps.get('median_step_s'))}, mean {seconds(steps.get('mean_step_s'))}"))
        rows.append(("waiting for data", f"{pct(steps.get('data_wait_share'))} of step time"))
        if steps.get("samples_per_second"):
            rows.append(("throughput", f"{steps['samples_per_second']:.1f} samples/s"))
    for loader in (report.get("dataloaders") or [])[:3]:
        producer = loader.get("producer") or {}
        rows.append((f"DataLoader {loader.get('where')}",
                     f"num_workers={loader.get('num_workers')}, batch_size={loader.get('batch_size')}, "
                     f"{plural(loader.get('batches') or 0, 'batch', 'batches')}, waited {seconds(loader.get('wait_s'))}, "
                     f"a batch takes {seconds(producer.get('wall_per_batch_s'))} to make "
                     f"({pct(producer.get('cpu_per_wall'))} of it on a CPU)"))
    cores = job.get("cores_busy")
    rows.append(("job CPU", f"{'n/a' if cores is None else f'{cores:.2f}'} of {system.get('cpu_count')} cores busy"))
    rows.append(("disk", f"{rate((system.get('disk') or {}).get('read_mb_s'))} read; the job read "
                         f"{size(job.get('read_bytes'))} from disk"))
    rows.append(("memory", f"peak {size(job.get('rss_peak_bytes'))} over the job"))
    for gpu in system.get("gpus") or []:
        rows.append((f"GPU {gpu.get('index')}", f"{gpu.get('name')}: utilisation {pct(gpu.get('util_gpu'))}, "
                                                  f"memory up to {size(gpu.get('mem_used_max_bytes'))}"))
    table = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    return f'<section><h2>Evidence</h2><table class="figures">{table}</table></section>'


def _notes(report: dict) -> str:
    notes = report.get("notes") or []
    if not notes:
        return ""
    return '<section class="notes"><h2>Notes</h2><ul>' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul></section>"


def _figure(title: str, chart: str, caption: str = "") -> str:
    if not chart:
        return ""
    caption = f'<figcaption>{caption}</figcaption>' if caption else ""
    return f'<figure><h3>{_esc(title)}</h3>{chart}{caption}</figure>'


def _frame(timeline) -> dict:
    """What every chart over time shares: the run's whole span on x, and the measured window shaded."""
    window = timeline.get("window")
    band = None
    if window and window[1] > window[0]:
        band = (window[0], window[1], "measured window (start-up and warm-up steps left out)")
    duration = timeline.get("duration_s")
    return {"band": band, "x_range": (0.0, duration) if duration else None}


def _per_item(intervals, value):
    """(x, y) per interval: its end, and `value(interval)` per item (a block's mean)."""
    return [(i["end"], value(i) / i["n"]) for i in intervals]


def _step_plot(timeline, report, frame) -> str:
    steps = timeline["steps"]
    if not steps:
        return ""
    training = (report.get("steps") or {}).get("pid")
    step_points = _per_item(steps[1:] or steps, lambda s: (s["end"] - s["start"]) * MS)
    waits = [w for w in timeline["waits"] if w["pid"] == training]
    series = [Series("step time", *zip(*step_points))]
    if waits:
        series.append(Series("wait for the batch", *zip(*_per_item(waits, lambda w: w["wait"] * MS))))
    return _figure("Step time and data wait", line_chart(series, "ms", **frame, label="step time and data wait"),
                   "Each point is one step (the start-up step is left out) or one wait for a batch; the shaded "
                   "part is the measured window. Later points of a long run stand for blocks of steps (their mean).")


def _rank_plot(timeline, report, frame) -> str:
    """Each rank's wait for its batches: the straggler's stands out (its step time alone would not)."""
    rows = report.get("ranks") or []
    series = []
    for row in rows:
        waits = [w for w in timeline["waits"] if w["pid"] == row.get("pid")]
        if waits:
            series.append(Series(f"rank {row.get('rank')}", *zip(*_per_item(waits, lambda w: w["wait"] * MS))))
    if len(series) < 2:
        return ""
    return _figure("Wait for each batch, per rank", line_chart(series, "ms", **frame, label="data wait per rank"),
                   "In a synchronous job every rank's step lasts as long as the slowest one's; the rank that waits "
                   "for its data is the one the others wait for.")


def _worker_plot(timeline, frame) -> str:
    by_producer = {}
    names = {p["pid"]: p["name"] for p in timeline["processes"]}
    for fetch in timeline["fetches"]:
        key = fetch["pid"]
        by_producer.setdefault(key, []).append(fetch)
    if not by_producer:
        return ""
    series = []
    for pid, fetches in sorted(by_producer.items(), key=lambda kv: names.get(kv[0], "")):
        label = names.get(pid, f"pid {pid}")
        label = "the training process" if label == "training" else f"{label.split(' of ')[0]} (pid {pid})"
        series.append(Series(label, *zip(*_per_item(fetches, lambda f: f["wall"] * MS))))
    rows = []
    for s, fetches in zip(series, sorted(by_producer.values(), key=lambda f: names.get(f[0]["pid"], ""))):
        made = sum(f["n"] for f in fetches)
        wall = sum(f["wall"] for f in fetches)
        cpu = sum(f["cpu"] for f in fetches)
        rows.append(f"<tr><td>{_esc(s.name)}</td><td>{made}</td><td>{seconds(wall / made if made else None)}</td>"
                    f"<td>{pct(cpu / wall if wall else None)}</td></tr>")
    table = ('<table class="small"><tr><th>producer</th><th>batches</th><th>time per batch</th><th>on a CPU</th></tr>'
             + "".join(rows) + "</table>")
    return _figure("Time to make each batch, per producer",
                   line_chart(series, "ms", **frame, label="time to make each batch") + table,
                   "Wall time a DataLoader worker (or the training process, with num_workers=0) spent making "
                   "each batch; a worker slower than the others, or times that grow, show here.")


def _cpu_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    t = system["t"]
    cpu_count = system.get("cpu_count") or 1
    layers = [Series(name, t, scaled(system[f"cpu_{key}"], 100), color)
              for name, key, color in (("user", "user", PALETTE[0]), ("system", "system", PALETTE[1]),
                                       ("iowait", "iowait", PALETTE[3]))]
    chart = line_chart(layers, "% of machine", **frame, stacked=True, y_max=100, label="machine CPU")
    job = line_chart([Series(f"the job (cores busy, of {cpu_count})", t, system["job_cores"], PALETTE[2])],
                     "cores", **frame, y_max=cpu_count, label="job CPU")
    return _figure("CPU", chart + job, "Top: the whole machine's CPU time by kind (iowait: idle while a disk read "
                   "was pending). Bottom: cores the job's processes kept busy.")


def _disk_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    t = system["t"]
    series = [Series("all disks", t, system["disk_read_mb_s"]), Series("the job's real reads", t, system["job_read_mb_s"])]
    return _figure("Disk reads", line_chart(series, "MB/s", **frame, label="disk reads"),
                   "Reads that reached a disk (the page cache serves the rest).")


def _memory_plot(timeline, frame) -> str:
    system = timeline["system"]
    series = []
    if system:
        series.append(Series("the job's resident memory (all processes)", system["t"],
                             scaled(system["job_rss"], 1e-6)))
    by_pid = {}
    for point in timeline["memory"]:
        by_pid.setdefault(point["pid"], []).append(point)
    for pid, points in by_pid.items():
        if any(p["alloc"] is not None for p in points):
            series.append(Series(f"CUDA allocated (pid {pid})", [p["t"] for p in points],
                                 [p["alloc"] / 1e6 if p["alloc"] is not None else None for p in points]))
    return _figure("Memory", line_chart(series, "MB", **frame, label="memory"), "") if series else ""


def _gpu_plots(timeline, frame) -> list:
    out = []
    for gpu in timeline["gpus"]:
        util = [Series("utilisation", gpu["t"], scaled(gpu["util_gpu"], 100)),
                Series("memory bandwidth", gpu["t"], scaled(gpu["util_memory"], 100))]
        total = gpu.get("mem_total")
        memory = [Series("memory used", gpu["t"], [v / total * 100 if v is not None and total else None
                                                  for v in gpu["mem_used"]], PALETTE[2])]
        name = f"GPU {gpu['index']}" + (f" ({gpu['name']})" if gpu.get("name") else "")
        out.append(_figure(name, line_chart(util, "%", **frame, y_max=100, label=f"{name} utilisation")
                           + line_chart(memory, "% of memory", **frame, y_max=100, label=f"{name} memory"),
                           "Utilisation: the share of time a kernel ran. Memory: used of the GPU's total."))
    return out


def _pressure_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    series = [Series(name, system["t"], scaled(system[key], 100))
              for name, key in (("CPU", "psi_cpu_some"), ("I/O", "psi_io_some"), ("memory", "psi_memory_some"))]
    if not any(v for s in series for v in s.values()):
        return ""
    return _figure("Pressure (PSI)", line_chart(series, "% stalled", **frame, label="pressure"),
                   "The share of time some task waited for a CPU, for I/O or for memory.")


def _try_plot(report: dict, tried: dict) -> str:
    """Measured speed-ups of the fixes `gpuprof try` (or `run --verify`) applied, with the estimates."""
    rows = (tried or {}).get("rows") or []
    rows = rows[1:] if rows and rows[0].get("label") == "baseline" else rows
    if not rows:
        rows = ((report.get("verified") or {}).get("rows")) or []
    bars = [(row.get("label") or row.get("fix") or "?", row.get("speedup"), row.get("speedup_min"),
             row.get("speedup_max"), row.get("estimate")) for row in rows]
    chart = bar_chart(bars, "x", reference=1.0, label="measured speed-ups")
    return _figure("Fixes measured with gpuprof try", chart,
                   "Bars: measured speed-up of each change against the unchanged program (the line through a bar: "
                   "its spread over rounds; the tick: gpuprof's estimate; the dashed line: no change).")


STYLE = """
:root{--ink:#1d2329;--soft:#56606b;--rule:#d9dee3;--warn:#9a5b00;--good:#17663a;--bg:#fff;--panel:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:860px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--rule);padding-bottom:4px}
h3{font-size:15px;margin:0 0 4px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.command code{background:var(--panel);padding:2px 6px;border-radius:4px;word-break:break-all}
.facts,.why,figcaption,.id{color:var(--soft);font-size:13px}
.verdict{border-left:5px solid var(--rule);padding:2px 16px 8px;background:var(--panel);border-radius:4px}
.verdict h2{border:0;margin-top:8px}
.verdict.warn{border-color:#e69f00}.verdict.good{border-color:#009e73}
.summary{font-size:17px;font-weight:600;margin:4px 0}
.caution{color:var(--warn)}
ol.fixes{padding-left:22px}ol.fixes li{margin-bottom:14px}
.fix{margin:0}.gain{color:var(--good);font-weight:600;margin-left:6px}.fixid{color:var(--soft);margin-left:6px}
pre{background:var(--panel);padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid var(--rule)}
table.figures th{width:30%;font-weight:600;color:var(--soft)}
table.small{font-size:13px;margin-top:6px}
figure{margin:18px 0 22px;break-inside:avoid;page-break-inside:avoid}
svg.plot{width:100%;height:auto;display:block;background:#fff}
svg .grid{stroke:#e8ebee;stroke-width:1}svg .axis{stroke:#8a939c;stroke-width:1}
svg .tick,svg .unit,svg .name,svg .value{font:11px system-ui,sans-serif;fill:#56606b}
svg .name,svg .value{font-size:12px;fill:#1d2329}
svg .series{stroke-width:1.6;stroke-linejoin:round}svg .area{fill-opacity:.55;stroke-width:.8}
svg .band{fill:#0072b2;fill-opacity:.06}
svg .range{stroke:#1d2329;stroke-width:1.5}svg .marker{stroke:#d55e00;stroke-width:3}
svg .reference{stroke:#56606b;stroke-dasharray:4 3}
svg .cursor{stroke:#1d2329;stroke-width:.8;stroke-dasharray:2 2}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin:2px 0 0 62px;color:var(--soft)}
.swatch{display:inline-block;width:12px;height:3px;margin-right:6px;vertical-align:middle}
#readout{position:fixed;pointer-events:none;background:#fff;border:1px solid var(--rule);border-radius:4px;
 padding:4px 8px;font-size:12px;box-shadow:0 2px 6px rgba(0,0,0,.12)}
@media print{body{font-size:12px}main{max-width:none;padding:0}#readout{display:none}
 .verdict{background:none}pre{white-space:pre-wrap}}
"""

# Values under the pointer: the nearest point of each series, read from the chart's data-points.
SCRIPT = """
(function(){
  var readout=document.getElementById('readout');
  var ns='http://www.w3.org/2000/svg';
  function esc(t){var d=document.createElement('div');d.textContent=String(t);return d.innerHTML;}
  document.querySelectorAll('svg.plot[data-points]').forEach(function(svg){
    var data=JSON.parse(svg.getAttribute('data-points'));
    var x0=+svg.dataset.x0,x1=+svg.dataset.x1,left=+svg.dataset.left,width=+svg.dataset.width;
    var unit=svg.dataset.unit;
    var cursor=document.createElementNS(ns,'line');
    cursor.setAttribute('class','cursor');cursor.setAttribute('y1',svg.dataset.top);cursor.setAttribute('y2',svg.dataset.bottom);
    cursor.style.display='none';svg.appendChild(cursor);
    svg.addEventListener('mousemove',function(ev){
      var box=svg.getBoundingClientRect();
      var vx=(ev.clientX-box.left)/box.width*svg.viewBox.baseVal.width;
      var x=x0+(vx-left)/width*(x1-x0);
      if(vx<left||vx>left+width){cursor.style.display='none';readout.hidden=true;return;}
      cursor.setAttribute('x1',vx);cursor.setAttribute('x2',vx);cursor.style.display='';
      var lines=['<b>'+x.toFixed(2)+' s</b>'];
      data.forEach(function(s){
        var best=null;
        s.points.forEach(function(p){if(p[1]!==null&&(best===null||Math.abs(p[0]-x)<Math.abs(best[0]-x)))best=p;});
        if(best)lines.push('<span style="color:'+s.color+'">\\u25a0</span> '+esc(s.name)+': '+(+best[1].toPrecision(4))+' '+esc(unit));
      });
      readout.innerHTML=lines.join('<br>');readout.hidden=false;
      readout.style.left=(ev.clientX+14)+'px';readout.style.top=(ev.clientY+14)+'px';
    });
    svg.addEventListener('mouseleave',function(){cursor.style.display='none';readout.hidden=true;});
  });
})();
"""
