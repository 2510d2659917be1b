"""`gpuprof tune`'s plan, pure: the candidates around the best, the stages, racing against the
noise, combining winners, the budget's stop, and what is searched (fake measurements only)."""

import random

import pytest

from gpuprof.errors import UsageProblem
from gpuprof.commands.tune import candidates as cand
from gpuprof.commands.tune import knobs, program
from gpuprof.commands.tune.search import COMPLETE, UNCHANGED, Search

SAFE_CPU = frozenset({"num_workers", "torch_threads", "prefetch_factor", "persistent_workers"})


def facts(cores=4, workers=0, threads=None, input_bound=True, gpu=False, loader=True, batch_size=16):
    return program.ProgramFacts(cores=cores, gpu=gpu, loader={"num_workers": workers, "where": "train.py:30"}
                                if loader else None, threads=threads or cores, input_bound=input_bound,
                                batch_size=batch_size)


def drive(search, cost, noise=0.01, seed=1, rounds=60):
    """Run the search against a cost model: each round's times are the model's, a little noisy.
    Returns each round's (the stage's reference, or None when confirming; the labels measured)."""
    rng = random.Random(seed)
    measured = []
    while (combinations := search.next_round()) is not None and search.round < rounds:
        times = {UNCHANGED: cost({}) * rng.uniform(1 - noise, 1 + noise)}
        for combination in combinations:
            times[cand.key_of(combination)] = cost(combination) * rng.uniform(1 - noise, 1 + noise)
        stage = search.stage
        measured.append((stage.reference if stage else None, [cand.label_of(c) for c in combinations]))
        search.record(times)
    return measured


def workers_and_threads(combination):
    """Workers help up to 3, but only beside fewer threads: each thread beyond the cores the workers
    leave costs more than a worker saves."""
    workers = combination.get("num_workers", 0)
    threads = combination.get("torch_threads", 4)
    return 10.0 / (1 + min(workers, 3)) + 2.0 * max(0, workers + threads - 4) + 0.1 * threads


def test_the_search_finds_the_joint_best_not_one_knob_at_a_time():
    search = Search(facts(), SAFE_CPU)
    drive(search, workers_and_threads)
    best = search.best
    # Three workers alone lose to oversubscription, one thread alone buys nothing: only the two
    # together are fastest.
    assert best == {"num_workers": 3, "torch_threads": 1}
    assert search.versus(best, {}).conclusion == "faster"
    assert search.finished_because == COMPLETE
    assert search.search_ended in ("no combination around the best was faster beyond the noise",
                                   "every combination around the best was measured")
    assert len(search.stages) >= 2


def test_each_round_measures_the_best_so_far_beside_the_candidates_still_racing():
    search = Search(facts(), SAFE_CPU)
    measured = drive(search, lambda c: workers_and_threads(c) + (0.5 if c.get("prefetch_factor") else 0))
    later = [(reference, labels) for reference, labels in measured if reference]
    assert later and all(labels[0] == cand.label_of(reference) for reference, labels in later)
    confirming = [labels for reference, labels in measured if reference is None]
    assert all(labels == [cand.label_of(search.best)] for labels in confirming)


def test_the_advice_seeds_the_first_stage():
    seed = {"num_workers": 2, "persistent_workers": True, "torch_threads": 1}
    search = Search(facts(), SAFE_CPU, seeds=[seed])
    first = search.next_round()
    assert first[0] == seed


def test_nothing_faster_than_the_program_ends_at_once_with_the_program_as_best():
    search = Search(facts(), SAFE_CPU)
    measured = drive(search, lambda combination: 10.0 + 3.0 * len(combination))
    assert search.best == {}
    assert search.search_ended == "no combination around the best was faster beyond the noise"
    assert len(measured) == 2            # one stage: two rounds decide every candidate slower


def test_noise_wider_than_the_gains_decides_nothing_and_keeps_the_program():
    search = Search(facts(), SAFE_CPU)
    drive(search, lambda c: 10.0 / (1 + 0.02 * c.get("num_workers", 0)), noise=0.4, seed=3)
    assert search.best == {}
    assert all(outcome in ("inconclusive", "same", "slower") for outcome in search.stages[0].outcome.values())


def test_a_candidate_that_fails_leaves_the_race_at_once():
    search = Search(facts(cores=2), SAFE_CPU)
    first = search.next_round()
    broken = cand.key_of(first[0])
    times = {UNCHANGED: 10.0, **{cand.key_of(c): 5.0 for c in first}}
    times[broken] = None
    search.record(times)
    assert search.stages[0].outcome[broken] == "failed"
    assert broken not in [cand.key_of(c) for c in search.next_round()]


def test_the_budget_stop_keeps_a_winner_already_decided():
    search = Search(facts(cores=2), frozenset({"num_workers"}))
    for _ in range(2):
        combinations = search.next_round()
        times = {UNCHANGED: 10.0 * random.uniform(0.99, 1.01)}
        times.update({cand.key_of(c): (5.0 if c.get("num_workers") == 2 else 10.0 + random.uniform(-3, 3))
                      for c in combinations})
        search.record(times)
    search.stop("the budget")
    assert search.best == {"num_workers": 2}
    assert search.next_round() is None


class SlowRuns:
    """An experiment whose every run costs more than any budget: only the rounds the budget never
    stops are measured. Two workers halve the unit time."""

    def __init__(self):
        self.rounds = []

    def per_run_s(self):
        return 1000.0

    def measure(self, round_no, combinations):
        self.rounds.append(round_no)
        times = {UNCHANGED: 10.0 * (1 + 0.01 * round_no)}
        times.update({cand.key_of(c): (5.0 if c.get("num_workers") == 2 else 10.0) for c in combinations})
        return times


def test_a_budget_smaller_than_one_round_still_gets_the_two_rounds_an_interval_needs():
    from gpuprof.commands.workflows import tuning
    search, slow = Search(facts(cores=2), frozenset({"num_workers"})), SlowRuns()
    tuning._rounds(slow, search, budget=1.0, started=0.0, say=lambda line: None)
    assert slow.rounds == [1, 2]
    assert "budget" in search.finished_because
    assert search.best == {"num_workers": 2}


def test_candidates_are_normalised_and_never_the_program_as_it_is():
    f = facts(cores=8, workers=2)
    around = cand.around({}, f, SAFE_CPU, wide=True)
    assert {} not in around
    assert all("persistent_workers" not in c and "prefetch_factor" not in c for c in around
               if c.get("num_workers") == 0)
    assert {"num_workers": 0} in around and {"persistent_workers": True} in around
    assert cand.normalise({"num_workers": 2, "torch_threads": 8}, f) == {}


def test_worker_counts_climb_to_the_cores_and_narrow_around_the_best():
    assert cand.worker_counts(16, 0, wide=True) == [1, 2, 4, 8, 16]
    assert cand.worker_counts(2, 0, wide=True) == [1, 2]
    assert cand.worker_counts(16, 4, wide=False) == [2, 3, 6, 8]


def test_thread_counts_are_one_the_cores_left_and_torch_s_default():
    assert cand.thread_counts(facts(cores=8), workers=3, now=8) == [1, 5]
    assert cand.thread_counts(facts(cores=8), workers=3, now=1) == [5, 8]


def test_safe_settings_are_searched_and_the_others_only_when_allowed():
    cpu = facts()
    assert program.searched_keys(cpu, frozenset()) == SAFE_CPU
    gpu = facts(gpu=True)
    assert {"pin_memory", "cudnn_benchmark"} <= program.searched_keys(gpu, frozenset())
    assert "autocast" in program.searched_keys(cpu, frozenset({"autocast"}))
    assert "allow_tf32" not in program.searched_keys(cpu, frozenset({"allow_tf32"}))    # no GPU
    no_loader = facts(loader=False)
    assert program.searched_keys(no_loader, frozenset()) == {"torch_threads"}
    assert program.searched_keys(cpu, frozenset(), only=frozenset({"num_workers"})) == {"num_workers"}
    assert any("no GPU" in line for line in program.left_out(cpu, frozenset()))


def test_allow_and_only_refuse_what_they_cannot_mean():
    assert knobs.parse_allow(["autocast,echo", "batch-size"]) == {"autocast", "echo", "batch_size"}
    assert knobs.parse_allow(["mixed-precision"]) == {"autocast"}        # a fix's id stands for its setting
    with pytest.raises(UsageProblem, match="searched anyway"):
        knobs.parse_allow(["num_workers"])
    with pytest.raises(UsageProblem, match="not a setting"):
        knobs.parse_allow(["warp_speed"])
    with pytest.raises(UsageProblem, match="--allow too"):
        knobs.parse_only(["echo"], frozenset())
    assert knobs.parse_only(["num_workers"], frozenset()) == {"num_workers"}


def test_a_setting_that_changes_numerics_says_so():
    changed = knobs.unsafe_in({"num_workers": 2, "autocast": True})
    assert [k.key for k in changed] == ["autocast"] and "precision" in changed[0].why


def test_seeds_are_the_advice_changes_made_of_searched_keys():
    report = {"advice": [{"id": "x", "change": {"num_workers": 2, "torch_threads": 1}},
                         {"id": "y", "change": {"echo": 2}}, {"id": "z", "change": None}]}
    assert program.seeds_of(report, SAFE_CPU) == [{"num_workers": 2, "torch_threads": 1}]


def test_facts_read_the_report():
    report = {"system": {"cpu_count": 6}, "dataloaders": [{"where": "t.py:3", "num_workers": 2, "torch_threads": 6,
                                                           "prefetch_factor": None}],
              "verdict": {"bottleneck": "input.cpu"}, "steps": {"batch_size": 32}, "cuda_devices": []}
    f = program.facts_of(report)
    assert (f.cores, f.gpu, f.threads, f.input_bound, f.batch_size) == (6, False, 6, True, 32)
    assert f.current("prefetch_factor") == 2 and f.current("pin_memory") is False
