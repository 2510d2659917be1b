"""try's runner driven by tune's search with fake runs (no process): the rounds it makes, the
per-sample comparison, and the `gpuprof.tune/1` record with its console and Markdown text."""

import json

from gpuprof.commands.experiments.runner import Settings
from gpuprof.capture.launch.command import ChildCommand
from gpuprof.commands.tune import outcome, program, text
from gpuprof.commands.tune.measuring import TuneExperiment, unit_time
from gpuprof.commands.tune.search import Search


def report(step, batch_size=16):
    return {"steps": {"mean_step_s": step, "batch_size": batch_size, "data_wait_share": 0.6}, "exit_code": 0,
            "command": ["python", "train.py"], "verdict": {"bottleneck": "input.cpu", "summary": "Input-bound"},
            "system": {"cpu_count": 2, "cpu": {"idle": 0.5}, "job": {"cores_busy": 1.0}},
            "dataloaders": [{"where": "train.py:30", "num_workers": 0, "torch_threads": 2, "framework": None}],
            "advice": [{"id": "some-fix", "change": {"num_workers": 2, "persistent_workers": True}}]}


def fake_program(run_dir, variant):
    """Two workers halve the step; persistent workers change nothing; one thread costs 20%."""
    settings = variant or {}
    step = 0.040 / (1 + min(settings.get("num_workers", 0), 1))
    step *= 1.2 if settings.get("torch_threads") == 1 else 1.0
    wobble = 1 + 0.004 * (hash(run_dir) % 5)
    applied = {k: v for k, v in settings.items() if k != "loader"}
    return report(step * wobble), [{"k": "variant", "applied": applied, "error": None}] if applied else []


def searched_experiment(tmp_path):
    command = ChildCommand(["python", "train.py"], "script", "train.py")
    experiment = TuneExperiment(command, Settings(steps=10, warmup_steps=2, out=str(tmp_path / "tune"),
                                                  min_window_s=0), run_one=fake_program)
    experiment.prepare()
    experiment.start()
    facts = program.facts_of(experiment.baseline_report)
    search = Search(facts, program.searched_keys(facts, frozenset()),
                    program.seeds_of(experiment.baseline_report, program.searched_keys(facts, frozenset())))
    while (combinations := search.next_round()) is not None:
        search.record(experiment.measure(search.round + 1, combinations))
    return experiment, search, facts


def test_the_search_runs_as_try_s_rounds_and_the_record_says_what_it_measured(tmp_path):
    experiment, search, facts = searched_experiment(tmp_path)
    assert search.best in ({"num_workers": 1}, {"num_workers": 2}, {"num_workers": 2, "persistent_workers": True},
                           {"num_workers": 1, "persistent_workers": True})
    baselines = [r for r in experiment.runs if r["variant"] is None]
    assert [r["round"] for r in baselines] == list(range(1, search.round + 1))     # one per round, first included
    record = outcome.record(experiment, search, facts, frozenset(), 12.0, 300.0, program.left_out(facts, frozenset()))
    json.dumps(record)
    assert record["format"] == "gpuprof.tune/1"
    assert record["best"]["faster"] and record["best"]["speedup"] > 1.8
    assert record["stages"][0]["candidates"][0] == "num_workers=2, persistent_workers=true"   # the advice first
    rows = {row["label"]: row for row in record["rows"]}
    assert rows["torch_threads=1"]["outcome"] == "slower"
    assert rows[record["best"]["label"]]["outcome"] == "best"
    assert all(row["applied"] for row in rows.values() if row["rounds"])
    console = text.console(record)
    assert "best: " + record["best"]["label"] in console and "vs unchanged (90%)" in console
    assert "pin_memory: not searched, the run used no GPU" in console
    markdown = text.markdown(record)
    assert markdown.startswith("# gpuprof tune") and "| torch\\_threads=1 |" in markdown


def test_a_larger_batch_is_compared_per_sample():
    entry = {"failed": False, "events": [], "report": report(0.080, batch_size=32)}
    assert unit_time(entry) == 0.080 / 32
    assert unit_time(dict(entry, events=[{"k": "variant", "error": "persistent_workers needs num_workers > 0"}])) \
        is None
    assert unit_time(dict(entry, failed=True)) is None


def check_entry(folder, name, step, stdout, status=0):
    run_dir = folder / name
    run_dir.mkdir()
    (run_dir / "program-stdout.txt").write_text(stdout)
    rep = dict(report(step), exit_code=status)
    return {"run_dir": str(run_dir), "report": rep, "events": [], "exit_code": status, "failed": status != 0}


def test_the_check_passes_a_gain_that_holds_with_the_same_output_and_status(tmp_path):
    from gpuprof.commands.experiments.speedups import judge
    from gpuprof.commands.tune.check import _judged
    entries = [(check_entry(tmp_path, f"u{n}", 0.040 + 0.001 * n, "loss 0.5\n"),
                check_entry(tmp_path, f"p{n}", 0.020 + 0.0005 * n, "loss 0.5\n")) for n in range(3)]
    result = _judged(entries, judge([2.0, 2.1, 1.9]))
    assert result.passed and result.speedup.conclusion == "faster" and result.difference == ""


def test_the_check_fails_on_other_output_another_status_or_a_gain_gone(tmp_path):
    from gpuprof.commands.experiments.speedups import judge
    from gpuprof.commands.tune.check import _judged
    promised = judge([2.0, 2.1, 1.9])
    other = [(check_entry(tmp_path, f"u{n}", 0.040, "loss 0.5\n"), check_entry(tmp_path, f"p{n}", 0.020, "loss 0.6\n"))
             for n in range(2)]
    result = _judged(other, promised)
    assert not result.passed and not result.same_output
    assert result.difference == "stdout line 1: 'loss 0.5' before, 'loss 0.6' patched"
    crashed = [(check_entry(tmp_path, "u9", 0.040, ""), check_entry(tmp_path, "p9", 0.020, "", status=1))]
    assert not _judged(crashed, promised).same_status
    slow = [(check_entry(tmp_path, f"us{n}", 0.040, "x\n"), check_entry(tmp_path, f"ps{n}", 0.039 + 0.002 * n, "x\n"))
            for n in range(3)]
    assert not _judged(slow, promised).gain_holds
