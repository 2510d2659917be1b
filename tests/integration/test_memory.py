"""Memory on real programs: the anatomy matches the arithmetic, a leak and copy-on-write growth are
found with their causes, and an out-of-memory death leads the report with the program's own status."""

import os

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json, plain_beside_gpuprof


def run(tmp_path, name, *args):
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, name), *args, cwd=str(tmp_path))
    return got, load_json(tmp_path / "run" / "report.json")


def test_parameters_gradients_and_adamw_state_match_the_arithmetic(tmp_path):
    got, report = run(tmp_path, "anatomy.py")
    assert got.returncode == 0, got.stderr
    anatomy = report["memory"]["anatomy"]
    params = 1000 * 1000 + 1000 + 1000 * 10 + 10
    assert anatomy["params"] == params
    assert abs(anatomy["param_bytes"] - 4 * params) <= 0.05 * 4 * params
    assert abs(anatomy["grad_bytes"] - 4 * params) <= 0.05 * 4 * params
    assert abs(anatomy["state_bytes"] - 8 * params) <= 0.05 * 8 * params       # exp_avg + exp_avg_sq
    assert anatomy["optimizers"] == ["AdamW"] and {"exp_avg", "exp_avg_sq"} <= set(anatomy["state"])


def test_a_loss_tensor_kept_across_steps_is_found_growing_with_its_cause(tmp_path):
    got, report = run(tmp_path, "memory_leak.py")
    assert got.returncode == 0, got.stderr
    growth = [f for f in report["memory"]["findings"] if f["kind"] == "growth"]
    assert growth and growth[0]["slope_bytes_per_step"] > 1 << 20
    assert "loss.item()" in growth[0]["summary"]


def test_a_slow_steady_leak_under_the_fast_leaks_total_is_still_found(tmp_path):
    got, report = run(tmp_path, "slow_leak.py")
    assert got.returncode == 0, got.stderr
    growth = [f for f in report["memory"]["findings"] if f["kind"] == "growth"]
    assert growth and growth[0]["total_bytes"] < 16 << 20          # a short run sees little of it
    assert growth[0]["projected_bytes"] > 1 << 30 and "loss.item()" in growth[0]["summary"]


def test_workers_reading_a_python_list_grow_by_copy_on_write(tmp_path):
    got, report = run(tmp_path, "list_dataset.py")
    assert got.returncode == 0, got.stderr
    found = [f for f in report["memory"]["findings"] if f["kind"] == "worker_growth"]
    assert found and "copy-on-write" in found[0]["summary"] and "numpy arrays" in found[0]["fix"]


def test_a_memory_error_leads_the_report_and_keeps_the_programs_status_and_traceback(tmp_path):
    program = os.path.join(PROGRAMS, "oom_training.py")
    expected, got = plain_beside_gpuprof([program], ["run", "--out", str(tmp_path / "run"), program], cwd=str(tmp_path))
    assert got.returncode == expected.returncode == 1
    assert got.stderr.startswith(expected.stderr)               # the user's traceback, unchanged, first
    report = load_json(tmp_path / "run" / "report.json")
    assert report["verdict"]["bottleneck"] == "memory.oom"
    assert report["verdict"]["summary"].startswith("Out of memory: the program raised MemoryError")
    assert report["advice"] and report["advice"][0]["frees_bytes"]
    assert "Fixes, ranked by the memory each frees" in got.stderr


def test_a_shuffle_buffer_in_each_worker_is_named_as_the_cause_not_copy_on_write(tmp_path):
    got, report = run(tmp_path, "shard_shuffle.py")
    assert got.returncode == 0, got.stderr
    found = [f for f in report["memory"]["findings"] if f["kind"] == "worker_growth"]
    assert found and found[0]["cause_known"], found
    assert "shuffle buffer" in found[0]["summary"] and "shard_shuffle.py" in found[0]["summary"]
    assert "copy-on-write" not in found[0]["summary"]
