"""Run the baseline and each variant in interleaved rounds (B V1 V2 B V1 V2 ...), each through the
same RunSession `gpuprof run` uses, bounded to a window of steps.

The first baseline comes first on its own: its report names the DataLoader line the variants aim at
and the fixes `--fix`/`--top` stand for, and its step time sizes the window (at least MIN_WINDOW_S
of measured steps; a longer window gives round 1 a baseline of its own). After the minimum rounds,
rounds are added until every variant's interval is clear (gpuprof.commands.experiments.rounds), up to the
most rounds and the time budget. With `cold`, the files the program read are evicted from the page
cache before every run. Every run keeps its folder (record, report, the program's stdout and stderr)
inside the experiment's folder."""

import math
import os
import signal
import sys
import time

from gpuprof.commands.experiments import cache
from gpuprof.commands.experiments.plan_words import rounds_words
from gpuprof.commands.experiments.rounds import step_of
from gpuprof.commands.experiments import variants as variant_kinds
from gpuprof.errors import UsageProblem
from gpuprof.record import kinds
from gpuprof.record.lines import same_line

_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MIN_WINDOW_S = 2.0      # measured seconds a run's window is sized to, at least
MAX_WINDOW_STEPS = 2000


class Settings:
    """How to measure: the step window, the rounds (at least `rounds`, at most `max_rounds`, within
    `budget_s` seconds), the samplers, where the runs go, and whether each run starts cold."""

    def __init__(self, steps: int = 40, warmup_steps: int = 5, rounds: int = 3, interval: float = 0.1,
                 gpu: bool = True, out: str = None, loader: str = None, max_rounds: int = None,
                 budget_s: float = None, cold: bool = False, min_window_s: float = MIN_WINDOW_S):
        self.steps = steps
        self.warmup_steps = warmup_steps
        self.rounds = rounds
        self.max_rounds = max(max_rounds or rounds, rounds)
        self.budget_s = budget_s
        self.interval = interval
        self.gpu = gpu
        self.out = out
        self.loader = loader
        self.cold = cold
        self.min_window_s = min_window_s


class Plan:
    """What to try: explicit variants, fix ids from the advice, and/or the top N fixes."""

    def __init__(self, variants=(), fixes=(), top: int = 0):
        self.variants = list(variants)
        self.fixes = list(fixes)
        self.top = top

    def empty(self) -> bool:
        return not self.variants and not self.fixes and not self.top


class Interrupted(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class Experiment:
    def __init__(self, command, plan: Plan, settings: Settings, say=None, run_one=None):
        """`run_one(run_dir, variant_settings) -> (report, variant_events)` runs the program once
        (tests give a fake); `say(text)` prints progress."""
        self.command = command
        self.plan = plan
        self.settings = settings
        self.say = say or (lambda text: None)
        self.run_one = run_one or self._run_with_session
        self.folder = None
        self.runs = []             # every run: dict(round, variant index, report, ...)
        self.variants = []
        self.loader = None
        self.baseline_report = None
        self.interrupted = None
        self.notes = []
        self.files_read = set()        # what the runs read (cold: evicted before each run)

    # -- planning ---------------------------------------------------------------------------------
    def prepare(self) -> str:
        from gpuprof.capture.launch.rundir import create_run_dir
        self.folder = create_run_dir(self.settings.out, f"try-{self.command.label}")
        # The experiment's folder holds runs, not a run: its claim file is replaced by try.json later.
        return self.folder

    def resolve(self, report: dict) -> None:
        """Variants from the baseline: the loader they aim at, the fixes named by id or rank."""
        loaders = report.get("dataloaders") or []
        self.loader = self.settings.loader or (loaders[0].get("where") if loaders else None)
        advice = report.get("advice") or []
        chosen = list(self.plan.variants)
        for fix_id in self.plan.fixes:
            item = next((a for a in advice if a.get("id") == fix_id), None)
            if item is not None:
                chosen.append(variant_kinds.from_advice(item))
                continue
            advised = ", ".join(a["id"] for a in advice) or "none"
            variant = variant_kinds.unadvised(fix_id, report)
            if variant is None:
                raise UsageProblem(f"--fix {fix_id}: the baseline run's advice does not include it (advised: "
                                   f"{advised}), and its change needs the advice's own figures")
            self.notes.append(f"--fix {fix_id}: the baseline run did not advise it (advised: {advised}); measured "
                              f"as asked, {variant.label}, with no estimate")
            chosen.append(variant)
        if self.plan.top:
            taken = 0
            for rank, item in enumerate(advice, 1):
                if taken >= self.plan.top:
                    break
                try:
                    variant = variant_kinds.from_advice(item)
                except UsageProblem:
                    self.notes.append(f"fix {item['id']} (rank {rank}) needs a code change: not tried")
                    continue
                if _needs_loader(variant) and not loaders:
                    self.notes.append(f"fix {item['id']} (rank {rank}) is applied through a DataLoader, and the "
                                      "program has none: not tried")
                    continue
                chosen.append(variant)
                taken += 1
        needs_loader = [v for v in chosen if _needs_loader(v)]
        if needs_loader and not loaders:
            function = batch_function(report)
            if function is not None and all(v.settings.get("ceiling") for v in needs_loader):
                for variant in needs_loader:      # a hand-written loop: replay its batch function instead
                    variant.settings["function"] = function
            else:
                why = ("; the sampled steps found no data-making function to replay either" if function is None else
                       f"; only --input-ceiling can work through its batch function ({function['name']})")
                raise UsageProblem(f"{needs_loader[0].label}: the program built no DataLoader in the baseline run, so "
                                   f"there is nothing to apply it to{why}")
        if needs_loader and self.settings.loader and not any(same_line(l.get("where"), self.settings.loader)
                                                            for l in loaders):
            known = ", ".join(str(l.get("where")) for l in loaders)
            raise UsageProblem(f"--loader {self.settings.loader}: no DataLoader was built there (built at: {known})")
        if not chosen:
            raise UsageProblem("nothing to try: the baseline's advice has no fix try can apply; give --set, "
                               "--input-ceiling, --echo or --hdf5-cache")
        self.variants = chosen

    # -- running ----------------------------------------------------------------------------------
    def execute(self) -> None:
        if self.folder is None:
            self.prepare()
        s = self.settings
        started = time.monotonic()
        first = self.measure_baseline()
        if first is None:
            return
        self.resolve(self.baseline_report)
        self.say(f"the baseline and {len(self.variants)} variant{'s' if len(self.variants) != 1 else ''} "
                 f"({', '.join(v.label for v in self.variants)}), each {s.steps} measured steps after "
                 f"{s.warmup_steps} warm-up, in {rounds_words(s.rounds, s.max_rounds, s.budget_s)}")
        round_no = 1
        while True:
            round_started = time.monotonic()
            if round_no > 1:
                self._run(round_no, None)
            for index, variant in enumerate(self.variants):
                self._run(round_no, index, variant)
            if round_no >= s.rounds:
                if self._clear() or round_no >= s.max_rounds:
                    break
                spent, per_round = time.monotonic() - started, time.monotonic() - round_started
                if s.budget_s and spent + per_round > s.budget_s:
                    self.notes.append(f"stopped after {round_no} rounds: another would pass the {s.budget_s:.0f} s "
                                      "budget (--budget)")
                    break
                self.say(f"after {round_no} rounds some speed-ups are not clear yet: one more round")
            round_no += 1

    def measure_baseline(self, noun: str = "experiment"):
        """Round 1's baseline: a planning run sizes the window, and where the window grew (or runs
        start cold) round 1 measures again as the others will; `baseline_report` is the report the
        fixes come from. Returns round 1's counted baseline run, or None when the planning run failed
        (its entry stays in `runs`)."""
        s = self.settings
        first = self._run(1, None)
        self.baseline_report = first["report"]
        if first["failed"]:
            return None
        grown = self._size_window(first["report"])
        if not (grown or s.cold):
            return first
        # The planning run does not count: round 1 gets a baseline measured as the others are.
        self.runs.remove(first)
        why = (f"windows of {s.steps} steps (at least {s.min_window_s:.0f} s each)" if grown else
               "every run starting with the program's files out of the page cache")
        self.say(f"the first baseline planned the {noun}; round 1 measures again with {why}")
        measured = self._run(1, None, tag="-measured")
        if grown and not measured["failed"]:
            # A window too short for the planning run's verdict (a GPU's utilisation averages over
            # 200 ms or more): the fixes come from the baseline measured over the full window.
            self.baseline_report = measured["report"]
        return measured

    def _clear(self) -> bool:
        from gpuprof.commands.experiments.results import summarise
        return summarise(self)["clear"]

    def _size_window(self, report) -> bool:
        """Lengthen the window to at least min_window_s of measured steps; True when it grew."""
        s = self.settings
        step = step_of(report)
        if not step or not s.min_window_s or s.steps * step >= s.min_window_s:
            return False
        wanted = min(MAX_WINDOW_STEPS, math.ceil(s.min_window_s / step))
        if wanted <= s.steps:
            return False
        self.notes.append(f"steps of {step * 1e3:.1f} ms: each window is {wanted} steps (at least "
                          f"{s.min_window_s:.0f} s), not {s.steps}")
        s.steps = wanted
        return True

    def _run(self, round_no: int, index, variant=None, tag: str = "") -> dict:
        name = "baseline" if variant is None else f"v{index + 1}"
        run_dir = os.path.join(self.folder, f"r{round_no}-{name}{tag}")
        settings = variant.for_probes(self.loader) if variant is not None else None
        if self.settings.cold and self.files_read:
            evicted, failed = cache.evict(self.files_read)
            if failed and not any(n.startswith("--cold:") for n in self.notes):
                self.notes.append(f"--cold: {failed} of {evicted + failed} files could not be evicted from the page cache")
        report, events = self.run_one(run_dir, settings)
        self.files_read |= cache.files_of(events)
        status = report.get("exit_code") if report else None
        failed = status not in (0, None) or report is None
        entry = {"round": round_no, "variant": index, "run_dir": run_dir, "report": report,
                 "events": events, "exit_code": status, "failed": failed}
        self.runs.append(entry)
        step = step_of(report)
        what = "baseline" if variant is None else variant.label
        shown = f"{step * 1000:.1f} ms/step" if step else "no steps measured"
        self.say(f"round {round_no}: {what}: " + (f"failed with status {status}" if failed else shown))
        signum = _pending_stop()
        if signum is None and report and report.get("interrupted"):
            signum = _signal_number(report.get("signal")) or int(signal.SIGINT)
        if signum is not None:
            self.interrupted = signum
            raise Interrupted(signum)
        return entry

    def _run_with_session(self, run_dir: str, variant_settings):
        from gpuprof.capture.launch.session import RunOptions, RunSession
        from gpuprof.record.reader import load_run
        from gpuprof.present.reporting.build import build_report
        from gpuprof.present.reporting.save import save_in_run
        from gpuprof.judge.sections.processes import events_of_kind

        s = self.settings
        options = RunOptions(out=run_dir, interval=s.interval, probes=True, gpu=s.gpu, live=False,
                             max_steps=s.steps, warmup_steps=s.warmup_steps, variant=variant_settings,
                             record_files=s.cold)
        session = RunSession(self.command, options)
        session.prepare()
        options.output_dir = session.run_dir
        session.execute()
        try:
            record = load_run(session.run_dir)
            report = build_report(record, run_dir=session.run_dir)
            save_in_run(report, session.run_dir)
        except Exception as exc:    # one broken run never costs the others
            self.notes.append(f"{session.run_dir}: no report ({exc.__class__.__name__}: {exc})")
            return None, []
        groups = record.get("processes", [])
        return report, events_of_kind(groups, kinds.VARIANT) + events_of_kind(groups, kinds.FILES_READ)


def batch_function(report: dict):
    """The module-level function a hand-written loop makes its batches in, as the baseline's
    sampled steps found it ({name, file, line}), or None."""
    steps = (report or {}).get("steps") or {}
    where = steps.get("data_wait_where") or next(
        (f.get("function") for f in ((steps.get("sampled") or {}).get("data_functions") or [])), None)
    if not where or " (" not in where or not where.endswith(")"):
        return None
    name, _, place = where[:-1].partition(" (")
    file, _, line = place.rpartition(":")
    if not name.isidentifier() or not line.isdigit():
        return None
    return {"name": name, "file": file, "line": int(line)}


def _needs_loader(variant) -> bool:
    return bool(variant.loader_settings) or "ceiling" in variant.settings or "echo" in variant.settings


def _pending_stop():
    """A Ctrl-C or SIGTERM that reached gpuprof while a run held signals: the experiment stops after
    the run it arrived in (the run itself already got it)."""
    try:
        pending = signal.sigpending()
    except (AttributeError, OSError):
        return None
    for signum in _STOPPING:
        if signum in pending:
            try:
                signal.sigtimedwait([signum], 0)
            except (AttributeError, OSError):
                pass
            return int(signum)
    return None


def _signal_number(name):
    try:
        return int(signal.Signals[name]) if name else None
    except KeyError:
        return None


def stderr_tail(run_dir: str, lines: int = 8) -> str:
    """The end of a run's program stderr, for a failure message."""
    try:
        with open(os.path.join(run_dir, "program-stderr.txt"), "rb") as handle:
            text = handle.read()[-4000:].decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def say_to_stderr(text: str) -> None:
    sys.stderr.write(f"gpuprof try: {text}\n")
    sys.stderr.flush()
