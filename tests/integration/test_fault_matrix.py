"""The reliability matrix (../shared/reliability.md) with plain `python` as the oracle."""

import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment
from tests.conftest import PROGRAMS
from tests.integration.helpers import (env_with_source, gpuprof, load_json, plain_beside_gpuprof, selected_cases,
                                       two_at_a_time)
from tests.simulated_nvml import keep_busy

EXITS = os.path.join(PROGRAMS, "exits.py")


@pytest.mark.parametrize("how, status", [("exit17", 17), ("exit_none", 0), ("exit_msg", 1), ("os_exit3", 3),
                                         ("keyboard", 130), ("syntax", 1)])
def test_every_way_of_leaving_keeps_status_and_stderr(tmp_path, how, status):
    expected, got = plain_beside_gpuprof([EXITS, how], ["run", "-q", "--out", str(tmp_path / "run"), EXITS, how],
                                         cwd=tmp_path)
    # Plain python dies of SIGINT on an uncaught KeyboardInterrupt; gpuprof dies of it too, after the
    # report, whose exit code is the shell's 128+N.
    assert got.returncode == expected.returncode
    assert (128 - got.returncode if got.returncode < 0 else got.returncode) == status
    assert got.stdout == expected.stdout and got.stderr == expected.stderr
    report = load_json(tmp_path / "run" / "report.json")
    assert report["exit_code"] == status


def test_stdout_and_stderr_keep_their_bytes_and_order(tmp_path):
    script = os.path.join(PROGRAMS, "interleave.py")
    merged = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path, timeout=60)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:         # side by side: nothing timed
        plainly = pool.submit(subprocess.run, [sys.executable, script], **merged)
        got = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", str(tmp_path / "run"), script],
                             env=env_with_source(), **merged).stdout
        expected = plainly.result().stdout
    assert got == expected and b"\xff\xfe" in got


def test_memory_error_under_rlimit_as_gives_status_1_and_a_report(tmp_path):
    script = os.path.join(PROGRAMS, "memory_error.py")
    expected, got = plain_beside_gpuprof([script], ["run", "-q", "--out", str(tmp_path / "run"), script], cwd=tmp_path)
    assert expected.returncode == got.returncode == 1 and "MemoryError" in got.stderr
    assert load_json(tmp_path / "run" / "report.json")["exit_code"] == 1


#: How long busy.py runs on a simulated machine: the shim's start-up in the job delays the samplers
#: by about a second, and a GPU lost after three reads needs a fourth.
SIMULATED_BUSY_S = "3.0"


def on_simulated(machine, folder) -> dict:
    """The test environment with `machine` (written into `folder`) behind `pynvml`."""
    return environment(machine.create(str(folder)), env_with_source())


@pytest.mark.parametrize("machine, words", [(Machine(nvml="missing"), "not importable"),
                                            (Machine(nvml="init_fails"), "version mismatch"),
                                            (Machine(gpus=[Gpu(fail_after_reads=3)]), "GPU is lost")],
                         ids=["missing", "init_fails", "lost_mid_run"])
def test_nvml_trouble_leaves_the_job_alone_and_says_why(tmp_path, machine, words):
    env = on_simulated(machine, tmp_path / "machine")
    script = os.path.join(PROGRAMS, "busy.py")
    got = gpuprof("run", "--json", str(tmp_path / "r.json"), script, SIMULATED_BUSY_S, cwd=tmp_path, env=env)
    assert got.returncode == 0 and got.stdout == "busy done\n"
    report = load_json(tmp_path / "r.json")
    assert words in report["system"]["gpu_status"]["reason"]
    if machine.gpus[0].fail_after_reads >= 0:
        assert report["system"]["gpus"][0]["samples"] == 3


def test_a_working_simulated_gpu_is_sampled_end_to_end(tmp_path):
    env = on_simulated(Machine(gpus=[Gpu(name="Test GPU")]), tmp_path / "machine")
    # Another process keeps the GPU's kernels running half the time for the next two minutes.
    now = time.monotonic()
    keep_busy(env["GPUPROF_SIMGPU"], 0, now - 1.0, now + 120.0, 0.5, period=0.1)
    got = gpuprof("run", "--json", str(tmp_path / "r.json"), os.path.join(PROGRAMS, "busy.py"), SIMULATED_BUSY_S,
                  cwd=tmp_path, env=env)
    gpu = load_json(tmp_path / "r.json")["system"]["gpus"][0]
    assert got.returncode == 0 and gpu["name"] == "Test GPU" and gpu["util_gpu"] == pytest.approx(0.5)
    assert "Test GPU" in got.stderr


def test_ten_concurrent_runs_into_one_folder_stay_apart(tmp_path):
    out = tmp_path / "shared"
    results = [None] * 10

    def one(i):
        results[i] = gpuprof("run", "-q", "--out", str(out), "--json", str(tmp_path / f"r{i}.json"),
                             os.path.join(PROGRAMS, "exits.py"), "exit17", cwd=tmp_path, timeout=240)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r.returncode == 17 for r in results)
    run_dirs = {os.path.dirname(p) for p in glob.glob(str(out / "**" / "run.json"), recursive=True)}
    assert len(run_dirs) == 10
    for folder in run_dirs:
        assert json.load(open(os.path.join(folder, "report.json")))["exit_code"] == 17
        assert len(glob.glob(os.path.join(folder, "events", "*.jsonl"))) == 1
    assert len({json.load(open(tmp_path / f"r{i}.json"))["run_dir"] for i in range(10)}) == 10


def test_secrets_never_reach_a_file(tmp_path):
    env = env_with_source({"HF_TOKEN": "S2-hf-secret-value"})
    got = gpuprof("run", "--out", str(tmp_path / "run"), "--json", str(tmp_path / "r.json"),
                  os.path.join(PROGRAMS, "show_context.py"), "0", "--api-key=S1-cli-secret", "--token", "S3-tok",
                  "--db", "https://user:S4-url-pw@db.example/x", "-p", "S5-short-pw",
                  '{"api_key": "S6-in-json"}', "--passwd:S7-colon",
                  cwd=tmp_path, env=env, input="")
    assert got.returncode == 0 and "S1-cli-secret" in got.stdout           # the program still gets it
    secrets = (b"S1-cli-secret", b"S2-hf-secret-value", b"S3-tok", b"S4-url-pw", b"S5-short-pw", b"S6-in-json",
               b"S7-colon")
    markdown = gpuprof("report", str(tmp_path / "run"), "--format", "markdown", cwd=tmp_path).stdout.encode()
    for secret in secrets:
        assert secret not in markdown
    for path in glob.glob(str(tmp_path / "**" / "*"), recursive=True):
        if os.path.isfile(path):
            data = open(path, "rb").read()
            for secret in secrets:
                assert secret not in data, (path, secret)
    assert "S1-cli-secret" not in got.stderr


@pytest.mark.torch
@pytest.mark.parametrize("workers, context", [("2", "spawn"), ("2", "forkserver")])
def test_a_failing_sample_fails_the_same_way(tmp_path, workers, context):
    """Workers started by spawn and forkserver; no workers and fork workers are checked, frame for
    frame, by test_probe_cost's traceback test."""
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "worker_raises.py")
    args = [script, workers] + ([context] if context else [])
    expected, got = plain_beside_gpuprof(args, ["run", "-q", "--out", str(tmp_path / "run"), *args], cwd=tmp_path,
                                         timeout=120)
    assert expected.returncode == got.returncode == 1
    def last_line(text):
        return [line for line in text.splitlines() if line.strip()][-1]

    assert last_line(expected.stderr) == last_line(got.stderr) == "ValueError: corrupt sample 37"
    assert load_json(tmp_path / "run" / "report.json")["exit_code"] == 1


RANKS_MERGED = "test_torchrun_ranks_are_merged_and_status_propagates"
STEP_WINDOW = "test_a_step_window_under_torchrun_ends_every_rank_as_a_success"


@pytest.fixture(scope="module")
def torchrun_runs(request, tmp_path_factory):
    """{case: (folder, gpuprof's result, what `ps` listed of its processes as it returned)} for the
    torchrun tests selected: ("ranks", mode) for each mode of RANKS_MERGED, ("window",) for STEP_WINDOW.
    Run two at a time: those tests count steps and processes and read statuses, nothing timed; all
    end before the first of those tests reads them."""
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "ddp_ranks.py")
    commands = {("ranks", c["mode"]): ["--", *_torchrun(script, c["mode"])] for c in selected_cases(request, RANKS_MERGED)}
    if selected_cases(request, STEP_WINDOW):
        commands[("window",)] = ["--steps", "5", "--", *_torchrun(script)]

    def job(command):
        def run(folder):
            got = gpuprof("run", "-q", "--out", str(folder / "run"), *command, cwd=folder, timeout=240)
            return got, _still_running(folder / "run" / "report.json")
        return run

    ran = two_at_a_time({case: job(command) for case, command in commands.items()}, tmp_path_factory)
    return {case: (folder, *result) for case, (folder, result) in ran.items()}


def _still_running(report_path):
    """What `ps` lists of the run's processes the moment gpuprof has returned (None: no report)."""
    try:
        pids = [p["pid"] for p in load_json(report_path)["processes"]["list"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return subprocess.run(["ps", "-o", "pid=", "-p", ",".join(map(str, pids))], capture_output=True, text=True)


def _torchrun(script, *args):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", script, *args]


@pytest.mark.torch
@pytest.mark.parametrize("mode, status", [("ok", 0), ("fail", 3)])
def test_torchrun_ranks_are_merged_and_status_propagates(torchrun_runs, mode, status):
    pytest.importorskip("torch")
    folder, got, leftover = torchrun_runs[("ranks", mode)]
    assert (got.returncode == 0) if status == 0 else (got.returncode != 0), got.stderr[-2000:]
    report = load_json(folder / "run" / "report.json")
    ranks = [p for p in report["processes"]["list"] if p["argv"] and p["argv"][0].endswith("ddp_ranks.py")]
    assert len(ranks) == 2
    assert report["steps"]["processes"] == 2 and report["steps"]["count"] == 20
    assert leftover.stdout.strip() == ""                         # `ps` of the run's processes as it returned


def test_a_job_that_removes_its_run_folder_keeps_its_status_and_gets_a_report(tmp_path):
    script = tmp_path / "rm_run.py"
    script.write_text("import shutil, sys\nshutil.rmtree(sys.argv[1])\nprint('removed')\nsys.exit(7)\n")
    run = tmp_path / "run"
    got = gpuprof("run", "--out", str(run), str(script), str(run), cwd=tmp_path)
    assert got.returncode == 7 and got.stdout == "removed\n" and "Traceback" not in got.stderr
    report = load_json(run / "report.json")
    assert report["exit_code"] == 7 and any("run folder was removed" in n for n in report["notes"])


@pytest.mark.torch
def test_a_step_window_under_torchrun_ends_every_rank_as_a_success(torchrun_runs):
    pytest.importorskip("torch")
    folder, got, _ = torchrun_runs[("window",)]
    assert got.returncode == 0, got.stderr[-3000:]
    assert "Traceback" not in got.stderr and "ChildFailedError" not in got.stderr
    report = load_json(folder / "run" / "report.json")
    assert report["exit_code"] == 0 and report["stopped_after_steps"] == 5
