"""`gpuprof try` on real programs: variants applied through the probes, measured in rounds."""

import json
import os

import pytest

from tests.conftest import ROOT
from tests.integration.helpers import gpuprof, load_json, selected_cases, two_at_a_time

PROGRAMS = os.path.join(ROOT, "tests", "programs")


def loader_line(name):
    with open(os.path.join(PROGRAMS, name)) as handle:
        return next(i for i, line in enumerate(handle, 1) if "# LOADER LINE" in line)


def test_ceiling_and_workers_on_a_waiting_loader(tmp_path):
    results = tmp_path / "results.txt"
    got = gpuprof("try", "--out", str(tmp_path / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0", "--steps", "12", "--warmup-steps", "2",
                  "--input-ceiling", "--set", "num_workers=4", "--json", str(tmp_path / "try.json"),
                  "--markdown", str(tmp_path / "try.md"),
                  os.path.join(PROGRAMS, "waiting_loader.py"), str(results), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert got.stdout == ""                                   # the program's output stays in the run folders
    record = load_json(tmp_path / "try.json")
    assert record["format"] == "gpuprof.try/1"
    rows = {row["label"]: row for row in record["rows"]}
    assert set(rows) == {"baseline", "input ceiling", "num_workers=4"}
    # A batch waits 32 ms on the store: with the input made free, steps are far faster.
    assert rows["input ceiling"]["speedup"] >= 1.5
    assert rows["num_workers=4"]["speedup"] > 1.3
    assert rows["num_workers=4"]["applied"] == {"num_workers": 4}
    assert rows["input ceiling"]["estimate"] is not None
    assert record["settings"]["loader"].endswith(f"waiting_loader.py:{loader_line('waiting_loader.py')}")
    assert record["input_check"]["measured_input_share"] >= 0.3
    # Each run ended at its step window, before the program's last lines, as `run --steps` ends it.
    assert not results.exists()
    assert "measured speed-up" in got.stderr and "input ceiling" in got.stderr
    assert "| num\\_workers=4 |" in (tmp_path / "try.md").read_text()
    for row in record["rows"]:
        for run_dir in row["run_dirs"]:
            assert os.path.exists(os.path.join(run_dir, "report.json"))
            assert "done" not in open(os.path.join(run_dir, "program-stdout.txt")).read()


def _refused_run(folder):
    return gpuprof("try", "--out", str(folder / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0", "--steps", "5", "--warmup-steps", "1",
                   "--set", "num_workers=2", os.path.join(PROGRAMS, "handwritten_loop.py"), cwd=str(folder),
                   timeout=300)


def _crashing_variant_runs(folder):
    # persistent_workers needs workers: torch would refuse it, so the probes refuse to apply it and say why;
    # batch_size=0 would crash, and is refused before anything runs.
    bad = gpuprof("try", "--set", "batch_size=0", os.path.join(PROGRAMS, "waiting_loader.py"), cwd=str(folder))
    got = gpuprof("try", "--out", str(folder / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0", "--steps", "6", "--warmup-steps", "1",
                  "--set", "persistent_workers=true", "--json", "-",
                  os.path.join(PROGRAMS, "waiting_loader.py"), cwd=str(folder), timeout=300)
    return bad, got


def _signal_mask_run(folder):
    # One round is two runs, the baseline and the fix: whichever runs second starts after a run.
    return gpuprof("try", "--out", str(folder / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0", "--steps", "6", "--warmup-steps", "1",
                   "--fix", "num-workers", "--json", "-", os.path.join(PROGRAMS, "signal_mask.py"),
                   cwd=str(folder), timeout=240)


def _threads_run(folder):
    return gpuprof("try", "--out", str(folder / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0", "--steps", "6", "--warmup-steps", "1",
                   "--set", "torch_threads=1", "--json", str(folder / "try.json"),
                   os.path.join(PROGRAMS, "threads_loader.py"), cwd=str(folder), timeout=300)


#: The experiments of the tests that judge no timing (what was refused, applied or printed), by test:
#: run side by side, two at a time, and all ended before any of those tests, so that no test that
#: judges a speed-up runs beside them.
SIDE_BY_SIDE = {
    "test_set_without_a_dataloader_is_refused": _refused_run,
    "test_a_variant_that_crashes_is_reported_and_the_others_run": _crashing_variant_runs,
    "test_every_run_starts_with_signals_as_plain_python_has_them": _signal_mask_run,
    "test_the_training_process_keeps_the_threads_a_variant_gives_it": _threads_run,
}


@pytest.fixture(scope="module")
def side_by_side(request, tmp_path_factory):
    """{test name: (its folder, what its experiment returned)} for the SIDE_BY_SIDE tests selected."""
    return two_at_a_time({name: job for name, job in SIDE_BY_SIDE.items() if selected_cases(request, name)},
                         tmp_path_factory)


def test_set_without_a_dataloader_is_refused(side_by_side):
    _, got = side_by_side["test_set_without_a_dataloader_is_refused"]
    assert got.returncode == 2, got.stderr
    errors = [line for line in got.stderr.splitlines() if line.startswith("gpuprof: error:")]
    assert len(errors) == 1 and "built no DataLoader" in errors[0]
    assert "Traceback" not in got.stderr


def test_a_variant_that_crashes_is_reported_and_the_others_run(side_by_side):
    _, (bad, got) = side_by_side["test_a_variant_that_crashes_is_reported_and_the_others_run"]
    assert bad.returncode == 2 and "batch_size: must be at least 1" in bad.stderr
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    row = record["rows"][1]
    assert row["error"] == "persistent_workers needs num_workers > 0"
    assert "not applied (persistent_workers needs num_workers > 0)" in got.stderr


def test_every_run_starts_with_signals_as_plain_python_has_them(side_by_side):
    """gpuprof holds signals blocked after a run; a mask survives exec. Later runs of an experiment
    must not inherit it: persistent workers are ended by SIGTERM at exit, and a blocked SIGTERM
    left such a program waiting for them forever."""
    _, got = side_by_side["test_every_run_starts_with_signals_as_plain_python_has_them"]
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    for row in record["rows"]:
        for run_dir in row["run_dirs"]:
            with open(os.path.join(run_dir, "program-stdout.txt")) as handle:
                assert handle.read().startswith("blocked: []"), run_dir
    assert record["rows"][1]["applied"]["persistent_workers"] is True


def test_the_training_process_keeps_the_threads_a_variant_gives_it(side_by_side):
    folder, got = side_by_side["test_the_training_process_keeps_the_threads_a_variant_gives_it"]
    assert got.returncode == 0, got.stderr
    rows = {row["label"]: row for row in load_json(folder / "try.json")["rows"]}
    assert rows["torch_threads=1"]["applied"] == {"torch_threads": 1}
    printed = open(os.path.join(rows["torch_threads=1"]["run_dirs"][0], "program-stdout.txt")).read()
    assert printed.startswith("threads 1\n")
    import torch
    baseline = open(os.path.join(rows["baseline"]["run_dirs"][0], "program-stdout.txt")).read()
    assert baseline.startswith(f"threads {torch.get_num_threads()}\n")


def test_run_verify_measures_the_ceiling_and_the_top_fix_and_keeps_them_in_the_report(tmp_path):
    got = gpuprof("run", "--verify", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, "verify_target.py"),
                  cwd=str(tmp_path), timeout=400)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    verified = report["verified"]
    labels = [row["label"] for row in verified["rows"]]
    assert labels[0] == "input ceiling" and len(labels) == 2            # the ceiling and the top fix
    assert verified["rows"][0]["speedup"] >= 1.5 and verified["rows"][1]["estimate"] is not None
    assert verified["input_check"]["measured_input_share"] >= 0.3
    assert "measured speed-up" in got.stderr


@pytest.fixture
def data_on_disk(tmp_path):
    """64 MiB of rows, written through to the disk and out of the page cache."""
    np = pytest.importorskip("numpy")
    from gpuprof.commands.experiments.cache import evict
    path = tmp_path / "rows.npy"
    np.save(path, np.random.default_rng(0).random((16384, 1024), dtype=np.float32))
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    assert evict([str(path)]) == (1, 0)
    return path


def _cold_try(tmp_path, data, *extra):
    got = gpuprof("try", "--out", str(tmp_path / "exp"), "--rounds", "2", "--max-rounds", "2", "--min-window", "0",
                  "--steps", "50", "--warmup-steps", "2", "--input-ceiling", "--json", str(tmp_path / "try.json"),
                  *extra, os.path.join(PROGRAMS, "cold_reader.py"), str(data), cwd=tmp_path, timeout=600)
    assert got.returncode == 0, got.stderr
    return got, load_json(tmp_path / "try.json")


def test_a_page_cache_that_warms_between_runs_is_said(tmp_path, data_on_disk):
    got, record = _cold_try(tmp_path, data_on_disk)
    reads = record["cache"]["read_bytes"]
    assert reads[0] > 32 * 2**20 > reads[1] and record["cache"]["warmed"]
    assert "these results describe a warm cache" in " ".join(got.stderr.split())


def test_cold_runs_read_the_disk_every_time(tmp_path, data_on_disk):
    got, record = _cold_try(tmp_path, data_on_disk, "--cold")
    assert record["cache"]["cold"] and not record["cache"]["warmed"]
    assert all(b > 32 * 2**20 for b in record["cache"]["read_bytes"]), record["cache"]
    assert "warm cache" not in got.stderr
