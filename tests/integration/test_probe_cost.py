"""What the probes cost and whether a program can see them: the added CPU per optimizer step and per
DataLoader batch (bench/probe_cost.py, paired runs against plain python, with a margin wide enough
for a loaded 2-core machine and narrow enough to catch the 50 µs the probes once cost), tracebacks
through a DataLoader frame for frame as plain python prints them, torch's global hook tables as a
plain run leaves them, and gpuprof's own cost in the report."""

import os
import re
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import gpuprof, load_json, plain_beside_gpuprof

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

MAX_ADDED_US = 40.0


@pytest.mark.torch
def test_the_probes_add_little_per_step_and_per_batch():
    pytest.importorskip("torch")
    import probe_cost

    results = probe_cost.measure(("step", "batch"), iterations=4000, pairs=3)
    assert results["step"]["added_us"] < MAX_ADDED_US, results
    assert results["batch"]["added_us"] < MAX_ADDED_US, results


@pytest.mark.torch
@pytest.mark.parametrize("workers, context", [("0", ""), ("2", "fork")])
def test_a_traceback_through_a_dataloader_has_no_gpuprof_frame(tmp_path, workers, context):
    pytest.importorskip("torch")
    args = [os.path.join(PROGRAMS, "worker_raises.py"), workers] + ([context] if context else [])
    expected, got = plain_beside_gpuprof(args, ["run", "-q", "--out", str(tmp_path / "run"), *args], cwd=tmp_path,
                                         timeout=120)
    assert expected.returncode == got.returncode == 1
    assert os.path.join(ROOT, "gpuprof") + os.sep not in got.stderr, got.stderr     # none of gpuprof's own code

    def frames(text):
        # torch's worker path re-raises from one of two lines of _next_data, whichever way the failed
        # batch arrived (in order, or stashed ahead): within torch, the function is what is compared.
        found = [line.strip() for line in text.splitlines() if line.startswith("  File ")]
        return [re.sub(r", line \d+,", ",", line) if "site-packages" in line else line for line in found]

    assert frames(got.stderr) == frames(expected.stderr) and frames(expected.stderr)
    assert got.stderr.strip().splitlines()[-1] == expected.stderr.strip().splitlines()[-1] == \
        "ValueError: corrupt sample 37"
    assert load_json(tmp_path / "run" / "report.json")["exit_code"] == 1


@pytest.mark.torch
def test_torch_hook_tables_look_as_without_gpuprof(tmp_path):
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "optimizer_hooks.py")
    expected, got = plain_beside_gpuprof([script], ["run", "-q", "--out", str(tmp_path / "run"), script], cwd=tmp_path,
                                         timeout=120)
    assert got.returncode == expected.returncode == 0
    optimizer_lines = [line for line in got.stdout.splitlines() if not line.startswith("module forward")]
    assert optimizer_lines == [line for line in expected.stdout.splitlines() if not line.startswith("module forward")]
    assert "optimizer pre 0 post 0 instance 0 0" in got.stdout


@pytest.mark.torch
def test_the_report_gives_gpuprofs_own_cost(tmp_path):
    pytest.importorskip("torch")
    loop = os.path.join(ROOT, "bench", "programs", "probe_cost_loop.py")
    got = gpuprof("run", "--no-live", "--out", str(tmp_path / "run"), loop, "both", "1500", cwd=tmp_path, timeout=120)
    assert got.returncode == 0
    overhead = load_json(tmp_path / "run" / "report.json")["overhead"]
    assert overhead["supervisor_cpu_s"] > 0 and overhead["job_cpu_s"] > 0
    assert overhead["probes_cpu_s"] > 0 and set(overhead["per_call_us"]) == {"step", "batch", "fetch"}
    assert 0 < overhead["share"] < 1
    assert overhead["largest_part"] in ("supervisor", "samplers", "probes")
    assert "gpuprof's own cost: " in got.stderr and " of the job's" in got.stderr
