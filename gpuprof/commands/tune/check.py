"""The patch checked (`tune --check`, and after `--apply`): the patched program and the unchanged
one run in turn, ROUNDS times each, and are compared on what the search promised: the speed-up
(try's paired ratios and interval, which must say faster and reach the search's interval, and
the verdict `gpuprof compare` gives on the gate's noise statistics, which must not say slower; it
makes no call where other programs kept the machine busy), the program's own stdout and its exit
status. Without --apply the patched program runs from a mirror of its folder (gpuprof.commands.tune.mirror),
so the user's files stay as they are; after it, the unchanged program runs from a mirror of the
files as they were."""

import os
import signal
from typing import NamedTuple

from gpuprof.commands.experiments import speedups
from gpuprof.commands.experiments.rounds import step_of
from gpuprof.commands.experiments.runner import Experiment, Interrupted, Settings
from gpuprof.gate.compare import SLOWER, compare, side
from gpuprof.commands.tune.measuring import unit_time
from gpuprof.commands.tune.mirror import Mirror

ROUNDS = 3


class CheckResult(NamedTuple):
    speedup: speedups.Speedup     # patched against unchanged, over the rounds
    call: str                     # gpuprof compare's verdict: faster, slower, within noise, disturbed
    gain_holds: bool
    same_output: bool
    same_status: bool
    difference: str               # the first stdout line that differs, or the exit statuses, or ""
    run_dirs: list

    @property
    def passed(self) -> bool:
        return self.gain_holds and self.same_output and self.same_status


def check(command, patch, cwd: str, folder: str, settings: Settings, promised, applied: bool, say,
          rounds: int = ROUNDS) -> CheckResult:
    """Run both programs `rounds` times; `promised` is the search's Speedup for the combination."""
    entries = []
    # the side that is not in the user's files runs from a mirror: the patched program before
    # --apply, the unchanged one after it
    mirrored = {f.path: (f.old if applied else f.new) for f in patch.files}
    with Mirror(_root(command, patch, cwd), dict(_script_copy(command, cwd), **mirrored)) as mirror:
        in_place = _Runner(command, settings, folder)
        elsewhere = _Runner(_moved(command, mirror), settings, folder)
        where = mirror.path(cwd) if command.kind == "module" else None
        unchanged, patched = (elsewhere, in_place) if applied else (in_place, elsewhere)
        for number in range(1, rounds + 1):
            before = unchanged.run(f"check-r{number}-unchanged", cwd=where if applied else None)
            after = patched.run(f"check-r{number}-patched", cwd=None if applied else where)
            entries.append((before, after))
            say(f"check round {number} of {rounds}: unchanged {_shown(before)}, patched {_shown(after)}")
    return _judged(entries, promised)


def _judged(entries: list, promised) -> CheckResult:
    ratios = [unit_time(b) / unit_time(a) for b, a in entries if unit_time(b) and unit_time(a)]
    measured = speedups.judge(ratios)
    befores = [b["report"] for b, _ in entries if b["report"]]
    afters = [a["report"] for _, a in entries if a["report"]]
    call = compare(side(befores[0], rounds=befores[1:]), side(afters[0], rounds=afters[1:]),
                   force=True)["call"] if befores and afters else "not measured"
    low = promised.low if promised is not None and promised.low is not None else 1.0
    holds = measured.conclusion == "faster" and call != SLOWER and (measured.high is None or measured.high >= low)
    difference, same_output = "", True
    for before, after in entries:
        text = _first_difference(_stdout(before), _stdout(after))
        if text:
            difference, same_output = text, False
            break
    statuses = [(b["exit_code"], a["exit_code"]) for b, a in entries]
    same_status = all(b == a for b, a in statuses)
    if not same_status and not difference:
        difference = "exit status " + ", ".join(f"{b} before, {a} patched" for b, a in statuses if b != a)
    return CheckResult(measured, call, holds, same_output, same_status, difference,
                       [e["run_dir"] for pair in entries for e in pair])


class _Runner(Experiment):
    """One run of a command in the tune folder, as try's runner makes it (its record and report,
    the program's output kept in the run's folder)."""

    def __init__(self, command, settings: Settings, folder: str):
        from gpuprof.commands.experiments.runner import Plan
        super().__init__(command, Plan(), settings)
        self.folder = folder

    def run(self, name: str, cwd: str = None) -> dict:
        """The run, from `cwd` where given (a module found on the mirror's path)."""
        run_dir = os.path.join(self.folder, name)
        here = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            report, events = self.run_one(run_dir, None)
        finally:
            os.chdir(here)
        if report and report.get("interrupted"):
            name = report.get("signal")
            raise Interrupted(int(signal.Signals[name]) if name in signal.Signals.__members__ else int(signal.SIGINT))
        status = report.get("exit_code") if report else None
        return {"run_dir": run_dir, "report": report, "events": events, "exit_code": status,
                "failed": report is None or status not in (0, None)}


def _root(command, patch, cwd: str) -> str:
    """The folder laid out again: the one that holds the program's start and every patched file."""
    places = [os.path.dirname(f.path) for f in patch.files] + [os.path.realpath(cwd)]
    places += [os.path.dirname(path) for path in _start_files(command, cwd)]
    return os.path.commonpath([os.path.realpath(p) for p in places])


def _start_files(command, cwd: str) -> list:
    """The files the program starts from (the script; a launcher's .py arguments): copied into the
    mirror, since Python puts a script's real folder on its path."""
    if command.kind == "script":
        words = [command.target]
    elif command.kind == "command":
        words = [w for w in command.argv[1:] if str(w).endswith(".py")]
    else:
        words = []
    paths = [os.path.realpath(os.path.join(cwd, w)) for w in words]
    return [p for p in paths if os.path.isfile(p)]


def _script_copy(command, cwd: str) -> dict:
    return {path: None for path in _start_files(command, cwd)}


def _moved(command, mirror):
    """The command with the program's files in the mirror."""
    from gpuprof.capture.launch.command import ChildCommand
    argv = [mirror.path(word) if str(word).endswith(".py") and os.path.isfile(word) else word
            for word in command.argv]
    target = mirror.path(command.target) if command.kind == "script" else command.target
    return ChildCommand(argv=argv, kind=command.kind, target=target, args=command.args)


def _stdout(entry: dict) -> str:
    try:
        with open(os.path.join(entry["run_dir"], "program-stdout.txt"), "r", encoding="utf-8",
                  errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _first_difference(before: str, after: str) -> str:
    if before == after:
        return ""
    old, new = before.splitlines(), after.splitlines()
    for number, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            return f"stdout line {number}: {a!r} before, {b!r} patched"
    number = min(len(old), len(new)) + 1
    return f"stdout line {number}: " + (f"{old[number - 1]!r} before, nothing patched" if len(old) > len(new)
                                        else f"nothing before, {new[number - 1]!r} patched")


def _shown(entry: dict) -> str:
    step = step_of(entry["report"])
    if entry["failed"]:
        return f"failed (status {entry['exit_code']})"
    return "no steps measured" if step is None else f"{step * 1e3:.1f} ms/step"
