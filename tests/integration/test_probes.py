"""Probes inside real training programs: data wait, producers, batch facts, HDF5, transparency."""

import concurrent.futures
import os
import re

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json, plain_beside_gpuprof, selected_cases, two_at_a_time

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def run_report(tmp_path, *args, timeout=240):
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), *args, cwd=tmp_path, timeout=timeout)
    assert got.returncode == 0, got.stderr
    return got, load_json(tmp_path / "run" / "report.json")


def beside_plain(tmp_path, *args, timeout=240):
    """(plain, gpuprof, report): the program under plain python beside its profiled run, for tests
    that compare what the two print and count what the probes saw, never timing."""
    expected, got = plain_beside_gpuprof(list(args), ["run", "-q", "--out", str(tmp_path / "run"), *args],
                                         cwd=tmp_path, timeout=timeout)
    assert got.returncode == 0, got.stderr
    return expected, got, load_json(tmp_path / "run" / "report.json")


def line_of(path, marker):
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line:
                return number
    raise AssertionError(marker)


def test_a_cpu_starved_loader_shows_a_large_data_wait_at_the_right_line(tmp_path):
    script = os.path.join(PROGRAMS, "starved_loader.py")
    got, report = run_report(tmp_path, script)
    steps = report["steps"]
    assert steps["count"] >= 40 and steps["source"] == "optimizer"
    assert steps["data_wait_share"] > 0.5
    assert steps["samples_per_second"] > 0 and steps["median_step_s"] > 0
    loader = report["dataloaders"][0]
    assert loader["where"] == f"{os.path.relpath(script, tmp_path) if not os.path.relpath(script, tmp_path).startswith('..') else script}:{line_of(script, 'LOADER LINE')}"
    assert loader["num_workers"] == 0 and loader["batch_size"] == 8 and loader["producer"]["in_main_process"]
    producer = loader["producer"]
    assert producer["batches"] >= 40 and producer["cpu_per_wall"] > 0.5
    batch = loader["batch"]
    assert batch["dtype"] == "float32" and batch["shape"] == [8, 3, 24, 24]
    assert batch["uint8_candidate"] is False


@pytest.mark.parametrize("context", ["spawn", "forkserver", "fork"])
def test_worker_loaders_run_unchanged_and_report_their_workers(tmp_path, context):
    script = os.path.join(PROGRAMS, "spawn_loader.py")
    expected, got, report = beside_plain(tmp_path, script, context)
    assert got.stdout == expected.stdout
    loader = report["dataloaders"][0]
    assert loader["workers_seen"] >= 2 and loader["context"] == context
    assert loader["producer"]["batches"] == 32


def test_persistent_workers_are_followed_across_epochs(tmp_path):
    script = os.path.join(PROGRAMS, "spawn_loader.py")
    got, report = run_report(tmp_path, script, "fork", "persistent")
    loader = report["dataloaders"][0]
    assert loader["persistent_workers"] is True and loader["batches"] == 64
    assert loader["producer"]["batches"] == 64 and loader["workers_seen"] == 2


@pytest.mark.parametrize("workers", ["2", "0"])
def test_seeded_training_is_bit_identical_with_probes(tmp_path, workers):
    script = os.path.join(PROGRAMS, "seeded_training.py")
    expected, got, report = beside_plain(tmp_path, script, workers)
    assert expected.returncode == 0
    assert got.stdout == expected.stdout
    assert report["steps"]["count"] == 16
    assert report["dataloaders"][0]["batch"]["uint8_candidate"] is False


def test_a_handwritten_batching_loop_is_timed_before_the_first_forward(tmp_path):
    got, report = run_report(tmp_path, os.path.join(PROGRAMS, "handwritten_loop.py"))
    steps = report["steps"]
    assert steps["count"] == 50 and steps["data_wait_source"] == "before-first-forward"
    assert steps["data_wait_share"] > 0.5
    assert report["dataloaders"] == []


def test_a_handwritten_loops_data_wait_is_whole_though_most_steps_go_untimed(tmp_path):
    # 400 steps: the first 64 timed, then one in 8 standing for eight. The program's own timing of
    # each wait from its last optimizer step's return to the forward (every step after the first:
    # the measured window) is the truth.
    times = tmp_path / "prepared.json"
    got, report = run_report(tmp_path, os.path.join(PROGRAMS, "timed_gap_loop.py"), str(times))
    steps = report["steps"]
    assert steps["count"] == 400 and steps["data_wait_source"] == "before-first-forward"
    truth = sum(load_json(times)[1:])
    assert steps["data_wait_s"] == pytest.approx(truth, rel=0.12)


def test_hdf5_files_report_chunks_and_the_cache_in_effect(tmp_path):
    got, report = run_report(tmp_path, os.path.join(PROGRAMS, "hdf5_tiny_cache.py"), str(tmp_path))
    (entry,) = report["hdf5"]
    assert entry["dataset"] == "/x" and entry["chunks"] == [64, 64, 64] and entry["compression"] == "gzip"
    assert entry["rdcc_nbytes"] == 64 * 1024 and entry["cache_holds_a_chunk"] is False
    assert entry["chunk_bytes"] == 64 * 64 * 64 * 4
    assert entry["reads"] == 512 and entry["chunks_touched"] == 512
    assert entry["read_amplification"] == pytest.approx(64.0)


def test_probes_off_leaves_only_the_sampler(tmp_path):
    got = gpuprof("run", "-q", "--no-probes", "--out", str(tmp_path / "run"),
                  os.path.join(PROGRAMS, "starved_loader.py"), cwd=tmp_path)
    report = load_json(tmp_path / "run" / "report.json")
    assert got.returncode == 0 and report["steps"]["count"] == 0 and report["dataloaders"] == []
    assert any("probes were off" in note for note in report["notes"])


@pytest.fixture(scope="module")
def two_loader_runs(request, tmp_path_factory):
    """{(kind, context): (folder, gpuprof's result)} for the cases of the test below that were selected:
    run two at a time (each test counts batches, nothing timed), all ended before that test's first case."""
    script = os.path.join(PROGRAMS, "two_loaders.py")

    def job(kind, context):
        return lambda folder: gpuprof("run", "-q", "--out", str(folder / "run"), script, context, kind, cwd=folder,
                                      timeout=240)

    cases = selected_cases(request, "test_each_workers_fetches_are_credited_to_its_own_loader")
    return two_at_a_time({(c["kind"], c["context"]): job(c["kind"], c["context"]) for c in cases}, tmp_path_factory)


@pytest.mark.torch
@pytest.mark.parametrize("kind, context", [("map", "fork"), ("map", "spawn"), ("map", "forkserver"),
                                           ("iterable", "fork"), ("iterable", "spawn")])
def test_each_workers_fetches_are_credited_to_its_own_loader(two_loader_runs, kind, context):
    """Two loaders over one Dataset class, the validation one built first: every start method,
    map-style and iterable datasets alike. The fetchers of both kinds are patched alike in every
    worker; an iterable one under forkserver would repeat what spawn (a fresh interpreter) and
    forkserver (with a map-style dataset) each show already."""
    pytest.importorskip("torch")
    folder, got = two_loader_runs[(kind, context)]
    assert got.returncode == 0, got.stderr[-2000:]
    loaders = load_json(folder / "run" / "report.json")["dataloaders"]
    by_batches = sorted(loaders, key=lambda entry: -entry["batches"])
    train, val = by_batches
    assert (train["batches"], val["batches"]) == (24, 4)
    # Each loader's workers fetched what it consumed, plus at most its prefetch (2 workers x 2).
    assert 24 <= train["producer"]["batches"] <= 24 + 4 + 2
    assert 4 <= val["producer"]["batches"] <= 4 + 4 + 2
    assert train["workers_seen"] == val["workers_seen"] == 2


@pytest.mark.torch
def test_loaders_rebuilt_every_epoch_at_one_line_are_one_pipeline(tmp_path):
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "loader_per_epoch.py")
    got = gpuprof("run", "--out", str(tmp_path / "run"), script, cwd=tmp_path, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    loaders = load_json(tmp_path / "run" / "report.json")["dataloaders"]
    assert len(loaders) == 1
    assert loaders[0]["instances"] == 12 and loaders[0]["batches"] == 96
    assert loaders[0]["where"].endswith("loader_per_epoch.py:10")
    assert sum(line.startswith("DataLoader at") for line in got.stderr.splitlines()) == 1


@pytest.mark.torch
def test_torchs_own_warnings_point_where_they_point_without_gpuprof(tmp_path):
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "torch_warnings.py")
    expected, got = plain_beside_gpuprof([script], ["run", "-q", "--out", str(tmp_path / "run"), script], cwd=tmp_path,
                                         timeout=120)
    assert expected.returncode == got.returncode == 0, got.stderr[-2000:]
    assert "Warning" in expected.stderr
    # No warning names a probe's file (the checkout's own folder may be called gpuprof).
    assert got.stderr == expected.stderr
    assert os.path.join("gpuprof", "capture", "probes") not in got.stderr and "_gpuprof_job" not in got.stderr
    assert got.stdout == expected.stdout


def test_a_loop_without_an_optimizer_has_steps_from_its_backward_passes(tmp_path):
    program = os.path.join(PROGRAMS, "manual_sgd.py")
    # The two runs go side by side: only steps are counted.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        with_lbfgs = pool.submit(gpuprof, "run", "-q", "--out", str(tmp_path / "lbfgs"), program, "lbfgs",
                                 cwd=str(tmp_path))
        got = gpuprof("run", "-q", "--out", str(tmp_path / "manual"), program, cwd=str(tmp_path))
        lbfgs = with_lbfgs.result()
    assert got.returncode == 0, got.stderr
    steps = load_json(tmp_path / "manual" / "report.json")["steps"]
    assert steps["source"] == "backward" and steps["count"] == 40
    # LBFGS calls its closure (and backward) 5 times per optimizer step: the optimizer steps count.
    got = lbfgs
    assert got.returncode == 0, got.stderr
    steps = load_json(tmp_path / "lbfgs" / "report.json")["steps"]
    assert steps["source"] == "optimizer" and steps["count"] == 12


def test_a_step_window_stops_a_manual_loop_after_its_update(tmp_path):
    program = os.path.join(PROGRAMS, "manual_sgd.py")
    got = gpuprof("run", "-q", "--steps", "5", "--out", str(tmp_path / "run"), program, cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    assert report["steps"]["measured"] == 5 and report["stopped_after_steps"] == 5


def test_a_trainer_built_loader_points_at_the_users_line_in_the_frameworks_terms(tmp_path):
    """The DataLoader is built inside a Trainer installed in site-packages (a stand-in with
    Hugging Face's names): the report names the user's trainer.train() line and TrainingArguments."""
    from tests.integration.helpers import env_with_source
    frameworks = os.path.join(PROGRAMS, "frameworks", "site-packages")
    env = env_with_source()
    env["PYTHONPATH"] += os.pathsep + frameworks
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, "trainer_style.py"),
                  cwd=str(tmp_path), env=env)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    loader = report["dataloaders"][0]
    train_line = _line_with(os.path.join(PROGRAMS, "trainer_style.py"), "# TRAIN LINE")
    assert loader["where"].endswith(f"trainer_style.py:{train_line}")
    assert loader["framework"] == "transformers" and loader["built_in"].startswith("transformers/")
    workers = next(a for a in report["advice"] if a["id"] == "num-workers")
    assert workers["where"] == loader["where"] and "through TrainingArguments" in workers["detail"]
    assert re.search(r"TrainingArguments\(\.\.\., dataloader_num_workers=\d+", workers["snippet"]), workers["snippet"]


def test_a_loader_a_framework_rebuilt_points_at_the_users_dataloader_line(tmp_path):
    """Lightning under DDP (a stand-in) rebuilds the user's loader inside fit(): the report names the
    DataLoader(...) line in the user's train_dataloader, where the fix goes, not trainer.fit(...)."""
    from tests.integration.helpers import env_with_source
    env = env_with_source()
    env["PYTHONPATH"] += os.pathsep + os.path.join(PROGRAMS, "frameworks", "site-packages")
    program = os.path.join(PROGRAMS, "lightning_style.py")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), program, cwd=str(tmp_path), env=env)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    iterated = max(report["dataloaders"], key=lambda loader: loader.get("batches") or 0)
    assert iterated["where"].endswith(f"lightning_style.py:{_line_with(program, '# LOADER LINE')}"), iterated
    workers = next(a for a in report["advice"] if a["id"] == "num-workers")
    assert workers["where"] == iterated["where"] and "DataLoader(" in workers["snippet"]


def _line_with(path, marker):
    with open(path) as handle:
        return next(i for i, line in enumerate(handle, 1) if marker in line)


@pytest.mark.parametrize("mode, per_iteration", [("pair", 1), ("alternate", 2)])
def test_two_optimizers_count_the_same_steps_on_timed_and_untimed_iterations(tmp_path, mode, per_iteration):
    # 300 iterations: past the first 64 steps the forward hook is armed on one step in 8 in a loop
    # with one optimizer; with two it stays on every step, as it tells whether a forward came between
    # their steps (back to back: one training step; a forward between: two).
    _, report = run_report(tmp_path, os.path.join(PROGRAMS, "two_optimizers_loop.py"), mode, "300")
    assert report["steps"]["count"] == 300 * per_iteration
