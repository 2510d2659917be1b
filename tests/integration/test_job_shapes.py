"""Patterns from held-out programs, each in a program of the same shape: a DDP job whose step is its
all-reduce, a straggler rank with a CPU-bound in-process producer, evaluation inside the measured
steps, an HDF5 file opened for every sample, and try on a loop without a DataLoader."""

import concurrent.futures
import os
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def torchrun(*args):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", *args]


def profiled(tmp_path, *command, name="run"):
    got = gpuprof("run", "-q", "--out", str(tmp_path / name), "--", *command, cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    return load_json(tmp_path / name / "report.json")


def test_balanced_ranks_whose_step_is_the_all_reduce_get_a_comm_verdict_and_its_fixes(tmp_path):
    report = profiled(tmp_path, *torchrun(os.path.join(PROGRAMS, "ddp_allreduce_bound.py")))
    assert report["job"]["straggler"] is None
    assert report["verdict"]["bottleneck"] == "comm", report["verdict"]
    assert "gradient all-reduce that the backward pass does not hide" in report["verdict"]["reason"]
    assert report["ddp_comm"]["exposed_comm_share"] >= 0.5
    assert {"ddp-no-sync", "ddp-buckets"} <= {a["id"] for a in report["advice"]}


def test_a_straggler_with_a_cpu_bound_producer_in_its_own_process_is_input_cpu(tmp_path):
    report = profiled(tmp_path, *torchrun(os.path.join(PROGRAMS, "ddp_loaders.py"), "cpu-straggler", "30"))
    assert report["job"]["straggler"]["rank"] == 1
    assert report["verdict"]["bottleneck"] == "input.cpu", report["verdict"]


def test_evaluation_each_epoch_is_left_out_of_step_time_and_data_wait_and_shown(tmp_path):
    report = profiled(tmp_path, sys.executable, os.path.join(PROGRAMS, "eval_each_epoch.py"))
    steps = report["steps"]
    evaluation = steps["evaluation"]
    assert evaluation["passes"] >= 2 and 0.05 < evaluation["share"] < 0.9
    waited = steps["data_wait_s"] / (steps["window_s"] - evaluation["seconds"])
    assert abs(steps["data_wait_share"] - min(waited, 1.0)) < 1e-6


def test_eight_hdf5_workers_that_hardly_keep_the_loop_waiting_are_input_bound_contended(tmp_path):
    """Eight workers on two cores make cheap batches (a fifth of the job's CPU): the loop waits about
    12% for data, but the training's threads wait for a core about a fifth of the time; free input
    measured 1.45x faster (gpuprof try --input-ceiling, before the program's per-sample blur, which
    keeps the training's wait for a core clear of the threshold it sat on)."""
    pytest.importorskip("h5py")
    report = profiled(tmp_path, sys.executable, os.path.join(PROGRAMS, "hdf5_eight_workers.py"), str(tmp_path))
    verdict = report["verdict"]
    assert verdict["bottleneck"] == "input.cpu" and verdict["evidence"]["contended"] is True, verdict
    assert verdict["share"] >= 0.25


def test_an_hdf5_file_opened_for_every_sample(tmp_path):
    """The fix points at the line that opens the file; try cannot keep a handle the program closes
    itself and says so, and that row is no measured loss."""
    pytest.importorskip("h5py")
    program = os.path.join(PROGRAMS, "hdf5_per_sample.py")
    # The run and the try side by side (neither is judged on its timing; the verdict is the input in
    # either case): each with a data folder of its own, as the program writes its file there.
    data = tmp_path / "for_try"
    data.mkdir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        tried = pool.submit(gpuprof, "try", "--out", str(tmp_path / "exp"), "--rounds", "1", "--max-rounds", "1",
                            "--min-window", "0", "--steps", "20", "--warmup-steps", "2", "--fix", "hdf5-chunk-cache",
                            "--json", str(tmp_path / "try.json"), program, str(data), cwd=tmp_path, timeout=600)
        report = profiled(tmp_path, sys.executable, program, str(tmp_path))
        got = tried.result()
    fix = next(a for a in report["advice"] if a["id"] == "hdf5-chunk-cache")
    assert fix["where"].startswith("hdf5_per_sample.py:") or "hdf5_per_sample.py:" in fix["where"]
    assert "keep its handle" in fix["detail"] and "hdf5_cache_slots" in fix["change"]
    assert got.returncode == 0, got.stderr
    row = load_json(tmp_path / "try.json")["rows"][1]
    assert row["conclusion"] == "not applied" and "again for every read" in row["error"]
    assert "not applied (the program opens images.h5 again for every read" in " ".join(got.stderr.split())


def test_try_replays_the_batch_function_of_a_loop_without_a_dataloader(tmp_path):
    """With one intra-op thread: with two, a program holding the other core makes the replayed loop,
    all parallel compute, slower than the real one (0.18x measured), which is true of that machine
    but no test of the replay."""
    got = gpuprof("try", "--out", str(tmp_path / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0",
                  "--steps", "30", "--warmup-steps", "3", "--input-ceiling", "--json", str(tmp_path / "try.json"),
                  os.path.join(ROOT, "examples", "comprehension_batcher.py"), str(tmp_path), cwd=tmp_path, timeout=600,
                  env=dict(env_with_source(), OMP_NUM_THREADS="1"))
    assert got.returncode == 0, got.stderr
    row = load_json(tmp_path / "try.json")["rows"][1]
    assert row["settings"]["function"]["name"] == "get_batch" and row["applied"]["function"] == "get_batch"
    # The replay measures about 2x on an idle machine and 1.24x was seen late in a loaded suite; a
    # replay that served nothing measures 1.0x.
    assert row["speedup"] > 1.15 and not row.get("error")
