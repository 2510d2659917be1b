"""`try` that knows its own noise: disturbed rounds left out with what the machine did, speed-ups
as intervals that must clear 1.0, rounds added until the answer is clear, a page cache that warms,
and a "best" a person can keep."""

import pytest

from gpuprof.stats import noise
from gpuprof.commands.experiments import variants
from gpuprof.commands.experiments.results import summarise
from gpuprof.commands.experiments.runner import Experiment, Plan, Settings


def report(step, wait=0.5, read_bytes=0, other_idle=None, advice=()):
    system = {"cpu_count": 2, "cpu": {"idle": 0.5 if other_idle is None else other_idle, "iowait": 0.0, "steal": 0.0},
              "job": {"cores_busy": 1.0, "read_bytes": read_bytes}, "disk": {"read_mb_s": 1.0}}
    return {"steps": {"mean_step_s": step, "data_wait_share": wait}, "verdict": {"bottleneck": "input.cpu"},
            "advice": list(advice), "exit_code": 0, "command": ["python", "train.py"], "system": system,
            "dataloaders": [{"where": "train.py:30", "num_workers": 0, "framework": None}]}


def run(round_no, variant, rep):
    return {"round": round_no, "variant": variant, "run_dir": f"r{round_no}-{variant}", "report": rep,
            "events": [], "exit_code": 0, "failed": False}


class Done:
    """An experiment that already ran: its runs, variants and baseline."""

    def __init__(self, runs, chosen, cold=False):
        self.runs, self.variants = runs, chosen
        self.baseline_report = runs[0]["report"]
        self.folder, self.loader, self.notes, self.interrupted = "/tmp/x", "train.py:30", [], None
        self.settings = Settings(steps=10, warmup_steps=2, rounds=3, max_rounds=8, cold=cold)


def test_noise_intervals_clear_one_only_when_the_rounds_agree():
    middle, low, high = noise.interval([1.30, 1.32, 1.28, 1.31])
    assert low > 1.2 and high < 1.4 and noise.conclusion(low, high) == "faster"
    assert noise.conclusion(*noise.interval([0.9, 4.4])[1:]) == "inconclusive"
    assert noise.conclusion(*noise.interval([1.0, 1.01, 0.99, 1.0])[1:]) == "same"
    assert noise.disturbed([0.10, 0.11, 0.10, 0.40]) == [3] and noise.disturbed([0.10, 0.10, 0.40]) == []


def test_a_disturbed_baseline_round_is_left_out_and_named_with_what_the_machine_did():
    chosen = [variants.input_ceiling()]
    runs = []
    for r, base in enumerate((0.10, 0.10, 0.40, 0.11), 1):      # round 3: something else took the CPU
        busy = 0.05 if r == 3 else None
        runs += [run(r, None, report(base, other_idle=busy)), run(r, 0, report(0.091))]
    record = summarise(Done(runs, chosen))
    row = record["rows"][1]
    assert row["paired_rounds"] == 3 and row["speedup"] < 1.25          # not the 4.4x the disturbed round gives
    assert [(d["round"], d["label"]) for d in record["disturbed"]] == [(3, "baseline")]
    assert record["disturbed"][0]["machine"]["other_cores"] == pytest.approx(0.9)
    from gpuprof.present.render.try_text import lines
    text = "\n".join(lines(record))
    assert "round 3: baseline took 400.0 ms a step against 100.0 ms in the other rounds, disturbed (other processes " \
           "kept 0.9 of 2 cores busy" in text and "the whole round left out" in text


def test_a_speed_up_spread_across_one_is_inconclusive_and_never_best():
    chosen = variants.parse_set(["num_workers=2"])
    runs = []
    for r, ratio in enumerate((0.8, 1.3, 0.95, 1.25), 1):
        runs += [run(r, None, report(0.1)), run(r, 0, report(0.1 / ratio))]
    record = summarise(Done(runs, chosen))
    assert record["rows"][1]["conclusion"] == "inconclusive" and record["best"] is None and not record["clear"]
    from gpuprof.present.render.try_text import lines
    assert any("num_workers=2: inconclusive after 4 rounds" in line for line in lines(record))


def test_best_keeps_training_the_same_when_a_faster_echo_is_within_its_spread():
    chosen = [variants.echo(2)] + variants.parse_set(["num_workers=2"])
    runs = []
    for r, (echo, workers) in enumerate(((1.40, 1.30), (1.33, 1.36), (1.38, 1.28), (1.36, 1.33)), 1):
        runs += [run(r, None, report(0.1)), run(r, 0, report(0.1 / echo)), run(r, 1, report(0.1 / workers))]
    record = summarise(Done(runs, chosen))
    assert record["rows"][1]["speedup"] > record["rows"][2]["speedup"]
    assert record["best"] == "num_workers=2" and record["best_because"].startswith("echo x2 measured 1.37x")


def test_an_echo_clearly_faster_than_anything_that_keeps_training_wins_and_says_what_it_changes():
    chosen = [variants.echo(2)] + variants.parse_set(["num_workers=2"])
    runs = []
    for r in range(1, 5):
        runs += [run(r, None, report(0.1)), run(r, 0, report(0.1 / (1.8 + r / 100))),
                 run(r, 1, report(0.1 / (1.1 + r / 100)))]
    record = summarise(Done(runs, chosen))
    assert record["best"] == "echo x2" and record["best_because"] is None
    from gpuprof.present.render.try_text import lines
    assert any(line.startswith("best changes what the model trains on: each batch is trained on 2 times")
               for line in lines(record))


def test_a_page_cache_that_warms_after_the_first_run_is_said_and_cold_runs_are_not():
    chosen = variants.parse_set(["num_workers=2"])
    runs = [run(1, None, report(0.2, read_bytes=900 * 2**20)), run(1, 0, report(0.1, read_bytes=2 * 2**20))]
    runs += [run(r, v, report(0.1, read_bytes=2 * 2**20)) for r in (2, 3) for v in (None, 0)]
    warm = summarise(Done(runs, chosen))
    assert warm["cache"]["warmed"]
    from gpuprof.present.render.try_text import lines
    assert any(line.startswith("the page cache warmed: the first run read 900 MiB") for line in lines(warm))
    assert not summarise(Done(runs, chosen, cold=True))["cache"]["warmed"]


def fake_program(steps_by_round):
    """run_one for an Experiment: the step time of each (round, variant) in turn, from a table."""
    calls = []

    def run_one(run_dir, settings):
        calls.append((run_dir, settings))
        name = run_dir.rsplit("/", 1)[1]
        round_no = int(name.split("-")[0][1:])
        variant = None if "baseline" in name else 0
        step = steps_by_round(round_no, variant)
        return report(step), []
    return run_one, calls


def test_rounds_are_added_until_the_speed_up_is_clear_and_never_past_the_most(tmp_path):
    noisy = {1: 1.5, 2: 0.9, 3: 1.4, 4: 1.0, 5: 1.45, 6: 0.95, 7: 1.5, 8: 1.0, 9: 1.4}
    run_one, calls = fake_program(lambda r, v: 0.5 if v is None else 0.5 / noisy[r])
    plan = Plan(variants=variants.parse_set(["num_workers=2"]))
    settings = Settings(steps=10, warmup_steps=1, rounds=3, max_rounds=6, out=str(tmp_path), min_window_s=0)
    experiment = Experiment(command=_Command(), plan=plan, settings=settings, run_one=run_one)
    experiment.execute()
    assert max(r["round"] for r in experiment.runs) == 6          # never clear: stops at the most rounds
    steady = {r: 1.3 for r in range(1, 10)}
    run_one, calls = fake_program(lambda r, v: 0.5 if v is None else 0.5 / (steady[r] + r / 1000))
    experiment = Experiment(command=_Command(), plan=plan, settings=Settings(
        steps=10, warmup_steps=1, rounds=3, max_rounds=6, out=str(tmp_path), min_window_s=0), run_one=run_one)
    experiment.execute()
    assert max(r["round"] for r in experiment.runs) == 3          # clear after the minimum


def test_short_steps_get_a_window_of_seconds_and_round_one_its_own_baseline(tmp_path):
    run_one, calls = fake_program(lambda r, v: 0.01 if v is None else 0.008)
    settings = Settings(steps=40, warmup_steps=1, rounds=2, max_rounds=2, out=str(tmp_path))
    experiment = Experiment(command=_Command(), plan=Plan(variants=variants.parse_set(["num_workers=2"])),
                            settings=settings, run_one=run_one)
    experiment.execute()
    assert settings.steps == 200                                   # 2 s of 10 ms steps
    assert [c[0].rsplit("/", 1)[1] for c in calls][:3] == ["r1-baseline", "r1-baseline-measured", "r1-v1"]
    assert any("each window is 200 steps" in note for note in experiment.notes)


def test_a_fix_is_chosen_from_the_baseline_measured_over_the_grown_window(tmp_path):
    """On an H200 a 20-step planning run of 12 ms steps (0.25 s, about one NVML period) read the GPU
    idle and advised only larger-batch; the baseline over the 2 s window advised mixed precision."""
    advice = {"r1-baseline": [{"id": "larger-batch"}],
              "r1-baseline-measured": [{"id": "larger-batch"}, {"id": "mixed-precision", "change": {"autocast": True}}]}
    calls = []

    def run_one(run_dir, settings):
        calls.append(run_dir)
        name = run_dir.rsplit("/", 1)[1]
        return report(0.012, advice=advice.get(name, [])), []
    settings = Settings(steps=20, warmup_steps=5, rounds=1, max_rounds=1, out=str(tmp_path))
    experiment = Experiment(command=_Command(), plan=Plan(fixes=["mixed-precision"]), settings=settings,
                            run_one=run_one)
    experiment.execute()
    assert [c.rsplit("/", 1)[1] for c in calls] == ["r1-baseline", "r1-baseline-measured", "r1-v1"]
    assert [v.label for v in experiment.variants] == ["mixed-precision: autocast=true"]
    assert experiment.baseline_report["advice"][1]["id"] == "mixed-precision"


def test_a_fix_the_user_names_is_measured_even_where_the_baseline_did_not_advise_it(tmp_path):
    """`run` ranked num-workers first; try's shorter baseline advised others: the user's fix is still
    measured, and try says it was not advised."""
    run_one, calls = fake_program(lambda r, v: 0.5 if v is None else 0.25)
    advised = [{"id": "batch-echoing", "change": {"echo": 2}}]

    def with_other_advice(run_dir, settings):
        rep, events = run_one(run_dir, settings)
        return dict(rep, advice=advised), events
    settings = Settings(steps=10, warmup_steps=1, rounds=1, max_rounds=1, out=str(tmp_path), min_window_s=0)
    experiment = Experiment(command=_Command(), plan=Plan(fixes=["num-workers"]), settings=settings,
                            run_one=with_other_advice)
    experiment.execute()
    [variant] = experiment.variants
    assert variant.settings == {"num_workers": 2, "persistent_workers": True}     # the report's 2 cores
    assert any("did not advise it (advised: batch-echoing); measured as asked" in n for n in experiment.notes)
    needs_figures = Experiment(command=_Command(), plan=Plan(fixes=["hdf5-chunk-cache"]), settings=Settings(
        steps=10, warmup_steps=1, rounds=1, max_rounds=1, out=str(tmp_path), min_window_s=0), run_one=with_other_advice)
    with pytest.raises(Exception, match="needs the advice's own figures"):
        needs_figures.execute()


class _Command:
    label = "train"


def test_a_variant_the_probes_could_not_apply_is_never_best_nor_a_loss():
    chosen = [variants.hdf5_cache(1 << 23)]
    runs = []
    for r in (1, 2, 3):
        variant_run = run(r, 0, report(0.1 / (1.3 + r / 100)))
        variant_run["events"] = [{"k": "variant", "applied": {}, "error": "the program opens data.h5 again for every read"}]
        runs += [run(r, None, report(0.1)), variant_run]
    record = summarise(Done(runs, chosen))
    assert record["rows"][1]["conclusion"] == "not applied" and record["best"] is None
    from gpuprof.present.render.try_text import lines, speedup_cell
    assert speedup_cell(record["rows"][1]).endswith("not applied")
    assert any("not applied (the program opens data.h5 again for every read)" in line for line in lines(record))


def test_a_hand_written_loop_gets_its_batch_function_replayed_for_the_ceiling():
    from gpuprof.commands.experiments.runner import batch_function
    sampled = {"steps": {"data_wait_source": "sampled", "data_wait_where": "get_batch (train.py:124)"}}
    assert batch_function(sampled) == {"name": "get_batch", "file": "train.py", "line": 124}
    gap = {"steps": {"data_wait_source": "before-first-forward",
                     "sampled": {"data_functions": [{"function": "load_rows (src/data.py:7)", "share": 0.2}]}}}
    assert batch_function(gap) == {"name": "load_rows", "file": "src/data.py", "line": 7}
    assert batch_function({"steps": {"data_wait_where": "<listcomp> (train.py:3)"}}) is None


def test_a_speed_up_cell_shows_one_spread_its_interval_where_there_is_one():
    from gpuprof.present.render.try_text import speedup_cell
    row = {"label": "num_workers=2", "speedup": 1.5, "rounds": 3, "speedup_min": 1.2, "speedup_max": 1.9,
           "interval_low": 1.3, "interval_high": 1.7, "conclusion": "faster"}
    assert speedup_cell(row) == "1.50x (1.30-1.70)"
    assert speedup_cell(dict(row, interval_low=None, interval_high=None, conclusion=None)) == "1.50x (1.20-1.90)"
    assert speedup_cell(dict(row, conclusion="inconclusive")) == "1.50x (1.30-1.70) ?"
