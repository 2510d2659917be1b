"""Run gpuprof and plain python on the same program, as real child processes."""

import concurrent.futures
import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def env_with_source(extra=None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("COLUMNS", None)
    # gpuprof runs the first python on PATH, as `python script.py` would: make it this interpreter.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(extra or {})
    return env


FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


def default_signal_dispositions() -> None:
    """For a child the test signals (a preexec_fn, or after a fork): the default disposition of each
    signal gpuprof forwards. A test started from a background job inherits SIGINT ignored, and
    gpuprof rightly keeps an ignored signal ignored; a test that sends one sets what it relies on."""
    import signal
    for name in FORWARDED:
        signal.signal(getattr(signal, name), signal.SIG_DFL)


def gpuprof(*args, cwd, env=None, timeout=180, input=None):
    return subprocess.run([sys.executable, "-m", "gpuprof", *args], cwd=cwd, env=env or env_with_source(),
                          capture_output=True, text=True, timeout=timeout, input=input)


def plain(*args, cwd, env=None, timeout=180, input=None):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, input=input)


def plain_beside_gpuprof(plain_args, gpuprof_args, cwd, env=None, timeout=180) -> tuple:
    """(plain, gpuprof): the same program under plain python and under gpuprof, side by side, for
    tests that compare what the two print and assert nothing on timings of the profiled run."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        expected = pool.submit(plain, *plain_args, cwd=cwd, env=env, timeout=timeout)
        got = gpuprof(*gpuprof_args, cwd=cwd, env=env, timeout=timeout)
        return expected.result(), got


def load_json(path):
    with open(path) as handle:
        return json.load(handle)


def without_gpuprof_lines(stderr: str) -> str:
    """The user's stderr: gpuprof's report is written after the child ends, so cut from its header."""
    lines = stderr.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("gpuprof ") or line.startswith("gpuprof: "):
            return "".join(lines[:i])
    return stderr


def selected_cases(request, test_name: str) -> list:
    """The parameters (a dict; empty where it has none) of each selected case of `test_name` in the
    module of the fixture asking."""
    return [item.callspec.params if hasattr(item, "callspec") else {} for item in request.session.items
            if item.module is request.module and item.originalname == test_name]


def two_at_a_time(jobs: dict, tmp_path_factory) -> dict:
    """{case: (its folder, what jobs[case](folder) returned)}: each job in a folder of its own, two
    running at once, for a module fixture whose tests judge no timing; all end before it returns."""
    folders = {case: tmp_path_factory.mktemp("_".join(map(str, case)) if isinstance(case, tuple) else str(case))
               for case in jobs}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {case: pool.submit(job, folders[case]) for case, job in jobs.items()}
        return {case: (folders[case], future.result()) for case, future in futures.items()}
