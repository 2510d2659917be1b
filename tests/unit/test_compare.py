"""`gpuprof compare`: the pure comparison of two reports (gpuprof.gate.compare), its text, and
the workflow's reading of run folders, report JSONs and try folders, on the saved golden runs."""

import copy
import json
import os
import shutil
import subprocess

import pytest

from gpuprof.gate import compare as cmp
from gpuprof.errors import UsageProblem
from gpuprof.record import provenance
from gpuprof.record.reader import load_run
from gpuprof.record.run_header import RunHeader, SamplingSettings
from gpuprof.present.render import compare_text
from gpuprof.present.reporting.build import build_report
from gpuprof.commands.workflows.compare import compare_runs, load_side
from tests.conftest import ROOT

RUNS = os.path.join(ROOT, "tests", "golden", "runs")
_built = {}


def golden(name: str) -> dict:
    if name not in _built:
        _built[name] = build_report(load_run(os.path.join(RUNS, name)), run_dir=os.path.join(RUNS, name))
    return copy.deepcopy(_built[name])


def scaled(report: dict, factor: float) -> dict:
    """The same run with every step `factor` times as long (same relative spread)."""
    out = copy.deepcopy(report)
    steps = out["steps"]
    for key in ("median_step_s", "mean_step_s", "p90_step_s"):
        steps[key] *= factor
    for key in ("median_step_s", "p25_step_s", "p75_step_s", "mean_step_s", "mean_se_s"):
        steps["steady"][key] *= factor
    steps["samples_per_second"] /= factor
    return out


def busy_machine(report: dict) -> dict:
    """The same run on a machine whose other processes kept every free core busy."""
    out = copy.deepcopy(report)
    out["system"]["cpu"]["idle"] = 0.0
    out["system"]["cpu"]["iowait"] = 0.0
    cores = out["system"]["cpu_count"]
    other = cores - (out["system"]["job"]["cores_busy"] or 0.0)
    out["system"]["others"] = {"other_cores": round(other, 2), "cpu_count": cores, "share": other / cores,
                               "notable": True, "over": "steps"}
    return out


def test_an_older_report_without_others_is_judged_from_its_summary():
    old = busy_machine(golden("cpu_starved"))
    del old["system"]["others"]
    assert cmp.disturbance([old])["other_cores"] > 0.5


def compared(ra, rb, **options):
    return cmp.compare(cmp.side(ra, "A"), cmp.side(rb, "B"), **options)


def test_the_same_run_twice_is_within_noise_with_nothing_changed():
    report = golden("cpu_starved")
    result = compared(report, report)
    assert result["format"] == "gpuprof.compare/1"
    assert result["call"] == cmp.WITHIN_NOISE
    assert result["step"]["ratio"] == pytest.approx(1.0) and not result["step"]["beyond_noise"]
    assert result["changed"] == []
    assert {"command", "batch size", "num_workers"} <= set(result["unchanged"])
    assert result["a"]["verdict"]["bottleneck"] == result["b"]["verdict"]["bottleneck"] == "input.cpu"
    assert "within noise" in compare_text.headline(result)
    assert result["gate"] is None


def test_a_faster_run_is_faster_with_its_ratio_and_interval():
    before = golden("cpu_starved")
    result = compared(before, scaled(before, 0.7))
    assert result["call"] == cmp.FASTER
    assert result["step"]["speedup"] == pytest.approx(1 / 0.7)
    assert result["step"]["ratio"] == pytest.approx(0.7)
    low, high = result["b"]["interval_s"]
    assert low < result["b"]["step_s"] < high
    assert "B is 1.43x faster than A" in compare_text.headline(result)
    # and the other way round it is slower
    assert compared(scaled(before, 0.7), before)["call"] == cmp.SLOWER


def split_steps(report: dict, instant: float, waiting: float, mean: float, mean_se: float) -> dict:
    """The same run whose steady steps split into instant ones (the median) and ones that wait."""
    out = copy.deepcopy(report)
    out["steps"]["steady"].update({"median_step_s": instant, "p25_step_s": instant, "p75_step_s": waiting,
                                   "mean_step_s": mean, "mean_se_s": mean_se, "steps": 27})
    return out


def test_a_run_whose_steps_split_is_judged_by_its_mean_not_its_median():
    # Prefetching workers: three steps in four find a batch ready (0.8 ms), the rest wait for one.
    # Their median says 55x faster with a noise no change could clear; their mean says what was gained.
    # Both sides are then measured by their mean: one measure, so the speed-up is a ratio of like figures.
    before = golden("cpu_starved")
    base, mean = before["steps"]["steady"]["median_step_s"], before["steps"]["steady"]["mean_step_s"]
    after = split_steps(before, base / 55, base * 0.9, mean / 4, mean / 40)
    result = compared(before, after)
    assert result["b"]["statistic"] == result["a"]["statistic"] == "mean"
    assert result["step"]["speedup"] == pytest.approx(4.0)
    assert result["call"] == cmp.FASTER
    assert "B is 4.00x faster than A (mean step" in compare_text.headline(result)
    # an older report without the mean keeps its median and its (wide) noise
    for key in ("mean_step_s", "mean_se_s"):
        del after["steps"]["steady"][key]
    old = compared(before, after)
    assert old["b"]["statistic"] == "median" and old["call"] == cmp.WITHIN_NOISE
    # ... and a change beyond SAME that the noise swallows is still worded as measured, never "as long as"
    text = compare_text.headline(old)
    assert "B measured 55.00x faster than A, but not beyond the noise" in text and "as long as" not in text


def test_a_run_whose_steps_agree_keeps_its_median():
    before = golden("cpu_starved")
    steady = before["steps"]["steady"]
    assert steady["mean_step_s"] > 0 and steady["mean_se_s"] >= 0
    assert compared(before, before)["a"]["statistic"] == "median"


def test_changed_argv_and_num_workers_are_listed_with_both_values():
    before = golden("cpu_starved")
    after = copy.deepcopy(before)
    after["command"] = before["command"] + ["--epochs", "2"]
    after["dataloaders"][0]["num_workers"] = 2
    result = compared(before, after)
    changed = {row["fact"]: (row["a"], row["b"]) for row in result["changed"]}
    assert changed["num_workers"] == (0, 2)
    assert changed["command"][1].endswith("examples/cpu_starved.py --epochs 2")
    assert "batch size" in result["unchanged"] and "num_workers" not in result["unchanged"]
    text = compare_text.console(result)
    assert "num_workers" in text and "0 -> 2" in text
    assert "| num_workers | `0` | `2` |" in compare_text.markdown(result)


def test_recorded_provenance_is_compared_and_missing_provenance_is_said():
    before, after = golden("cpu_starved"), golden("cpu_starved")
    assert set(cmp.PROVENANCE_FACTS) <= set(compared(before, after)["not_recorded"])
    before["provenance"] = {"git": {"commit": "a" * 40, "dirty": False}, "torch": "2.3.1", "cuda": "12.1",
                            "python": "3.11.7", "gpuprof_version": "0.1.0"}
    after["provenance"] = dict(before["provenance"], git={"commit": "b" * 40, "dirty": True}, cuda=None)
    result = compared(before, after)
    changed = {row["fact"]: (row["a"], row["b"]) for row in result["changed"]}
    assert changed["git commit"] == ("a" * 40, "b" * 40)
    assert changed["uncommitted changes"] == (False, True)
    assert changed["CUDA"] == ("12.1", "none (a CPU build of torch)")
    assert "torch" in result["unchanged"] and result["not_recorded"] == []
    assert "aaaaaaaaaaaa -> bbbbbbbbbbbb" in compare_text.console(result)


def test_a_disturbed_run_is_called_disturbed_not_slower():
    before = golden("cpu_starved")
    result = compared(before, busy_machine(scaled(before, 1.5)), fail_if_slower=10)
    assert result["call"] == cmp.DISTURBED
    assert result["b"]["disturbed"]["other_cores"] > 0.5 and result["a"]["disturbed"] is None
    assert result["gate"]["status"] == cmp.DISTURBED and not result["gate"]["failed"]
    assert compare_text.headline(result).startswith("disturbed: other processes kept")


@pytest.mark.parametrize("factor, limit, failed", [
    (1.25, 10, True),       # 25% slower, beyond the noise and the limit
    (1.25, 30, False),      # slower, but by less than the limit
    (1.02, 1, False),       # over the limit, within the noise
    (0.7, 0, False),        # faster
])
def test_fail_if_slower_is_the_gates_regression_check(factor, limit, failed):
    before = golden("cpu_starved")
    result = compared(before, scaled(before, factor), fail_if_slower=limit)
    assert result["gate"]["failed"] is failed
    assert result["gate"]["change"] == pytest.approx(factor - 1)


def test_fail_if_slower_sets_the_exit_code_and_no_limit_always_exits_0(tmp_path, capsys):
    before = golden("cpu_starved")
    paths = []
    for name, report in (("a.json", before), ("b.json", scaled(before, 1.5))):
        (tmp_path / name).write_text(json.dumps(report))
        paths.append(str(tmp_path / name))
    assert compare_runs(*paths) == 0
    assert compare_runs(*paths, fail_if_slower=20) == 1
    assert compare_runs(*paths, fail_if_slower=80) == 0
    assert compare_runs(paths[1], paths[0], fail_if_slower=0) == 0
    assert compare_runs(*paths, fmt="json", output=str(tmp_path / "out.json"), fail_if_slower=20) == 1
    assert json.loads((tmp_path / "out.json").read_text())["gate"]["failed"] is True
    capsys.readouterr()


def test_runs_of_two_programs_are_refused_unless_forced():
    with pytest.raises(cmp.Incomparable, match="not two runs of one program"):
        compared(golden("cpu_starved"), golden("compute_heavy"))
    result = compared(golden("cpu_starved"), golden("compute_heavy"), force=True)
    assert result["call"] in (cmp.SLOWER, cmp.FASTER, cmp.WITHIN_NOISE)
    assert any("batch sizes differ (16 vs 64)" in note for note in result["notes"])


def test_bad_input_is_one_line_exit_2(tmp_path):
    with pytest.raises(UsageProblem, match="no such run folder or report"):
        compare_runs(str(tmp_path / "missing"), os.path.join(RUNS, "cpu_starved"))
    with pytest.raises(UsageProblem, match="not a gpuprof run folder, report or try folder"):
        compare_runs(str(tmp_path), os.path.join(RUNS, "cpu_starved"))
    (tmp_path / "x.json").write_text('{"format": "something/1"}')
    with pytest.raises(UsageProblem, match="not a gpuprof report"):
        compare_runs(str(tmp_path / "x.json"), os.path.join(RUNS, "cpu_starved"))
    with pytest.raises(UsageProblem, match="not two runs of one program"):
        compare_runs(os.path.join(RUNS, "cpu_starved"), os.path.join(RUNS, "compute_heavy"))
    with pytest.raises(UsageProblem, match="unknown --format"):
        compare_runs(os.path.join(RUNS, "cpu_starved"), os.path.join(RUNS, "cpu_starved"), fmt="html")


def _try_folder(tmp_path) -> str:
    """A try folder moved away from where it ran: try.json names folders that no longer exist, and
    its baseline rounds sit beside it."""
    folder = tmp_path / "exp"
    folder.mkdir()
    for name in ("r1-baseline", "r2-baseline"):
        shutil.copytree(os.path.join(RUNS, "cpu_starved"), folder / name)
    rows = [{"label": "baseline", "run_dirs": ["/gone/exp/r1-baseline", "/gone/exp/r2-baseline"], "speedup": 1.0},
            {"label": "num_workers=2", "run_dirs": ["/gone/exp/r1-v1"], "speedup": 1.8, "conclusion": "faster"}]
    (folder / "try.json").write_text(json.dumps({"format": "gpuprof.try/1", "rows": rows}))
    return str(folder)


def test_a_try_folder_stands_for_its_baseline_and_says_so(tmp_path):
    folder = _try_folder(tmp_path)
    side = load_side(folder)
    assert side["source"] == "try folder: its baseline, 2 runs"
    assert len(side["rounds"]) == 1 and side["tried"][0]["label"] == "num_workers=2"
    result = cmp.compare(side, load_side(os.path.join(RUNS, "cpu_starved")))
    assert result["a"]["runs"] == 2 and result["call"] == cmp.WITHIN_NOISE
    text = " ".join(compare_text.console(result).split())      # unwrapped
    assert "(try folder: its baseline, 2 runs)" in text and "num_workers=2 1.80x (faster)" in text
    assert load_side(os.path.join(folder, "try.json"))["source"] == side["source"]


def test_console_lines_fit_the_width_and_markdown_is_one_table_per_part():
    result = compared(golden("cpu_starved"), scaled(golden("cpu_starved"), 1.3), fail_if_slower=5)
    for width in (100, 60, 30):
        lines = compare_text.console(result, width=width).splitlines()
        assert max(len(line) for line in lines) <= width
    text = compare_text.markdown(result)
    assert text.startswith("### gpuprof compare") and "| median step time |" in text
    assert "Gate: --fail-if-slower 5%: FAILED" in text


def test_the_json_is_plain_and_versioned():
    result = compared(golden("cpu_starved"), golden("cpu_starved"))
    assert json.loads(json.dumps(result)) == result


def test_provenance_reads_torch_from_its_version_file_and_git_from_the_folder(tmp_path):
    text = "__version__ = '2.4.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
    assert provenance.parse_version_file(text) == {"torch": "2.4.0+cu121", "cuda": "12.1"}
    assert provenance.parse_version_file("__version__ = '2.4.0+cpu'\ncuda: Optional[str] = None\n") == \
        {"torch": "2.4.0+cpu", "cuda": None}
    assert provenance.git_state(str(tmp_path)) == {}
    if shutil.which("git") is None:
        return
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    (tmp_path / "train.py").write_text("print(1)\n")
    for args in (["init", "-q"], ["add", "train.py"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)
    state = provenance.git_state(str(tmp_path))
    assert len(state["commit"]) == 40 and state["dirty"] is False
    (tmp_path / "train.py").write_text("print(2)\n")
    assert provenance.git_state(str(tmp_path))["dirty"] is True


def test_the_run_header_records_provenance_for_local_runs_only():
    settings = SamplingSettings(interval_s=0.1, probes=True, gpu=False)
    base = dict(command=["python", "train.py"], target="train.py", wall_start=0.0, start_monotonic=1.0,
                end_monotonic=2.0, pid=1, settings=settings)
    given = {"torch": "2.4.0", "cuda": None}
    data = RunHeader(kind="script", provenance=given, extras={"supervisor_cpu_s": 0.1}, **base).to_json()
    assert data["provenance"] == given and list(data).index("provenance") == list(data).index("record_notes") - 1
    assert "provenance" not in RunHeader(kind="attach", **base).to_json()
    meta = {"provenance": given, "python": "3.11.7", "gpuprof_version": "0.1.0"}
    assert provenance.report_section(meta) == {"provenance": dict(given, python="3.11.7", gpuprof_version="0.1.0")}
    assert provenance.report_section({}) == {}


def test_a_folder_holding_a_run_folder_is_read_as_that_run(tmp_path):
    shutil.copytree(os.path.join(RUNS, "cpu_starved"), tmp_path / "job" / "node-1")
    side = load_side(str(tmp_path / "job"))
    assert side["source"] == "run folder" and side["report"]["verdict"]["bottleneck"] == "input.cpu"


def test_a_run_without_steps_is_not_measured_and_fails_a_gate_that_cannot_check():
    before = golden("cpu_starved")
    after = copy.deepcopy(before)
    after["steps"]["steady"] = {}
    result = compared(before, after, fail_if_slower=10)
    assert result["call"] == cmp.NOT_MEASURED and result["step"]["ratio"] is None
    assert compare_text.headline(result) == "no step time to compare: B measured no training steps"
    assert result["gate"]["status"] == "missing" and result["gate"]["failed"] is True
