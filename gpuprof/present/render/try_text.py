"""The wording of a `gpuprof try` record that its terminal table and its Markdown share: the
cells of a row, the line that keeps a measured change, and the lines below the table."""

from gpuprof.advise.keeping import keep_line
from gpuprof.advise.wording import range_words
from gpuprof.stats.noise import SAME
from gpuprof.record.changes import KEYS, MODEL, OPTIMIZER


def speedup_cell(row: dict) -> str:
    if row.get("failed") and not row.get("speedup"):
        return f"crashed (status {row['failed'][0]})"
    if row.get("speedup") is None:
        return "n/a"
    if row["label"] == "baseline":
        return "1.00x"
    text = f"{row['speedup']:.2f}x"
    if row.get("too_wide"):
        text += ", not decided"
    elif row.get("interval_low") is not None:
        text += f" ({row['interval_low']:.2f}-{row['interval_high']:.2f})"
        if row.get("conclusion") == "inconclusive":
            text += " ?"
    elif row.get("speedup_min") is not None and row["rounds"] > 1:
        text += f" ({row['speedup_min']:.2f}-{row['speedup_max']:.2f})"
    if row.get("conclusion") in ("not applied", "failed"):
        text += f" {row['conclusion']}"
    return text


def estimate_cell(row: dict) -> str:
    """The estimate the baseline's report gave this change, as that report words it (a range), or
    the input ceiling's own figure."""
    if not row.get("estimate"):
        return "-"
    return range_words({"estimated_speedup": row["estimate"], "estimate": row.get("estimate_range")})


def verdict_cell(row: dict) -> str:
    verdicts = [v for v in row.get("verdicts") or [] if v]
    if not verdicts:
        return "-"
    most = max(verdicts, key=verdicts.count)      # a tie goes to the first round's verdict
    return most if verdicts.count(most) == len(verdicts) else f"{most} ({verdicts.count(most)}/{len(verdicts)})"


def change_line(row: dict, loader, framework=None) -> str:
    """The line the user would change to keep this variant, as the record stored it when the try
    ran; a record saved before rows stored it is worded by today's fixes."""
    if "keep" in row:
        return row["keep"] or ""
    return keep_line(row.get("settings") or {}, row.get("fix"), loader, framework)


def input_check_line(check: dict, ceiling_row: dict) -> str:
    """What the input ceiling measured, in words that hold when it is below 1: "no faster", and
    how much faster the rounds' spread allows at most; a ceiling its rounds did not decide is a
    point estimate, said as one, never a finding."""
    x = check["ceiling_speedup"]
    waited = f"(the baseline waited {(check.get('data_wait_share') or 0):.0%} for data)"
    if check.get("decided") is False:
        return (f"input check: not decided after {ceiling_row.get('paired_rounds')} rounds: with the input made free "
                f"steps were {x:.2f}x as fast as a point estimate ({undecided_range(ceiling_row)}), so the share of each "
                f"step the input costs is not known yet {waited}")
    if x >= 1 + SAME:
        return (f"input check: with the input made free, steps were {x:.2f}x faster: the input costs "
                f"{check['measured_input_share']:.0%} of each step {waited}")
    low, high = _spread(ceiling_row)
    spread = (f"; {_spread_name(ceiling_row)} {low:.2f}-{high:.2f}x, so at most {max(0.0, 1 - 1 / high):.0%} of a step"
              if high and (ceiling_row.get("rounds") or 0) > 1 else "")
    return (f"input check: with the input made free, steps were no faster ({x:.2f}x{spread}): the input costs no "
            f"measurable share of each step {waited}")


def _spread(row: dict) -> tuple:
    """The row's 90% interval where it has one, else (a record saved before intervals) its rounds'
    lowest and highest ratio."""
    if row.get("interval_low") is not None:
        return row["interval_low"], row["interval_high"]
    return row.get("speedup_min"), row.get("speedup_max")


def _spread_name(row: dict) -> str:
    if row.get("interval_low") is not None:
        return f"90% interval over {row.get('paired_rounds')} rounds"
    return f"over {row.get('rounds')} rounds"


def undecided_range(row: dict) -> str:
    """What an undecided speed-up's rounds allow: its 90% interval, or where that is too wide to
    mean anything, the lowest and highest ratio its rounds measured."""
    if row.get("too_wide"):
        return (f"its rounds measured from {row['speedup_min']:.2f}x to {row['speedup_max']:.2f}x, too far apart "
                "for an interval")
    return f"90% interval {row['interval_low']:.2f}x-{row['interval_high']:.2f}x"


def noise_lines(record: dict) -> list:
    """What the rounds say about their own trustworthiness: speed-ups still unclear, runs left out
    as disturbed (with what else the machine did then), and a page cache that warmed."""
    out = []
    for row in (record.get("rows") or [])[1:]:
        if row.get("conclusion") != "inconclusive" or row.get("same_as_baseline"):
            continue
        if row.get("interval_low") is None:
            out.append(f"{row['label']}: measured in {row.get('paired_rounds', 1)} round only, which gives no spread "
                       "to judge it by (--rounds 3 or more)")
        else:
            between = (undecided_range(row) if row.get("too_wide") else
                       f"the speed-up lies between {row['interval_low']:.2f}x and {row['interval_high']:.2f}x (90% interval)")
            out.append(f"{row['label']}: {'not decided' if row.get('too_wide') else 'inconclusive'} after "
                       f"{row['paired_rounds']} rounds: {between}; more rounds (--max-rounds) or a quieter machine "
                       "would tell")
    for found in record.get("disturbed") or []:
        machine = found.get("machine") or {}
        noticed = [f"other processes kept {machine['other_cores']:.1f} of {machine.get('cpu_count')} cores busy"
                if machine.get("other_cores") is not None else None,
                f"steal {machine['steal']:.0%}" if machine.get("steal") else None,
                f"the disk read {machine['disk_read_mb_s']:.0f} MB/s" if machine.get("disk_read_mb_s") else None]
        seen = "; ".join(s for s in noticed if s) or "nothing unusual in the samplers"
        what = "the whole round" if found["label"] == "baseline" else "that run"
        out.append(f"round {found['round']}: {found['label']} took {found['step_s'] * 1e3:.1f} ms a step against "
                   f"{found['others_step_s'] * 1e3:.1f} ms in the other rounds, disturbed ({seen}); {what} left out")
    cache = record.get("cache") or {}
    if cache.get("warmed"):
        reads = [b for b in cache.get("read_bytes") or [] if b is not None]
        out.append(f"the page cache warmed: the first run read {reads[0] / 2**20:.0f} MiB from disk, later runs about "
                   f"{sorted(reads[1:])[len(reads[1:]) // 2] / 2**20:.0f} MiB, so these results describe a warm cache; "
                   "--cold evicts the program's files before every run, as a first epoch meets them")
    return out


#: How far the ratio of the table's two step times may lie from the speed-up beside them unremarked.
TABLE_TOLERANCE = 0.005


def table_ratio_line(baseline: dict, row: dict):
    """The line that says why a speed-up differs from the ratio of the step times in its table,
    or None where they agree. They agree by construction (one statistic over the same rounds)
    unless a run was left out or failed on one side only; a record saved before rows counted
    their rounds (`paired_rounds`) is shown as it was."""
    before, after, x = baseline.get("step_time_s"), row.get("step_time_s"), row.get("speedup")
    if not (before and after and x and row.get("paired_rounds")):
        return None
    if abs(before / after / x - 1) <= TABLE_TOLERANCE:
        return None
    return (f"{row['label']}: {x:.2f}x compares the runs of the {row['paired_rounds']} rounds in which it and the "
            f"baseline both counted, round by round; the step times above ({before * 1e3:.1f} and {after * 1e3:.1f} ms) "
            "take every run of each that counted, so their ratio differs")


def nothing_found(settings: dict) -> str:
    """What a variant that changed nothing did not find, by what its keys apply to."""
    kinds = {KEYS[k].applies_to for k in settings if k in KEYS}
    if MODEL in kinds:
        return "no trained model seen: no forward followed by two optimizer steps"
    if OPTIMIZER in kinds:
        return "no optimizer built"
    return "no matching DataLoader or file"


def compile_line(row: dict, baseline: dict, record: dict) -> str:
    """The compile time apart from the step time, and after how many steps it pays back."""
    text = f"{row['label']}: compiling took {row['compile_s']:.1f} s (in the warm-up, not in the step time)"
    before, after = baseline.get("step_time_s"), row.get("step_time_s")
    if before and after and after < before and not row.get("error"):
        steps = row["compile_s"] / (before - after)
        text += f"; it pays back after about {steps:,.0f} steps of {before * 1e3:.1f} -> {after * 1e3:.1f} ms"
    else:
        text += "; steps were no faster, so it never pays back"
    return text


def mfu_lines(rows: list) -> list:
    """Each variant's MFU change beside its speed-up, where its runs and the baseline's had their
    FLOPs counted: the ratio of FLOPs per second (a change of the work per step shows as a gap
    between the two)."""
    base = (rows or [{}])[0]
    if not base.get("achieved_tflops"):
        return []
    out = []
    for row in rows[1:]:
        if not row.get("achieved_tflops"):
            continue
        change = row["achieved_tflops"] / base["achieved_tflops"]
        levels = (f"MFU {base['mfu']:.1%} -> {row['mfu']:.1%}, " if base.get("mfu") and row.get("mfu") else "MFU ")
        speed = f" (speed-up {row['speedup']:.2f}x)" if row.get("speedup") else ""
        out.append(f"{row['label']}: {levels}{change:.2f}x the baseline's FLOPs per second{speed}")
    return out


def lines(record: dict) -> list:
    """Everything below the table: the best variant, the input check, cautions, failures, notes."""
    out = []
    settings = record.get("settings") or {}
    loader, framework = settings.get("loader"), settings.get("loader_framework")
    rows = record.get("rows") or []
    best = next((r for r in rows if r["label"] == record.get("best")), None)
    if best is not None:
        change = change_line(best, loader, framework)
        spread = (f" ({best['interval_low']:.2f}-{best['interval_high']:.2f} over {best['paired_rounds']} rounds)"
                  if best.get("interval_low") is not None else "")
        out.append(f"best: {best['label']}, measured {best['speedup']:.2f}x{spread}"
                   + (f"; to keep it, {change}" if change else ""))
        if record.get("best_because"):
            out.append(f"best over {record['best_because']}")
        elif best.get("changes_training") and best.get("caution"):
            out.append(f"best changes what the model trains on: {best['caution']}")
    elif len(rows) > 1:
        out.append("no variant was measurably faster than the baseline" +
                   (" (over the rounds' intervals)" if any(r.get("interval_low") for r in rows[1:]) else " (within 3%)"))
    out.extend(noise_lines(record))
    for sweep in record.get("sweeps") or []:
        out.append(f"sweep of {sweep['key']}: best {sweep['best']} ({sweep['speedup']:.2f}x); as good within the "
                   f"spread of the rounds: {', '.join(str(v) for v in sweep['as_good'])}")
    check = record.get("input_check")
    if check:
        out.append(input_check_line(check, next((r for r in rows[1:] if (r.get("settings") or {}).get("ceiling")), {})))
        if check.get("corrected"):
            out.append(f"verdict corrected: {check['corrected']}")
    for row in rows[1:]:
        disagreement = table_ratio_line(rows[0], row)
        if disagreement:
            out.append(disagreement)
        if row.get("broke_training"):
            out.append(f"{row['label']}: failed, not a speed-up ({row['error']})")
        elif row.get("error"):
            out.append(f"{row['label']}: not applied ({row['error']})")
        elif row.get("applied") is None and (row.get("settings") or {}) and not row.get("failed") \
                and not {"ceiling", "echo"} & set(row["settings"]):
            out.append(f"{row['label']}: the probes found nothing to change ({nothing_found(row['settings'])})")
        if row.get("failed"):
            out.append(f"{row['label']}: the program failed in {len(row['failed'])} of {row['rounds']} runs "
                       f"(status {row['failed'][0]}); see {row['run_dirs'][0]}/program-stderr.txt")
        if row.get("compile_s") is not None:
            out.append(compile_line(row, rows[0], record))
        if row.get("caution"):
            out.append(f"{row['label']}: {row['caution']}")
    out.extend(mfu_lines(rows))
    out.extend(record.get("notes") or [])
    if record.get("interrupted"):
        out.append("stopped by a signal: the table holds the runs that finished")
    return out
