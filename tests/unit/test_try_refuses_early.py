"""`gpuprof try` refuses a wrong option before anything runs: a fix id that no fix has (or one
that needs a code change) and a --loader that is not FILE:LINE are wrong whatever the baseline
would say, so the user gets one line and exit 2 at once, not after a baseline run."""

import os
import subprocess
import sys

import pytest

from gpuprof.errors import UsageProblem
from gpuprof.commands.workflows import trying
from gpuprof.commands.workflows.options import TryRequest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def refused(tmp_path, **options) -> str:
    ran = []
    with pytest.raises(UsageProblem) as caught:
        trying.try_changes(TryRequest(target=[os.path.join(ROOT, "examples", "cpu_starved.py")],
                                      out=str(tmp_path / "runs"), say=ran.append, **options))
    assert ran == [] and not (tmp_path / "runs").exists(), "something ran before the refusal"
    return str(caught.value)


def test_an_unknown_fix_id_is_refused_with_the_closest_one(tmp_path):
    text = refused(tmp_path, fix=["num-worker"])
    assert text.startswith("--fix num-worker: no such fix; did you mean num-workers?")
    assert "\n" not in text


def test_a_fix_that_needs_a_code_change_is_refused_by_name(tmp_path):
    from gpuprof.advise import fixes
    untryable = next(fix.id for fix in fixes.SPEED if not fix.try_keys)
    assert "needs a code change" in refused(tmp_path, fix=[untryable])


def test_a_loader_that_is_not_file_colon_line_is_refused(tmp_path):
    assert refused(tmp_path, set_=["num_workers=2"], loader="train.py").startswith("--loader train.py:")


def test_the_command_line_refuses_a_typo_with_one_line_and_status_2(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "gpuprof", "try", "--fix", "typo",
                           os.path.join(ROOT, "examples", "cpu_starved.py")],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--fix typo: no such fix" in done.stderr
    assert not (tmp_path / ".local").exists(), "a run folder was made for a refused command"
