"""The search's plan, pure: which combinations to measure next, from the measurements so far.

Stage 1 measures the advice's changes and the combinations one setting away from the program as it
is; each later stage, those one setting away from the best so far (the reference) and that best
combined with the previous stage's other winners. In every round the driver runs the unchanged
program, the reference and the stage's candidates still in the race, so each is compared with the
reference of its own round (try's paired ratios and interval, gpuprof.commands.experiments.speedups; one
round has no interval, so a stage runs at least two). A candidate leaves the race once its interval
decides it (faster, slower, the same) or after MAX_ROUNDS; one that failed leaves at once. The
fastest winner becomes the next reference; a stage with no winner ends the search: nothing around
the best is faster beyond the noise. Last, the best is measured against the unchanged program until
its interval decides, within CONFIRM_ROUNDS.

The driver hands `record` a time per unit of work (per sample where the batch sizes are known, so
another batch size compares fairly) for each combination it ran, None for a run that failed."""

from gpuprof.stats import noise
from gpuprof.commands.experiments import speedups
from gpuprof.commands.tune import candidates as cand

UNCHANGED = cand.UNCHANGED_KEY
MAX_ROUNDS = 4
CONFIRM_ROUNDS = (3, 6)     # paired rounds of the best against the unchanged program: at least, at most
DECIDED = ("faster", "slower", "same")
COMPLETE = "complete"        # finished_because when nothing cut the search short


class Stage:
    """One step of the search: candidates measured beside the same reference until each is decided."""

    def __init__(self, number: int, reference: dict, combinations: list, why: str):
        self.number = number
        self.reference = reference
        self.candidates = [cand.key_of(c) for c in combinations]
        self.why = why
        self.rounds = 0
        self.outcome = {}           # key -> faster, slower, same, inconclusive, failed

    def racing(self) -> list:
        return [k for k in self.candidates if self.outcome.get(k) not in DECIDED + ("failed",)]


class Search:
    """The plan: `next_round()` says what to measure, `record()` takes what was measured."""

    def __init__(self, facts, searched: frozenset, seeds=()):
        self.facts = facts
        self.searched = searched
        self.combinations = {UNCHANGED: {}}
        self.times = {UNCHANGED: {}}        # key -> {round: unit time}
        self.failures = {}                  # key -> failed runs
        self.stages = []
        self.round = 0
        self.confirming = False
        self.finished_because = None
        self.search_ended = None
        self.reference = {}
        first = cand.unique([cand.normalise(s, facts) for s in seeds] +
                            cand.around({}, facts, searched, wide=facts.input_bound or not facts.has_loader),
                            exclude=({},))
        self._open({}, first, "the advice's changes and one setting away from the program as it is")

    # -- what the driver asks -------------------------------------------------------------------
    @property
    def best(self) -> dict:
        """The fastest combination found, {} while none beat the program as it is."""
        return self.reference

    @property
    def stage(self):
        return self.stages[-1] if self.stages and not self.confirming else None

    def next_round(self):
        """The combinations to measure beside the unchanged program in the next round, or None when
        the search is over (`finished_because` says why)."""
        if self.finished_because is not None:
            return None
        if not self.confirming:
            stage = self.stages[-1]
            if not stage.racing() or stage.rounds >= MAX_ROUNDS:
                self._close(stage)
                return self.next_round()
            keys = ([cand.key_of(stage.reference)] if stage.reference else []) + stage.racing()
            return [self.combinations[k] for k in keys]
        if not self.best:
            self.finished_because = COMPLETE
            return None
        best = cand.key_of(self.best)
        paired = len(self._paired(best, UNCHANGED))
        verdict = self.versus(self.best, {})
        least, most = CONFIRM_ROUNDS
        if paired < least or (verdict.conclusion not in DECIDED and paired < most):
            return [self.best]
        self.finished_because = COMPLETE
        return None

    def record(self, times: dict) -> None:
        """One round's unit times by combination key (None: the run failed); UNCHANGED included."""
        self.round += 1
        for key, value in times.items():
            if value is None:
                self.failures[key] = self.failures.get(key, 0) + 1
            elif value > 0:
                self.times.setdefault(key, {})[self.round] = value
        stage = self.stage
        if stage is None:
            return
        stage.rounds += 1
        for key in stage.racing():
            if self.failures.get(key):
                stage.outcome[key] = "failed"
                continue
            verdict = self.versus(self.combinations[key], stage.reference)
            stage.outcome[key] = verdict.conclusion or "inconclusive"

    def stop(self, why: str) -> None:
        """End the search where it stands (the budget ran out, a signal); the open stage's fastest
        winner so far, if any, is the best."""
        stage = self.stage
        if stage is not None:
            winners = [k for k in stage.candidates if stage.outcome.get(k) == "faster"]
            if winners:
                top = max(winners, key=lambda k: self.versus(self.combinations[k], stage.reference).centre or 0)
                self.reference = self.combinations[top]
        self.finished_because = why

    # -- figures ---------------------------------------------------------------------------------
    def versus(self, combination: dict, reference: dict) -> speedups.Speedup:
        """How much faster `combination` ran than `reference` over the rounds that ran both."""
        pairs = self._paired(cand.key_of(combination), cand.key_of(reference))
        return speedups.judge([ref / mine for ref, mine in pairs])

    def paired_rounds(self, combination: dict, reference: dict) -> int:
        return len(self._paired(cand.key_of(combination), cand.key_of(reference)))

    def _paired(self, key: tuple, reference: tuple) -> list:
        mine, theirs = self._usable(key), self._usable(reference)
        return [(theirs[r], mine[r]) for r in sorted(mine) if r in theirs]

    def _usable(self, key: tuple) -> dict:
        """A combination's times by round, less the runs something else on the machine disturbed."""
        series = self.times.get(key) or {}
        rounds = sorted(series)
        spoiled = {rounds[i] for i in noise.disturbed([series[r] for r in rounds])}
        return {r: series[r] for r in rounds if r not in spoiled}

    # -- stages ----------------------------------------------------------------------------------
    def _open(self, reference: dict, combinations: list, why: str) -> None:
        fresh = [c for c in combinations if cand.key_of(c) not in self.combinations]
        if not fresh:
            self._confirm("every combination around the best was measured")
            return
        for combination in fresh:
            self.combinations[cand.key_of(combination)] = combination
        self.stages.append(Stage(len(self.stages) + 1, reference, fresh, why))

    def _close(self, stage: Stage) -> None:
        winners = [k for k in stage.candidates if stage.outcome.get(k) == "faster"]
        if not winners:
            self._confirm("no combination around the best was faster beyond the noise")
            return
        winners.sort(key=lambda k: -(self.versus(self.combinations[k], stage.reference).centre or 0))
        self.reference = best = self.combinations[winners[0]]
        combined = [cand.merged(best, self.combinations[k], self.facts) for k in winners[1:]]
        self._open(best, cand.unique(combined + cand.around(best, self.facts, self.searched), exclude=(best, {})),
                   f"around {cand.label_of(best)}" + (", and it with the other winners" if combined else ""))

    def _confirm(self, why: str) -> None:
        self.confirming = True
        self.search_ended = why
