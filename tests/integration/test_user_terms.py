"""Advice in the user's own terms, from real programs: a script's own command-line option as the
first line of a fix, and the model-side fixes of an accelerate program in accelerate's words."""

import os
import re

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain_beside_gpuprof

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FRAMEWORKS = os.path.join(PROGRAMS, "frameworks", "site-packages")


def test_a_scripts_own_workers_option_is_the_first_line_of_the_num_workers_fix(tmp_path):
    """flagged_script.py takes -j/--workers and its DataLoader waits on a slow source: the fix is
    the run's own command with --workers set, the DataLoader change second; the program's output
    is what it prints without gpuprof."""
    program = os.path.join(PROGRAMS, "flagged_script.py")
    expected, got = plain_beside_gpuprof([program, "--epochs", "1"],
                                         ["run", "-q", "--out", str(tmp_path / "run"), program, "--epochs", "1"],
                                         cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout
    report = load_json(tmp_path / "run" / "report.json")
    workers = next(a for a in report["advice"] if a["id"] == "num-workers")
    first, second = workers["snippet"].splitlines()[:2]
    # A cold page cache (the libraries' pages read from the disk in the first steps) can make the
    # same wait read as disk-bound, whose fix also sets the training's threads on the command line.
    assert re.fullmatch(r"(OMP_NUM_THREADS=\d+ )?python \S*flagged_script\.py --epochs 1 --workers (\d+)", first), \
        (workers["snippet"], report["verdict"]["bottleneck"], report["verdict"]["evidence"])
    suggested = int(first.rsplit(" ", 1)[1])
    assert suggested == workers["change"]["num_workers"] and "-j/--workers" in second
    assert f"num_workers={suggested}" in workers["snippet"]


def test_an_accelerate_programs_model_side_fixes_speak_accelerates_settings(tmp_path):
    """The optimizer accelerate's prepare() wrapped steps from inside accelerate (a stand-in): the
    model facts name the framework, and compile is advised as Accelerator(dynamo_backend=...)
    with torch.compile second."""
    env = env_with_source()
    env["PYTHONPATH"] += os.pathsep + FRAMEWORKS
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, "accelerate_style.py"),
                  cwd=tmp_path, env=env)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    assert report["model"]["framework"] == "accelerate"
    assert report["verdict"]["bottleneck"] == "compute", report["verdict"]
    compiled = next(a for a in report["advice"] if a["id"] == "compile")
    lines = compiled["snippet"].splitlines()
    assert lines[0].startswith('accelerator = Accelerator(dynamo_backend="inductor")'), compiled["snippet"]
    assert lines[-1].startswith("model = torch.compile(model)")
    autocast = [a for a in report["advice"] if a["id"] == "mixed-precision"]      # a CPU with bf16 instructions
    assert all(a["snippet"].startswith('accelerator = Accelerator(mixed_precision="bf16")') for a in autocast)
