"""Fixes that read what the probes found in the training itself: the training's intra-op threads
queueing beside workers, random augmentation kept out of caches, and DDP all-reduces per step."""

import os
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def profiled(tmp_path, *command, name="run"):
    got = gpuprof("run", "-q", "--out", str(tmp_path / name), "--", *command, cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    return load_json(tmp_path / name / "report.json")


def advice(report, fix_id):
    return next((a for a in report["advice"] if a["id"] == fix_id), None)


def test_two_workers_on_two_cores_give_the_training_one_intra_op_thread(tmp_path):
    """Two workers and torch's two intra-op threads share two cores: the training's threads queue
    for a core, and the fix bounds them to the core the workers leave."""
    report = profiled(tmp_path, sys.executable, os.path.join(ROOT, "examples", "contended_workers.py"))
    if (os.cpu_count() or 1) != 2:
        pytest.skip("the program's contention is sized for two cores")
    waited = report["steps"]["training_cpu"]["wait_share"]
    fix = advice(report, "training-threads")
    assert waited >= 0.15, report["steps"]["training_cpu"]
    assert fix is not None, [a["id"] for a in report["advice"]]
    assert fix["change"] == {"torch_threads": 1} and fix["snippet"].startswith("torch.set_num_threads(1)")


def test_random_augmentation_is_found_and_not_cached(tmp_path):
    report = profiled(tmp_path, sys.executable, os.path.join(PROGRAMS, "random_augment.py"))
    found = report["dataloaders"][0]["augmentation"]
    assert found["checked"] is True
    assert {item.split(" at ")[0] for item in found["random"]} == {"torch.randn", "random.random",
                                                                     "numpy.random.uniform"}
    assert all("random_augment.py:" in item for item in found["random"])
    cache = advice(report, "cache-preprocessed")
    assert cache is None or (cache["estimated_speedup"] is None and "torch.randn" in cache["why"])


def test_a_deterministic_path_is_read_and_said_to_be(tmp_path):
    report = profiled(tmp_path, sys.executable, os.path.join(PROGRAMS, "random_augment.py"), "0", "deterministic")
    found = report["dataloaders"][0]["augmentation"]
    assert found == {"random": [], "deterministic": [], "checked": True}


def test_accumulating_micro_batches_each_all_reduced_counts_every_skipped_all_reduce(tmp_path):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
               os.path.join(PROGRAMS, "ddp_accumulate.py"), "plain", "8", "150"]
    report = profiled(tmp_path, *command)
    # DDP updates its count on sampled iterations only, read once a second: off by a sampling interval.
    syncs = report["ddp_comm"]["syncs_per_step"]
    assert 6.0 <= syncs <= 10.0, report["ddp_comm"]
    if report["verdict"]["bottleneck"] == "comm":
        k = int(round(syncs))
        fix = advice(report, "ddp-no-sync")
        assert f"{k} all-reduces a step" in fix["why"] and f"{k - 1} of every {k}" in fix["why"]
