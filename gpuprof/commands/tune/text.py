"""The tune record as console text and as Markdown: the best combination with its interval against
the unchanged program, what it changes besides speed, the table of every combination measured, how
the search ended, the patch (or what code cannot carry) and the check."""


def _x(value) -> str:
    return f"{value:.2f}x" if value else "-"


def interval_text(figures: dict) -> str:
    """`1.85x (1.78-1.93x)`; a point estimate where the interval is missing or too wide to state."""
    if not figures or not figures.get("speedup"):
        return "-"
    if figures.get("too_wide"):
        return f"{_x(figures['speedup'])} (not decided)"
    if figures.get("interval_low") is None:
        return f"{_x(figures['speedup'])} (one round)"
    return f"{_x(figures['speedup'])} ({figures['interval_low']:.2f}-{figures['interval_high']:.2f}x)"


def _ms(seconds) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds else "-"


def headline(record: dict) -> list:
    best = record.get("best")
    if best is None:
        why = record.get("search_ended") or "no combination was measured faster before the search stopped"
        return [f"best: the program as it is; {why}"]
    rounds = f"over {best['paired_rounds']} round{'s' if best['paired_rounds'] != 1 else ''}"
    if best["faster"]:
        lines = [f"best: {best['label']}: {_x(best['speedup'])} as fast as the program as it is (90% interval "
                 f"{best['interval_low']:.2f}-{best['interval_high']:.2f}x {rounds})"]
    else:
        lines = [f"best so far: {best['label']}: {interval_text(best)} {rounds}, not measurably faster than the "
                 "program as it is; no patch is offered"]
    lines += [f"  it changes {c['key']}: {c['what']}" for c in best.get("changes") or []]
    return lines


def _rows(record: dict) -> list:
    base = record["baseline"]
    out = [("as it is (baseline)", "-", str(base.get("rounds") or "-"), _ms(base.get("step_time_s")), "1.00x", "-",
            base.get("verdict") or "")]
    for row in record["rows"]:
        against = row.get("versus_reference")
        vs = f"{interval_text(against)} vs {row['reference']}" if against and row["reference"] != "as it is" else "-"
        why = row["outcome"] + (f" ({row['error']})" if row.get("error") else "") + \
            (" (changes numerics/schedule)" if row.get("changes") else "")
        out.append((row["label"], str(row["stage"] or "-"), str(row["rounds"]), _ms(row.get("step_time_s")),
                    interval_text(row), vs, why))
    return out


HEADERS = ("combination", "stage", "rounds", "step", "vs unchanged (90%)", "vs the best of its stage", "outcome")


def console(record: dict) -> str:
    lines = [f"gpuprof tune: {' '.join(str(w) for w in record['command'])}", _summary(record)]
    rows = [HEADERS] + _rows(record)
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    lines += headline(record) + _after(record, code=lambda text: text.rstrip("\n").splitlines())
    return "\n".join(lines) + "\n"


def markdown(record: dict) -> str:
    lines = ["# gpuprof tune", "", f"`{' '.join(str(w) for w in record['command'])}`", "", _summary(record), "",
             "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("_", "\\_") for cell in row) + " |"
              for row in _rows(record)]
    lines += [""] + headline(record) + [""]
    lines += _after(record, code=lambda text: ["```diff"] + text.rstrip("\n").splitlines() + ["```"])
    return "\n".join(lines) + "\n"


def _summary(record: dict) -> str:
    s = record["settings"]
    where = f"{s['cores']} core{'s' if s['cores'] != 1 else ''}" + (", a GPU" if s["gpu"] else ", no GPU")
    text = (f"searched {', '.join(record['searched']) or 'nothing'} on {where}: {record['rounds']} rounds of "
            f"{s['steps']} measured steps after {s['warmup_steps']} warm-up, {record['spent_s']:.0f} s of the "
            f"{s['budget_s']:.0f} s budget")
    return text + "".join(f"; {line}" for line in record.get("not_searched") or [])


def _after(record: dict, code) -> list:
    lines = []
    if record.get("search_ended"):
        lines.append(f"search ended: {record['search_ended']}")
    if record.get("stopped_because") not in (None, "complete"):
        lines.append(f"stopped: {record['stopped_because']}")
    lines += [f"note: {n}" for n in record.get("notes") or []]
    patch = record.get("patch")
    if patch:
        if patch["diff"]:
            where = f"written to {patch['file']}; " if patch.get("file") else ""
            state = "applied to your files" if record.get("applied") else \
                f"{where}apply it in {patch['root']} with `git apply` (or `patch -p1`), or run again with --apply"
            lines.append(f"the patch ({state}):")
            lines += code(patch["diff"])
        lines += [f"by hand: {line}" for line in patch.get("by_hand") or []]
        if patch.get("command_line"):
            lines.append(f"on the command line (code cannot carry it): {patch['command_line']}")
    check = record.get("check")
    if check:
        lines.append(_check_line(check))
    return lines


def _check_line(check: dict) -> str:
    verdict = "passed" if check["passed"] else "FAILED"
    parts = [f"patched program {interval_text(check)} as fast as the unchanged one (compare: {check['compare_call']})",
             "the same stdout" if check["same_output"] else f"stdout differs ({check['difference']})",
             "the same exit status" if check["same_status"] else "another exit status"]
    if not check["gain_holds"]:
        parts.append("the gain did not hold beyond the noise")
    return f"check on {check['on']}: {verdict}: " + "; ".join(parts)
