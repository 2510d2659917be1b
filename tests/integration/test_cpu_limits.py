"""The cores a job may use, with the real thing: an affinity mask set by taskset, and a cgroup v1
CPU quota where this machine lets root create one (skipped cleanly elsewhere)."""

import json
import os
import shutil
import sys
import time

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import gpuprof, load_json

CPU_CGROUP = "/sys/fs/cgroup/cpu"


@pytest.mark.torch
@pytest.mark.skipif(shutil.which("taskset") is None or (os.cpu_count() or 1) < 2, reason="needs taskset and 2 cores")
def test_under_taskset_an_input_bound_job_counts_one_core(tmp_path):
    pytest.importorskip("torch")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", "taskset", "-c", "0", sys.executable,
                  os.path.join(ROOT, "examples", "cpu_starved.py"), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    limit = report["system"]["cpu_limit"]
    assert limit["cpus"] == 1 and limit["affinity_cpus"] == 1 and "affinity" in limit["source"]
    assert report["system"]["cpu_count"] == 1
    assert any("may use 1 of the host's" in note for note in report["notes"])
    for item in report["advice"]:
        assert (item.get("change") or {}).get("num_workers", 0) <= 1, item
    assert "of 2 cores" not in json.dumps([report["verdict"], report["advice"]])


def _make_cgroup(tmp_path):
    if os.geteuid() != 0 or not os.path.isfile(os.path.join(CPU_CGROUP, "cpu.cfs_quota_us")):
        pytest.skip("no writable cgroup v1 cpu controller")
    path = os.path.join(CPU_CGROUP, f"gpuprof-test-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.mkdir(path)
        with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
            f.write("100000")
        with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
            f.write("50000")
    except OSError as exc:
        if os.path.isdir(path):
            os.rmdir(path)
        pytest.skip(f"cannot create a cgroup here: {exc}")
    return path


def test_a_cgroup_quota_of_half_a_core_is_counted_and_its_throttling_named(tmp_path):
    path = _make_cgroup(tmp_path)
    try:
        script = f'echo $$ > {path}/cgroup.procs && exec "$0" "$@"'
        got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", "sh", "-c", script, sys.executable,
                      os.path.join(PROGRAMS, "busy.py"), "3", cwd=str(tmp_path), timeout=120)
        assert got.returncode == 0 and "busy done" in got.stdout, got.stderr
        limit = load_json(tmp_path / "run" / "report.json")["system"]["cpu_limit"]
        assert limit["quota_cpus"] == 0.5 and limit["cpus"] == 0.5 and "cgroup v1 CPU quota" in limit["source"]
        assert limit["throttled"]["periods"] > 5 and limit["throttled_share"] > 0.2
        notes = load_json(tmp_path / "run" / "report.json")["notes"]
        assert any("throttled" in n and "larger CPU quota" in n for n in notes)
    finally:
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


@pytest.mark.torch
@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="a hog on one of two cores")
def test_beside_a_cpu_hog_an_input_bound_job_says_so_and_stays_input(tmp_path):
    """Another process spins on a core for the whole run: the report says how many cores other
    processes held during the steps, beside the verdict, and the verdict stays the input. (One
    intra-op thread: two would fight the hog for one core, and their wait for each other — not the
    input — would then be what a busy machine measures.)"""
    import subprocess

    from tests.integration.helpers import env_with_source
    pytest.importorskip("torch")
    hog = subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "busy.py"), "600"], stdout=subprocess.DEVNULL)
    try:
        got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), os.path.join(ROOT, "examples", "cpu_starved.py"),
                      cwd=str(tmp_path), timeout=300, env=env_with_source({"OMP_NUM_THREADS": "1"}))
    finally:
        hog.kill()
        hog.wait()
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    others = report["system"]["others"]
    assert others["notable"] and others["other_cores"] >= 0.5, others
    assert "other processes kept" in report["verdict"]["busy_machine"]
    assert report["verdict"]["bottleneck"].startswith("input."), report["verdict"]["summary"]
    console = gpuprof("report", str(tmp_path / "run"), cwd=str(tmp_path))
    assert "busy machine:" in console.stdout
