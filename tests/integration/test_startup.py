"""A job that spends about half its run building its dataset before it trains: the report gives
the start-up's share, what filled it and the user's line, beside the step verdict (which it does
not replace), with the fix that caches the dataset; the step samples never see the start-up."""

import os
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAM = os.path.join(PROGRAMS, "slow_setup.py")


def lines_of_the_dataset_loop() -> set:
    with open(PROGRAM, "r", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("def build_dataset"))
    return {f"slow_setup.py:{n}" for n in range(start, start + 6)}


def test_a_slow_dataset_build_is_reported_beside_the_verdict_with_its_line(tmp_path):
    got = gpuprof("run", "--out", str(tmp_path / "run"), "--", sys.executable, PROGRAM, "4", "2",
                  cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0 and "slow setup done" in got.stdout, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    startup = report["startup"]
    # 4 s of dataset building and torch's import, then about 2 s of training.
    assert startup["notable"] and startup["reached_first_step"] and startup["share"] >= 0.35, startup
    dataset = [p for p in startup["parts"] if p["part"] == "dataset"]
    assert dataset and dataset[0]["seconds"] >= 3.0, startup
    where = startup["where"]
    assert where["function"] == "build_dataset" and where["part"] == "dataset", where
    assert os.path.basename(where["line"]) in lines_of_the_dataset_loop(), where
    # Beside the verdict, never as it.
    assert report["verdict"]["bottleneck"] != "setup"
    setup = [f for f in report["findings"] if f["bottleneck"] == "setup"]
    assert setup and "build_dataset at" in setup[0]["reason"], report["findings"]
    cache = [a for a in report["advice"] if a["id"] == "cache-tokenised-dataset"]
    assert cache and cache[0]["estimated_speedup"] > 1.1 and os.path.basename(cache[0]["where"]) in lines_of_the_dataset_loop()
    assert "also: setup (" in got.stderr and "build_dataset at" in got.stderr
    # The step sampler starts at the first step: the dataset build is in none of its samples.
    host = report["steps"]["sampled"]["host_functions"]
    assert host and not [h for h in host if "build_dataset" in h["function"]], host


def test_spawned_workers_started_every_epoch_are_start_up_paid_again(tmp_path):
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable,
                  os.path.join(PROGRAMS, "spawn_epochs.py"), "0.3", "3", cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0 and "spawn epochs done" in got.stdout, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    restarts = [f for f in report["findings"] if f["bottleneck"] == "setup" and "lost_s" in f["evidence"]]
    assert restarts, report["findings"]
    evidence = restarts[0]["evidence"]
    assert evidence["epochs"] == 3 and evidence["context"] == "spawn" and evidence["worker_start_s"] >= 0.3
    assert "import the main script again" in restarts[0]["reason"]
    assert "spawned-worker-imports" in [a["id"] for a in report["advice"]]
