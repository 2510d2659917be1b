"""The `gpuprof try` record as Markdown, for a pull-request comment."""

from gpuprof.present.render.markdown_text import code, escape
from gpuprof.present.render.try_text import estimate_cell, lines, speedup_cell, verdict_cell
from gpuprof.present.render.units import seconds


def render(record: dict, options) -> str:
    return render_try_markdown(record)


def render_try_markdown(record: dict) -> str:
    s = record.get("settings") or {}
    out = [f"### gpuprof try: {code(' '.join(record.get('command') or []))}", "",
           f"{s.get('rounds')} rounds, {s.get('steps')} measured steps after {s.get('warmup_steps')} warm-up per run.", "",
           "| variant | step (mean) | steps/s | measured speed-up | estimate | verdict |",
           "|---|---|---|---|---|---|"]
    for row in record.get("rows") or []:
        rate = f"{row['steps_per_s']:.1f}" if row.get("steps_per_s") else "n/a"
        out.append(f"| {escape(row['label'])} | {seconds(row.get('step_time_s'))} | {rate} | {speedup_cell(row)} | "
                   f"{estimate_cell(row)} | {verdict_cell(row)} |")
    out.append("")
    out += [f"- {escape(line)}" for line in lines(record)]
    return "\n".join(out) + "\n"
