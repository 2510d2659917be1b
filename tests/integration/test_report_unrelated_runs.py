"""`gpuprof report runA runB` on real run folders of unrelated runs: refused in one
line with exit 2, never merged into a job whose "slowest rank" is another program."""

import pytest

from tests.integration.helpers import gpuprof

pytestmark = pytest.mark.torch

LOOP = """import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(30):
    loss = model(torch.randn(8, 4)).sum(){extra}
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def recorded(tmp_path, name, extra=""):
    script = tmp_path / f"{name}.py"
    script.write_text(LOOP.format(extra=extra))
    got = gpuprof("run", "-q", "--out", str(tmp_path / name), str(script), cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    return str(tmp_path / name)


def refused(got):
    return got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr \
        and "ranks" not in got.stdout


def test_runs_of_two_programs_are_refused_in_one_line(tmp_path):
    first, second = recorded(tmp_path, "first"), recorded(tmp_path, "second", " * 2")
    got = gpuprof("report", first, second, cwd=str(tmp_path))
    assert refused(got) and "runs of different programs (first.py, second.py)" in got.stderr, got.stderr
    assert f"gpuprof report {first}`" in got.stderr
    # the same two kept in one folder, as a folder of runs (refused as separate runs of one host)
    both = tmp_path / "both"
    both.mkdir()
    for path in (first, second):
        (tmp_path / path).rename(both / (tmp_path / path).name)
    got = gpuprof("report", str(both), cwd=str(tmp_path))
    assert refused(got) and "not one job's nodes" in got.stderr, got.stderr


def test_two_runs_of_one_program_without_a_launcher_are_refused(tmp_path):
    run_dir = recorded(tmp_path, "loop")
    again = gpuprof("run", "-q", "--out", str(tmp_path / "again"), str(tmp_path / "loop.py"), cwd=str(tmp_path))
    assert again.returncode == 0, again.stderr
    got = gpuprof("report", run_dir, str(tmp_path / "again"), cwd=str(tmp_path))
    assert refused(got) and "is no node of a distributed job" in got.stderr, got.stderr
