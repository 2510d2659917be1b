"""What the start-up fixes share: the seconds a part of the start-up took, the run's wall time,
and the gain on the whole run of a later run without them. A start-up fix is judged on the run's
wall time, not the step time: it makes the job reach its first step sooner, not its steps faster."""

#: A part of the start-up worth a fix of its own, as a share of the start-up.
PART_NOTABLE = 0.20


def part_seconds(startup: dict, *parts) -> float:
    return sum(p.get("seconds") or 0.0 for p in startup.get("parts") or [] if p.get("part") in parts)


def wall_seconds(startup: dict):
    """The run's wall time, from the start-up's seconds and share."""
    share = startup.get("share")
    return startup["seconds"] / share if share else None


def notable_part(ev, *parts):
    """(the start-up section, the seconds of these parts) where the start-up is notable and these
    parts are PART_NOTABLE of it; else None."""
    startup = ev.startup or {}
    if not startup.get("notable") or not startup.get("seconds"):
        return None
    seconds = part_seconds(startup, *parts)
    if seconds < PART_NOTABLE * startup["seconds"]:
        return None
    return startup, seconds


def run_gain(startup: dict, saved_s: float):
    """The speed-up of the whole run when `saved_s` of its start-up goes: wall / (wall - saved)."""
    wall = wall_seconds(startup)
    if not wall or saved_s >= wall:
        return None
    return wall / (wall - saved_s)


def where_in(startup: dict, *parts):
    """The user's line that took most of the start-up, where it is in one of these parts."""
    where = startup.get("where") or {}
    return where.get("line") if where.get("part") in parts else None


def why(startup: dict, saved_s: float, what: str) -> str:
    return (f"{what} took {saved_s:.1f} s of a {startup['seconds']:.1f} s start-up ({startup['share']:.0%} of the "
            f"run); without it the run is {wall_seconds(startup):.1f} s -> {wall_seconds(startup) - saved_s:.1f} s")


def part_fix(parts: tuple, what: str, detail: str, snippet: str):
    """The build of a fix that removes these parts of the start-up from later runs: offered where
    they are a notable part of a notable start-up, estimated on the run's wall time."""
    from gpuprof.advise.fix import MIN_GAIN

    def build(ev, s):
        found = notable_part(ev, *parts)
        if found is None:
            return None
        startup, seconds = found
        gain = run_gain(startup, seconds)
        if gain is None or gain < MIN_GAIN:
            return None
        return {"estimated_speedup": gain, "where": where_in(startup, *parts), "detail": detail,
                "snippet": snippet, "why": why(startup, seconds, what)}

    return build
