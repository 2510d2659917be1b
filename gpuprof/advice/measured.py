"""The advice after `gpuprof try` measured some of it (`run --verify`): each measured fix carries
its measurement beside its estimate, and the ranking follows what was measured. A fix measured no
faster, or slower, than the program as it is goes last and says why, whatever its estimate: an
estimate is a bound, a measurement in the user's own program is not."""

from gpuprof.analysis import noise


def with_measurements(advice: list, rows: list) -> list:
    """`advice` (a report's ranked items) with `measured` added to each item a row of the try
    record measured (by fix id), and the ones that measured no gain moved last."""
    by_fix = {row.get("fix"): row for row in rows or []
              if row.get("fix") and row.get("speedup") and not row.get("error")}   # not applied: not measured
    broke = {row.get("fix"): row for row in rows or [] if row.get("fix") and row.get("broke_training")}
    kept, demoted = [], []
    for item in advice or []:
        if item.get("id") in broke:
            demoted.append(dict(item, ranked_by=f"last: under gpuprof try it broke training "
                                                f"({broke[item['id']].get('error')})"))
            continue
        row = by_fix.get(item.get("id"))
        if row is None:
            kept.append(item)
            continue
        measured = {"speedup": round(row["speedup"], 3), "low": row.get("interval_low") or row.get("speedup_min"),
                    "high": row.get("interval_high") or row.get("speedup_max"),
                    "conclusion": row.get("conclusion") or noise.conclusion(row["speedup"], row["speedup"])}
        item = dict(item, measured=measured)
        if measured["conclusion"] in ("slower", "same"):
            word = "slower than" if measured["conclusion"] == "slower" else "no faster than"
            demoted.append(dict(item, ranked_by=f"last: gpuprof try measured it {measured['speedup']:.2f}x, "
                                                f"{word} the program as it is"))
        else:
            kept.append(item)
    return kept + demoted
