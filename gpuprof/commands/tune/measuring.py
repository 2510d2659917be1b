"""`try`'s runner (gpuprof.commands.experiments.runner.Experiment) driven one round at a time by the search:
the same bounded runs, the same window sizing, folders, progress and signal handling; only the
rounds' contents come from gpuprof.commands.tune.search. Each combination is one of try's variants, so its
runs accumulate under one index and try's summary reads them as it reads its own."""

import time

from gpuprof.commands.experiments import variants as variant_kinds
from gpuprof.commands.experiments.rounds import step_of
from gpuprof.commands.experiments.runner import Experiment
from gpuprof.errors import UsageProblem
from gpuprof.record import kinds
from gpuprof.record.lines import same_line
from gpuprof.commands.tune import candidates as cand
from gpuprof.commands.tune import knobs


class TuneExperiment(Experiment):
    def __init__(self, command, settings, say=None, run_one=None):
        from gpuprof.commands.experiments.runner import Plan
        super().__init__(command, Plan(), settings, say=say, run_one=run_one)
        self.index_of = {}          # combination key -> variant index
        self.run_seconds = []       # wall time of each run, for the budget

    def prepare(self) -> str:
        from gpuprof.capture.launch.rundir import create_run_dir
        self.folder = create_run_dir(self.settings.out, f"tune-{self.command.label}")
        return self.folder

    def start(self) -> dict:
        """The first baseline, measured as try measures it (Experiment.measure_baseline): round 1's
        counted run, or the planning run where it failed; `baseline_report` holds the search's facts."""
        first = self.measure_baseline("search")
        if first is None or first["failed"]:
            return first or self.runs[-1]
        loaders = (self.baseline_report or {}).get("dataloaders") or []
        wanted = self.settings.loader
        if wanted and not any(same_line(row.get("where"), wanted) for row in loaders):
            built = ", ".join(str(row.get("where")) for row in loaders) or "none"
            raise UsageProblem(f"--loader {wanted}: no DataLoader was built there (built at: {built})")
        self.loader = wanted or (loaders[0].get("where") if loaders else None)
        return first

    def measure(self, round_no: int, combinations: list) -> dict:
        """One round: the unchanged program (round 1's ran in start()), then each combination. Returns
        each one's time per unit of work by key, None where its run failed or its change was not
        applied."""
        runs = {}
        if round_no > 1:
            runs[cand.UNCHANGED_KEY] = self._run(round_no, None)
        else:
            runs[cand.UNCHANGED_KEY] = next(r for r in self.runs if r["round"] == 1 and r["variant"] is None)
        for combination in combinations:
            index = self._index(combination)
            runs[cand.key_of(combination)] = self._run(round_no, index, self.variants[index])
        return {key: unit_time(entry) for key, entry in runs.items()}

    def per_run_s(self) -> float:
        """The mean wall time of a run so far (start-up, window and report)."""
        return sum(self.run_seconds) / len(self.run_seconds) if self.run_seconds else 0.0

    def _index(self, combination: dict) -> int:
        key = cand.key_of(combination)
        if key not in self.index_of:
            caution = "; ".join(k.why for k in knobs.unsafe_in(combination)) or None
            self.variants.append(variant_kinds.Variant(cand.label_of(combination), combination, caution=caution))
            self.index_of[key] = len(self.variants) - 1
        return self.index_of[key]

    def _run(self, round_no, index, variant=None, tag: str = "") -> dict:
        """try's run, its wall time kept for the budget."""
        started = time.monotonic()
        try:
            return super()._run(round_no, index, variant, tag=tag)
        finally:
            self.run_seconds.append(time.monotonic() - started)


def unit_time(entry: dict):
    """A run's mean step time per sample where its batch size is known (so a larger batch compares
    fairly), else per step; None for a failed run or one whose change the probes could not make."""
    if entry is None or entry["failed"] or not_applied(entry):
        return None
    step = step_of(entry["report"])
    if not step:
        return None
    size = ((entry["report"] or {}).get("steps") or {}).get("batch_size")
    return step / size if size else step


def not_applied(entry: dict) -> bool:
    return any(event.get("error") for event in entry.get("events") or []
               if event.get("k", kinds.VARIANT) == kinds.VARIANT)
