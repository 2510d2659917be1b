"""A single-process loop (no DataLoader, no workers) beside another program that spins on the
cores torch's intra-op threads expect: the threads queue for a core, and the thread setting is
offered in the program's terms and applied by `try` without a DataLoader to hang it on."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch,
              pytest.mark.skipif(not 2 <= (os.cpu_count() or 1) <= 4, reason="spinners sized for 2-4 cores")]

LOOP = os.path.join(PROGRAMS, "per_sample_loop.py")


def torch_default_env() -> dict:
    """torch's default intra-op threads (one per core): the setting under test."""
    return {key: value for key, value in env_with_source({}).items() if key != "OMP_NUM_THREADS"}


def beside_spinners(run):
    """Runs `run()` while other processes spin on all cores but one; stops only those processes."""
    spinners = [subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "busy.py"), "600"], stdout=subprocess.DEVNULL)
                for _ in range((os.cpu_count() or 2) - 1)]
    try:
        return run()
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_threads_queueing_beside_another_program_get_the_thread_setting(tmp_path):
    got = beside_spinners(lambda: gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable, LOOP,
                                          "400", cwd=str(tmp_path), timeout=300, env=torch_default_env()))
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    threads = report["model"]["torch_threads"]
    if threads < 2:
        pytest.skip("torch starts one intra-op thread here: nothing to oversubscribe")
    assert report["steps"]["training_cpu"]["wait_share"] >= 0.15, report["steps"]["training_cpu"]
    fix = next((a for a in report["advice"] if a["id"] == "training-threads"), None)
    assert fix is not None, ([a["id"] for a in report["advice"]], report["system"].get("others"),
                             report["steps"]["training_cpu"], report["verdict"]["bottleneck"])
    assert fix["change"]["torch_threads"] < threads
    assert f"OMP_NUM_THREADS={fix['change']['torch_threads']}" in fix["detail"]
    assert "other programs" in fix["why"]


def test_try_sets_the_threads_of_a_program_without_a_dataloader(tmp_path):
    # Only what was applied is asserted: a window of 30 steps, not one grown to 2 s (--min-window 0),
    # spares a planning run and the program's remaining steps.
    got = gpuprof("try", "--set", "torch_threads=1", "--rounds", "1", "--max-rounds", "1", "--steps", "30",
                  "--min-window", "0", "--out", str(tmp_path / "try"), "--", sys.executable, LOOP, "200",
                  cwd=str(tmp_path), timeout=300, env=torch_default_env())
    assert got.returncode == 0, got.stderr
    with open(tmp_path / "try" / "try.json") as handle:
        record = json.load(handle)
    row = next(r for r in record["rows"] if r["settings"].get("torch_threads") == 1)
    assert row["applied"] == {"torch_threads": 1} and not row.get("error"), row
