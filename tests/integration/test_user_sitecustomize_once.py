"""Never harm: a user's sitecustomize on PYTHONPATH, which the program also imports itself, runs once in
the program's process under gpuprof as under plain python, and the program's import gives the user's
module. Each run appends a line (its pid) to a file, so a second run of the file shows whatever
process it came from. Plain python is the oracle."""

import os
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, plain

PROGRAM = os.path.join(PROGRAMS, "import_sitecustomize.py")

USER_SITECUSTOMIZE = '''\
import os
with open(os.environ["SITE_RUNS_FILE"], "a") as runs:
    runs.write("%d\\n" % os.getpid())
USER_MARK = "the user's"
'''


def site_env(tmp_path, name):
    folder = tmp_path / "site"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(USER_SITECUSTOMIZE)
    env = env_with_source({"SITE_RUNS_FILE": str(tmp_path / name)})
    env["PYTHONPATH"] = str(folder) + os.pathsep + env["PYTHONPATH"]
    return env


def runs_in(path, stdout: str) -> list:
    """(the program's pid, the pids the sitecustomize ran in: one per run)."""
    pid = next(line.split()[1] for line in stdout.splitlines() if line.startswith("pid:"))
    return pid, path.read_text().split()


@pytest.mark.parametrize("form", [(PROGRAM,), ("--", sys.executable, PROGRAM)], ids=["script", "command"])
def test_a_sitecustomize_the_program_imports_runs_once_in_it(tmp_path, form):
    expected = plain(PROGRAM, cwd=tmp_path, env=site_env(tmp_path, "plain.txt"))
    assert expected.returncode == 0, expected.stderr
    pid, runs = runs_in(tmp_path / "plain.txt", expected.stdout)
    assert runs == [pid] and "module: the user's" in expected.stdout

    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), *form, cwd=tmp_path,
                  env=site_env(tmp_path, "gpuprof.txt"))
    assert got.returncode == 0, got.stderr
    pid, runs = runs_in(tmp_path / "gpuprof.txt", got.stdout)
    assert runs.count(pid) == 1 and "module: the user's" in got.stdout
    # gpuprof's own interpreter, started in the same environment, runs it too, before any of
    # gpuprof's code (docs/how-it-works.md); nothing else of the job does.
    assert len(runs) <= 2
