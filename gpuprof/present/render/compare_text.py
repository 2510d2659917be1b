"""`gpuprof compare` as text: the console (plain lines wrapped to a width, 100 columns when piped)
and Markdown for a pull-request comment. Both read the comparison dict (gpuprof.compare/1) and
share their sentences, so the two never word a result differently."""

import math
import textwrap

from gpuprof.stats.noise import SAME
from gpuprof.gate.compare import PROVENANCE_FACTS
from gpuprof.present.render.units import pct, seconds, size

WIDTH = 100


def headline(cmp: dict) -> str:
    """The one sentence a reader needs: faster, slower, within noise, disturbed, or not measured."""
    a, b, step, call = cmp["a"], cmp["b"], cmp["step"], cmp["call"]
    if call == "not measured":
        missing = " and ".join(name for name, s in (("A", a), ("B", b)) if not s["step_s"])
        return f"no step time to compare: {missing} measured no training steps"
    kind = b.get("statistic") or "median"          # one measure on both sides (gate.decide.step_kind)
    times = f"{kind} step {seconds(b['step_s'])} vs {seconds(a['step_s'])}, {step['change']:+.1%}"
    measured = (f"B measured {step['speedup']:.2f}x faster" if step["change"] < 0 else
                f"B measured {step['ratio']:.2f}x slower")
    factor = math.exp(step["counts_beyond"])      # the bound is on the log ratio: a factor either way
    beyond = (f"a change counts beyond ±{step['counts_beyond']:.1%}" if factor < 1.2 else
              f"a change counts beyond a factor of {factor:.2f} either way")
    if call == "faster":
        return f"faster: B is {step['speedup']:.2f}x faster than A ({times}); beyond the noise ({beyond})"
    if call == "slower":
        return f"slower: B is {step['ratio']:.2f}x slower than A ({times}); beyond the noise ({beyond})"
    if call == "disturbed":
        seen = " and ".join(f"{s['disturbed']['other_cores']:.1f} of {s['disturbed']['cpu_count']} cores busy during "
                            f"{name}'s run" for name, s in (("A", a), ("B", b)) if s["disturbed"])
        return (f"disturbed: other processes kept {seen}, so no faster or slower call ({times}: {measured}); "
                "compare runs from a quiet machine")
    if abs(step["change"]) <= SAME:
        return f"within noise: B takes as long as A ({times}; {beyond})"
    return f"within noise: {measured} than A, but not beyond the noise ({times}; {beyond})"


def step_text(s: dict) -> str:
    if not s["step_s"]:
        return "no steps measured"
    noise = f" ±{s['noise']:.1%}" if s["noise"] is not None else ""
    span = f"{seconds(s['interval_s'][0])} to {seconds(s['interval_s'][1])}; " if s.get("interval_s") else ""
    runs = f"{s['runs']} runs" if s["runs"] > 1 else "1 run"
    steady = f", {s['steady_steps']} steady steps" if s.get("steady_steps") else ""
    kind = "mean " if s.get("statistic") == "mean" else ""
    return f"{kind}{seconds(s['step_s'])}{noise} ({span}{runs}{steady})"


def rate_text(s: dict) -> str:
    rate = s.get("samples_per_second")
    return f"{rate:.1f} samples/s" if rate else "n/a"


def source_text(s: dict) -> str:
    return f"{s['path']} ({s['source']})"


def value_text(fact: str, value) -> str:
    if value is None:
        return "not recorded" if fact in PROVENANCE_FACTS else "none"
    if fact == "uncommitted changes":
        return "yes" if value else "no"
    if fact == "git commit":
        return str(value)[:12]
    if fact.endswith("(bytes)"):
        return size(value)
    return str(value)


def applied_text(s: dict) -> str:
    """The fixes a side was made with: a `try` run's applied changes, or a try folder's variants."""
    parts = []
    if s.get("changes"):
        parts.append("try changes applied: " + ", ".join(f"{k}={v}" for k, v in sorted(s["changes"].items())))
    if s.get("tried"):
        tried = []
        for row in s["tried"]:
            speed = f" {row['speedup']:.2f}x" if row.get("speedup") else ""
            tried.append(f"{row['label']}{speed}" + (f" ({row['conclusion']})" if row.get("conclusion") else ""))
        parts.append("its baseline is compared; variants tried there: " + "; ".join(tried))
    return "; ".join(parts) or "none recorded"


def gate_text(cmp: dict):
    gate = cmp.get("gate")
    if not gate:
        return None
    result = "FAILED" if gate["failed"] else gate["status"]
    return f"--fail-if-slower {gate['fail_if_slower_pct']:g}%: {result} ({gate['detail']})"


def unchanged_text(cmp: dict) -> str:
    return ", ".join(cmp["unchanged"]) or "nothing"


def phase_rows(cmp: dict) -> list:
    return [(row["phase"], pct(row["a"]), pct(row["b"])) for row in cmp["phases"]]


# ---- console ----------------------------------------------------------------------------------

def console(cmp: dict, width: int = WIDTH) -> str:
    width = max(20, width or WIDTH)
    a, b = cmp["a"], cmp["b"]
    out = ["gpuprof compare"]
    out += _field("A", source_text(a), width, 2)
    out += _field("B", source_text(b), width, 2)
    out.append("")
    out += textwrap.wrap(headline(cmp), width) or [""]
    out.append("")
    for label, key in (("step time", step_text), ("throughput", rate_text)):
        out += _field(f"{label} A", key(a), width, 2)
        out += _field(f"{label} B", key(b), width, 2)
    out += _field("verdict A", a["verdict"]["summary"] or a["verdict"]["bottleneck"] or "none", width, 2)
    out += _field("verdict B", b["verdict"]["summary"] or b["verdict"]["bottleneck"] or "none", width, 2)
    if cmp["phases"]:
        out += [""] + _phase_lines(cmp, width)
    out += [""] + textwrap.wrap("What changed" if cmp["changed"] else "What changed: nothing gpuprof records", width)
    for row in cmp["changed"]:
        out += _field(row["fact"], f"{value_text(row['fact'], row['a'])} -> {value_text(row['fact'], row['b'])}",
                      width, 2)
    out += textwrap.wrap("same on both: " + unchanged_text(cmp), width, subsequent_indent="  ")
    if cmp["not_recorded"]:
        out += textwrap.wrap("not recorded for either run: " + ", ".join(cmp["not_recorded"]), width,
                             subsequent_indent="  ")
    out += ["", "Fixes applied"]
    out += _field("A", applied_text(a), width, 2)
    out += _field("B", applied_text(b), width, 2)
    if cmp["notes"]:
        out.append("")
        for note in cmp["notes"]:
            out += textwrap.wrap("note: " + note, width, subsequent_indent="  ")
    gate = gate_text(cmp)
    if gate:
        out += [""] + textwrap.wrap("gate " + gate, width, subsequent_indent="  ")
    return "\n".join(out) + "\n"


def _phase_lines(cmp: dict, width: int) -> list:
    """Shares of step time in two columns, or "name: A -> B" lines where the columns do not fit."""
    if width >= 40:
        return [f"{'Share of step time':<27} {'A':>5}  {'B':>5}"] + [
            f"  {name:<25} {left:>5}  {right:>5}" for name, left, right in phase_rows(cmp)]
    out = textwrap.wrap("Share of step time, A -> B", width)
    for name, left, right in phase_rows(cmp):
        out += textwrap.wrap(f"{name}: {left} -> {right}", width, initial_indent="  ", subsequent_indent="    ")
    return out


def _field(label: str, text: str, width: int, indent: int) -> list:
    """`label` then `text` wrapped under itself; a label too wide for the column goes on its own line."""
    column = 20 if width >= 60 else indent + 2      # a narrow terminal: each label on its own line
    head = " " * indent + label
    if len(head) >= column:
        return [_fit(head, width)] + textwrap.wrap(text, width, initial_indent=" " * column,
                                                   subsequent_indent=" " * column, break_long_words=True)
    return textwrap.wrap(text, width, initial_indent=head.ljust(column), subsequent_indent=" " * column,
                         break_long_words=True) or [head]


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[:width - 3] + "..."


# ---- markdown ---------------------------------------------------------------------------------

def markdown(cmp: dict) -> str:
    a, b = cmp["a"], cmp["b"]
    out = ["### gpuprof compare", "", f"**{_cell(headline(cmp))}**", "",
           "| | A | B |", "|---|---|---|",
           f"| run | `{_cell(a['path'])}` ({a['source']}) | `{_cell(b['path'])}` ({b['source']}) |",
           f"| {a.get('statistic') or 'median'} step time | {step_text(a)} | {step_text(b)} |",
           f"| throughput | {rate_text(a)} | {rate_text(b)} |",
           f"| verdict | {_cell(a['verdict']['summary'] or 'none')} | {_cell(b['verdict']['summary'] or 'none')} |"]
    out += [f"| {name} (share of step) | {left} | {right} |" for name, left, right in phase_rows(cmp)]
    out += ["", "**What changed**", ""]
    if cmp["changed"]:
        out += ["| | A | B |", "|---|---|---|"]
        out += [f"| {row['fact']} | `{_cell(value_text(row['fact'], row['a']))}` | "
                f"`{_cell(value_text(row['fact'], row['b']))}` |" for row in cmp["changed"]]
    else:
        out.append("nothing gpuprof records")
    out += ["", f"Same on both: {_cell(unchanged_text(cmp))}."]
    if cmp["not_recorded"]:
        out.append(f"Not recorded for either run: {', '.join(cmp['not_recorded'])}.")
    out += ["", "**Fixes applied**", "", f"- A: {_cell(applied_text(a))}", f"- B: {_cell(applied_text(b))}"]
    if cmp["notes"]:
        out += [""] + [f"> {_cell(note)}" for note in cmp["notes"]]
    gate = gate_text(cmp)
    if gate:
        out += ["", f"Gate: {_cell(gate)}"]
    return "\n".join(out) + "\n"


def _cell(text) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks, no stray backticks."""
    return str(text).replace("|", "\\|").replace("\n", " ").replace("`", "'")
