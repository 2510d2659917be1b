"""One profiled run for the benches: `gpuprof run` of a program in a temporary folder, with this
checkout's gpuprof first on the path, and the report it wrote."""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def report_of(argv: list, env: dict = None, timeout: float = 600) -> dict:
    """The report of `gpuprof run -- argv` (argv: the program's command line, interpreter first), run
    with `env` added to this process's environment; a run that fails raises with its last words."""
    with tempfile.TemporaryDirectory() as folder:
        environ = dict(os.environ, **(env or {}))
        environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
        done = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", os.path.join(folder, "run"),
                               "--", *argv], env=environ, cwd=folder, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise RuntimeError(f"gpuprof run {' '.join(argv)}: {last[0]}")
        with open(os.path.join(folder, "run", "report.json")) as handle:
            return json.load(handle)
