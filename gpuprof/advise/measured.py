"""The advice after `gpuprof try` measured some of it (`run --verify`, or a try record beside the
run): each measured fix carries its measurement beside its estimate, and the ranking follows what
was measured. A measured speed-up takes the place of the estimate in the ranking (a measurement in
the user's own program beats any estimate); a fix measured no faster, or slower, than the program
as it is goes last and says why, whatever its estimate, so it is never first. Every output reads
the items this returns; `no_fix_helped` says when every fix was measured and none helped."""

from gpuprof.stats import noise
NOT_FASTER = ("slower", "same")


def with_measurements(advice: list, rows: list) -> list:
    """`advice` (a report's ranked items) with `measured` added to each item a row of the try
    record measured (by fix id), the ones measured faster ranked by their measurement among the
    rest, and the ones that measured no gain moved last."""
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
        item = dict(item, measured=_measurement(row))
        if not_faster(item):
            word = {"slower": "slower than", "same": "no faster than"}.get(
                item["measured"]["conclusion"], "not clearly faster than")
            demoted.append(dict(item, ranked_by=f"last: gpuprof try measured it {item['measured']['speedup']:.2f}x, "
                                                f"{word} the program as it is"))
        else:
            kept.append(item)
    return _by_measurement(kept) + demoted


def _measurement(row: dict) -> dict:
    return {"speedup": round(row["speedup"], 3), "low": row.get("interval_low") or row.get("speedup_min"),
            "high": row.get("interval_high") or row.get("speedup_max"),
            "conclusion": row.get("conclusion") or noise.conclusion(row["speedup"], row["speedup"])}


def _by_measurement(items: list) -> list:
    """Measured items rank among themselves by their measurements, and each goes ahead of the
    unmeasured items ranked before it whose estimate (its midpoint) the measurement beats; an
    unmeasured item ranked after it stays after it, so the ranking's groups (the bottleneck's fixes
    first, those that keep training the same before those that change it) hold."""
    order = {id(item): n for n, item in enumerate(items)}
    ranked = [item for item in items if not item.get("measured")]
    for item in sorted((i for i in items if i.get("measured")), key=lambda i: -i["measured"]["speedup"]):
        at = next((n for n, other in enumerate(ranked) if _number(other) < item["measured"]["speedup"]
                   or (not other.get("measured") and order[id(other)] > order[id(item)])), len(ranked))
        passed = ranked[at] if at < len(ranked) and not ranked[at].get("measured") else None
        if passed is not None and order[id(passed)] < order[id(item)]:
            item = dict(item, ranked_by=f"ahead of {passed['id']}: measured {item['measured']['speedup']:.2f}x "
                                        f"by gpuprof try, where that fix is only estimated")
        ranked.insert(at, item)
    return ranked


def _number(item: dict) -> float:
    """The figure an item ranks by: its measurement, else its estimate's midpoint, else its prior."""
    if item.get("measured"):
        return item["measured"]["speedup"]
    return item.get("estimated_speedup") or item.get("prior") or 0.0


def not_faster(item: dict) -> bool:
    """Measured slower, or no faster, or below 1.0x however wide its interval: not a fix to lead with."""
    measured = item.get("measured") or {}
    return measured.get("speedup") is not None and \
        (measured.get("conclusion") in NOT_FASTER or measured["speedup"] < 1.0)


def no_fix_helped(advice: list) -> bool:
    """Every fix was measured and none was faster than the program as it is."""
    return bool(advice) and all(not_faster(item) for item in advice)
