"""`gpuprof attach PID`: check the job, sample it from outside, then build, show and save the
report as `run` does. The job is never stopped, signalled or changed."""

import re
import sys

from gpuprof.errors import UsageProblem
from gpuprof.present.reporting.outputs import check_all
from gpuprof.commands.workflows.messages import error

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_UNIT_S = {None: 1.0, "s": 1.0, "ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}
MIN_DURATION_S, MAX_DURATION_S = 1.0, 24 * 3600.0


def parse_duration(text: str) -> float:
    """'30s', '2m', '45' (seconds), '1.5h' -> seconds; UsageProblem otherwise."""
    match = _DURATION.match(str(text))
    if not match:
        raise UsageProblem(f"--duration must be a time such as 30s, 2m or 45, not {text!r}")
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)]
    if not MIN_DURATION_S <= seconds <= MAX_DURATION_S:
        raise UsageProblem(f"--duration must be between 1 second and 24 hours, not {text}")
    return seconds


def attach(pid: int, duration: str = "30s", json_path=None, html=None, trace=None, out=None, rate: int = 25,
           gpu: bool = True, quiet: bool = False) -> int:
    """Exit status 0 with a report; 2 (one line on stderr) when the job cannot be read."""
    from gpuprof.commands.attach import pyspy
    from gpuprof.commands.attach.session import AttachOptions, AttachSession
    from gpuprof.commands.attach.target import check

    seconds = parse_duration(duration)
    if not 1 <= rate <= 1000:
        raise UsageProblem(f"--rate must be between 1 and 1000 samples a second, not {rate}")
    check_all((json_path, "--json"), (html, "--html"), (trace, "--trace"))
    spy = pyspy.find_pyspy()
    check(pid)
    session = AttachSession(pid, AttachOptions(out=out, duration_s=seconds, rate_hz=rate, gpu=gpu), spy)
    session.prepare()
    if not quiet:
        sys.stderr.write(f"gpuprof: attached to PID {pid} for {_seconds(seconds)} (Ctrl-C ends it early, with a report)\n")
        sys.stderr.flush()
    session.execute()
    if session.pyspy_error:
        error(f"could not read PID {pid}'s Python stacks: {session.pyspy_error}")
        if _refused(session.pyspy_error):
            return 2
    from gpuprof.commands.workflows.run import finish, write_pictures
    report = finish(session, json_path, quiet)
    if report is None:
        return 2
    write_pictures(session.run_dir, report, html=html, trace=trace)
    return 0


def _refused(reason: str) -> bool:
    text = reason.lower()
    return "permission" in text or "operation not permitted" in text or "ptrace" in text


def _seconds(seconds: float) -> str:
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} min"
