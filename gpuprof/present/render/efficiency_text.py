"""The efficiency section in words, the same for every format: FLOPs per step (counted, and the
per-token convention beside it), MFU with its inputs and the peak's source, energy per step and
per sample, GPU-hours and their idle part, and with a price the money."""

import html

from gpuprof.record.report_format import Report
from gpuprof.present.render.markdown_text import escape
from gpuprof.present.render.units import pct, seconds


def flops_text(value) -> str:
    if value is None:
        return "n/a"
    for factor, unit in ((1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value:.0f} FLOP"


def rate_text(tflops) -> str:
    if tflops is None:
        return "n/a"
    return f"{tflops:.3g} TFLOPS" if tflops >= 0.1 else f"{tflops * 1e3:.3g} GFLOPS"


def rows(report: Report) -> list:
    """[(label, text)] for the section, or [] when the report has none."""
    section = report.get("efficiency")
    if not section:
        return []
    out = [("FLOPs per step", _flops_row(section))]
    convention = section.get("transformer")
    if convention and convention.get("flops_per_step"):
        out.append(("6N + 12LHQT", f"{flops_text(convention['flops_per_step'])} per step ("
                    f"{flops_text(convention['flops_per_token'])} per token x {convention['tokens_per_step']} tokens; "
                    f"N {convention['params']:,} parameters, L {convention['layers']}, H {convention['heads']}, "
                    f"Q {convention['head_dim']}, T {convention['seq_len']})"))
    if section.get("flops_per_step"):
        out.append(("MFU", mfu_row(section)))
    out.append(("energy", _energy_row(section.get("energy") or {})))
    if section.get("hours") is not None:
        out.append((f"{section['hours_of']}-hours", _hours_row(section)))
    if section.get("price_per_hour") is not None:
        out.append(("cost", _cost_row(section)))
    return out


def _flops_row(section: dict) -> str:
    counted = section.get("counted") or {}
    if not section.get("flops_per_step"):
        return f"not counted: {counted.get('skipped') or 'no step was counted'}"
    text = f"{flops_text(section['flops_per_step'])} counted (optimizer step {counted.get('step')}, forward and backward)"
    uncounted = counted.get("uncounted") or {}
    if uncounted:
        text += f"; not counted, no FLOP formula: {', '.join(sorted(uncounted))} (the count is short by their work)"
    return text


def mfu_row(section: dict) -> str:
    peak = section.get("peak") or {}
    inputs = (f"{rate_text(section.get('achieved_tflops'))} achieved over the mean step of "
              f"{seconds(section.get('step_s'))}")
    if section.get("mfu") is None:
        return (f"unknown: peak unknown for {peak.get('dtype', 'this dtype').upper()} ({inputs}; give "
                "--peak-tflops, or measure it with gpuprof doctor)")
    return (f"{pct(section['mfu'], 1 if section['mfu'] >= 0.01 else 2)} ({inputs}; peak {rate_text(peak.get('tflops'))} "
            f"{peak.get('dtype', '').upper()}, {peak.get('source')})")


def _energy_row(energy: dict) -> str:
    if energy.get("j_per_step") is None:
        return "not measured (no NVML energy counter, no readable RAPL)"
    per_sample = f", {energy['j_per_sample']:.3g} J per sample" if energy.get("j_per_sample") is not None else ""
    return f"{energy['j_per_step']:.3g} J per step{per_sample} ({energy.get('source')})"


def _hours_row(section: dict) -> str:
    text = f"{section['hours']:.4g} ({section['devices']} device{'s' if section['devices'] != 1 else ''} over the run)"
    if section.get("idle_share") is not None:
        text += f"; idle {pct(section['idle_share'])} of the wall time: {section['idle_hours']:.4g} GPU-hours"
    return text


def _cost_row(section: dict) -> str:
    price = section["price_per_hour"]
    text = f"{section.get('cost', 0):.4g} at {price:g} per {section['hours_of']}-hour"
    if section.get("idle_cost") is not None:
        text += f"; {section['idle_cost']:.4g} of it idle"
    savings = section.get("savings") or []
    if savings:
        text += "; fixes would save " + ", ".join(f"{s['fix']} {s['saving']:.4g} (at {s['speedup']:.2f}x)"
                                                  for s in savings) + " per run like this one"
    return text


def console_table(report: Report):
    """The console's "Efficiency" table, or None."""
    found = rows(report)
    if not found:
        return None
    from rich.table import Table
    table = Table(title="\nEfficiency", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    for label, text in found:
        table.add_row(label, text)
    return table


def markdown_lines(report: Report) -> list:
    found = rows(report)
    if not found:
        return []
    return ["| efficiency | value |", "|---|---|"] + [f"| {escape(label)} | {escape(text)} |" for label, text in found] + [""]


def html_section(report: Report) -> str:
    found = rows(report)
    if not found:
        return ""
    body = "".join(f"<tr><th>{html.escape(label)}</th><td>{html.escape(text)}</td></tr>" for label, text in found)
    return f'<section><h2>Efficiency</h2><table class="figures">{body}</table></section>'
