"""The scenario runner's result: a table with what each scenario expected, what gpuprof found, the
GPU it named as the job's and the readings side by side, the checks that disagreed, then "N of M
agree"; and the same as JSON (`gpuprof.doctor/1`) for CI."""

import textwrap

from gpuprof.commands.doctor.expectations import label

HEADERS = ("scenario", "expected", "found", "job's GPU", "copies device / host", "util steps / run", "SM activity",
           "agrees")
FORMAT = "gpuprof.doctor/1"


def render(outcomes: list, pretty: bool = False, width: int = None) -> str:
    """The table, or with `width` too narrow for it, each scenario as a line and its readings
    wrapped under it; then the disagreements and the count."""
    dash = "–" if pretty else "-"
    rows = [HEADERS] + [_row(o, dash) for o in outcomes]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    if width and sum(widths) + 2 * (len(widths) - 1) > width:
        lines = [line for row in rows[1:] for line in _stacked(row, width)]
    else:
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
    notes = []
    for outcome in outcomes:
        if outcome.error:
            notes.append(f"{outcome.scenario.name}: {outcome.error}")
        for check in outcome.checks:
            if not check.ok:
                notes.append(f"{outcome.scenario.name}: {check.what}: expected {check.expected}; found {check.found}")
        if not outcome.ok and outcome.folder:
            notes.append(f"{outcome.scenario.name}: its run: {outcome.folder}")
    for note in notes:          # wrapped at spaces, a path kept whole
        lines.extend(textwrap.wrap(note, width, subsequent_indent="    ", break_on_hyphens=False,
                                   break_long_words=False) if width else [note])
    agree = sum(1 for o in outcomes if o.ok)
    lines.append(f"{agree} of {len(outcomes)} agree")
    return "\n".join(lines) + "\n"


def _stacked(row: tuple, width: int) -> list:
    name, expected, found, *readings, agrees = row
    figures = "; ".join(f"{header} {cell}" for header, cell in zip(HEADERS[3:-1], readings))
    return (textwrap.wrap(f"{name}: expected {expected}, found {found}, agrees {agrees}", width,
                          subsequent_indent="    ", break_on_hyphens=False) +
            textwrap.wrap(figures, width, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False))


def _row(outcome, dash: str) -> tuple:
    expect, r = outcome.scenario.expect, outcome.readings
    found = next((c.found for c in outcome.checks if c.what == "bottleneck"), None)
    if found is None:
        found = "no report" if outcome.error else ("agrees" if outcome.ok else "differs")
    gpus = ", ".join(label(outcome.machine, uuid) for uuid in r.get("job_gpus") or []) or dash
    return (outcome.scenario.name, expect.bottleneck or _main_expectation(outcome) or dash, found, gpus,
            f"{_ms(r.get('copy_device_s'), dash)} / {_ms(r.get('copy_host_s'), dash)}",
            f"{_share(r.get('util_window'), dash)} / {_share(r.get('util_run'), dash)}",
            _share(r.get("sm_activity"), dash), "yes" if outcome.ok else "NO")


def _main_expectation(outcome):
    return outcome.checks[0].expected if outcome.checks else None


def to_json(outcomes: list) -> dict:
    return {"format": FORMAT, "agree": sum(1 for o in outcomes if o.ok), "scenarios": len(outcomes),
            "results": [{"name": o.scenario.name, "what": o.scenario.what, "agrees": o.ok, "error": o.error,
                         "seconds": round(o.seconds, 1), "folder": o.folder, "expected_uuid": o.expected_uuid,
                         "checks": [{"what": c.what, "expected": c.expected, "found": c.found, "ok": c.ok}
                                    for c in o.checks],
                         "readings": o.readings} for o in outcomes]}


def _ms(seconds, dash: str) -> str:
    return dash if seconds is None else f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def _share(value, dash: str) -> str:
    return dash if value is None else f"{value:.0%}"
