"""The line every format gives gpuprof's own cost (the report's `overhead` section): what it
used, its share of the job's CPU and, above NOTABLE_SHARE, which part cost most and how to lower
it; beside a busy machine a second line, the section's `beside_busy_machine`, says that the others'
load, not gpuprof, slowed the run. Nothing for a report without the section."""

from gpuprof.judge.sections.self_cost import NOTABLE_SHARE
from gpuprof.record.report_format import Report

#: How to lower each part's cost, with the `gpuprof run` options that do it.
LOWER = {
    "supervisor": "mostly its start-up and the report, a fixed cost a longer run spreads thinner",
    "samplers": "a longer --interval (e.g. 0.5) samples the system and GPUs less often",
    "probes": "--no-probes turns the probes off (the step and DataLoader figures with them)",
}


def self_cost_line(report: Report):
    overhead = report.get("overhead")
    if not isinstance(overhead, dict):
        return None
    own, share = overhead.get("own_cpu_s") or 0.0, overhead.get("share")
    line = f"gpuprof's own cost: {own:.2f} s CPU"
    if share is None:
        return line + " (the job's own CPU was not measured)"
    line += f", {share:.1%} of the job's"
    part = overhead.get("largest_part")
    if share > NOTABLE_SHARE and part in LOWER:
        spent = (overhead.get("parts_cpu_s") or {}).get(part) or 0.0
        line += f"; most of it the {part} ({spent:.2f} s): {LOWER[part]}"
    return line


def busy_machine_line(report: Report):
    """What to believe where gpuprof's small cost sits beside a slower run on a busy machine, or None."""
    overhead = report.get("overhead")
    said = overhead.get("beside_busy_machine") if isinstance(overhead, dict) else None
    return said or None


def self_cost_lines(report: Report) -> list:
    """The lines every format prints, in order (none without the section)."""
    return [line for line in (self_cost_line(report), busy_machine_line(report)) if line]


def console_line(report: Report):
    """The console's lines, dim like the notes; None without the section."""
    lines = self_cost_lines(report)
    if not lines:
        return None
    from rich.text import Text
    return Text("\n".join(lines), style="dim")


def html_line(report: Report) -> str:
    import html
    return "".join(f'<p class="overhead">{html.escape(line)}</p>' for line in self_cost_lines(report))
