"""Pictures of real runs: `run --html/--trace` and `report --format html|trace` on a program with two
DataLoader workers (the simulated GPU's NVML stands in for a GPU), and a 10^6-step synthetic run whose trace
stays bounded."""

import importlib.util
import json
import os

import pytest

from tests import trace_format
from gpuprof.testing.simgpu import Gpu, Machine, environment
from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory):
    """One run of tests/programs/two_workers.py with --html and --trace, and the program's own output."""
    folder = tmp_path_factory.mktemp("pictures")
    env = environment(Machine(gpus=[Gpu(name="Test GPU")]).create(str(folder / "machine")), env_with_source())
    script = os.path.join(PROGRAMS, "two_workers.py")
    got = gpuprof("run", "-q", "--out", str(folder / "run"), "--html", str(folder / "run.html"),
                  "--trace", str(folder / "trace.json"), script, cwd=str(folder), env=env, timeout=300)
    expected = plain(script, cwd=str(folder))
    return {"folder": folder, "got": got, "expected": expected, "report": load_json(folder / "run" / "report.json"),
            "trace": load_json(folder / "trace.json"), "html": (folder / "run.html").read_text()}


def test_pictures_leave_the_program_alone(two_worker_run):
    got, expected = two_worker_run["got"], two_worker_run["expected"]
    assert got.returncode == expected.returncode == 0
    assert got.stdout == expected.stdout and got.stderr == ""


def test_trace_has_a_track_per_worker_with_a_slice_per_batch(two_worker_run):
    trace, report = two_worker_run["trace"], two_worker_run["report"]
    assert trace_format.problems(trace) == []
    names = trace_format.process_names(trace)
    workers = [pid for pid, name in names.items() if name.startswith("DataLoader worker")]
    loader = report["dataloaders"][0]
    # Two workers per epoch, two epochs (workers are not persistent): four worker processes.
    assert len(workers) == loader["workers_seen"] == 4
    fetched = {pid: len(trace_format.slices_on(trace, pid, "making batches")) for pid in workers}
    assert all(n > 0 for n in fetched.values())
    assert sum(fetched.values()) == loader["producer"]["batches"] == loader["batches"] == 48


def test_trace_steps_track_counts_every_step(two_worker_run):
    trace, report = two_worker_run["trace"], two_worker_run["report"]
    training = report["steps"]["pid"]
    assert trace_format.process_names(trace)[training].startswith("training")
    steps = trace_format.slices_on(trace, training, "steps")
    assert len(steps) == report["steps"]["count"] == 48
    waits = trace_format.slices_on(trace, training, "waiting for data")
    assert len(waits) == 48
    epochs = trace_format.slices_on(trace, training, f"epochs: {report['dataloaders'][0]['where']}")
    assert [e["name"] for e in epochs] == ["epoch 1", "epoch 2"]


def test_trace_has_machine_and_gpu_counters(two_worker_run):
    counters = trace_format.counter_names(two_worker_run["trace"])
    assert {"CPU, machine (%)", "CPU, job (cores busy)", "disk read (MB/s)", "job memory (MB)",
            "GPU 0 utilisation (%)", "GPU 0 memory (MB)"} <= counters


def test_html_of_the_run_has_the_verdict_and_its_plots(two_worker_run):
    page, report = two_worker_run["html"], two_worker_run["report"]
    assert page.startswith("<!DOCTYPE html>")
    assert report["verdict"]["bottleneck"] in page
    assert page.count('<svg class="plot"') >= 6
    assert "<h3>GPU 0 (Test GPU)</h3>" in page


def test_report_writes_the_same_pictures_from_the_saved_run(two_worker_run):
    folder = two_worker_run["folder"]
    got = gpuprof("report", str(folder / "run"), "--format", "trace", "--out", str(folder / "again.json"), cwd=str(folder))
    assert got.returncode == 0 and got.stdout == "" and got.stderr == ""
    assert load_json(folder / "again.json") == two_worker_run["trace"]
    got = gpuprof("report", str(folder / "run"), "-f", "html", cwd=str(folder))
    assert got.returncode == 0 and got.stdout == two_worker_run["html"]


def test_bad_picture_requests_get_one_line_and_exit_2(two_worker_run, tmp_path):
    run = str(two_worker_run["folder"] / "run")
    got = gpuprof("report", run, "-f", "svg", cwd=str(tmp_path))
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "trace" in got.stderr and "html" in got.stderr
    got = gpuprof("report", run, "-f", "html", "--out", "/proc/r.html", cwd=str(tmp_path))
    assert got.returncode == 2 and got.stderr.startswith("gpuprof: error: cannot write --out /proc/r.html")
    got = gpuprof("report", str(tmp_path), "-f", "trace", cwd=str(tmp_path))
    assert got.returncode == 2 and "Traceback" not in got.stderr
    marker = tmp_path / "ran"
    program = tmp_path / "touch.py"
    program.write_text(f"open({str(marker)!r}, 'w').close()\n")
    got = gpuprof("run", "--html", "/proc/x.html", str(program), cwd=str(tmp_path))
    assert got.returncode == 2 and "cannot write --html /proc/x.html" in got.stderr and not marker.exists()


def _scale_bench():
    spec = importlib.util.spec_from_file_location("gpuprof_bench_scale", os.path.join(ROOT, "bench", "scale.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRACE_LIMIT_BYTES = 6_000_000


def test_a_million_step_run_gives_a_bounded_trace(tmp_path):
    """10^6 steps and an hour of samples: the trace stays a few MB (docs/pictures.md states it)."""
    _scale_bench().make_run(str(tmp_path / "big"), 1_000_000, 1.0, full=5000)
    got = gpuprof("report", str(tmp_path / "big"), "-f", "trace", "-o", str(tmp_path / "t.json"), cwd=str(tmp_path),
                  timeout=300)
    assert got.returncode == 0, got.stderr
    size = os.path.getsize(tmp_path / "t.json")
    assert size < TRACE_LIMIT_BYTES
    with open(tmp_path / "t.json") as handle:
        trace = json.load(handle)
    assert trace_format.problems(trace) == []
    steps = trace_format.slices_on(trace, 1, "steps")
    assert sum(s["args"].get("steps", 1) for s in steps) == 1_000_000
    assert len(steps) <= 5000 + 2000
