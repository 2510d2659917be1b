"""Real frameworks' loaders at the user's lines: a Lightning DataModule's training and validation
loaders, rebuilt by Lightning under DDP on two CPU ranks, are two pipelines at the DataModule's
`DataLoader(...)` lines; and a program that exits before its first step has no start-up share."""

import os

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain_beside_gpuprof

pytestmark = pytest.mark.torch


def _line_with(path, marker):
    with open(path) as handle:
        return next(i for i, line in enumerate(handle, 1) if marker in line)


def test_lightning_ddp_loaders_are_the_datamodules_lines_with_their_roles(tmp_path):
    pytest.importorskip("lightning")
    program = os.path.join(PROGRAMS, "lightning_ddp.py")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), program, cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    report = load_json(tmp_path / "run" / "report.json")
    loaders = {entry["role"]: entry for entry in report["dataloaders"]}
    assert set(loaders) == {"train", "validation"}, [(e.get("role"), e["where"]) for e in report["dataloaders"]]
    assert loaders["train"]["where"].endswith(f"lightning_ddp.py:{_line_with(program, '# TRAIN LOADER')}")
    assert loaders["validation"]["where"].endswith(f"lightning_ddp.py:{_line_with(program, '# VAL LOADER')}")
    for entry in loaders.values():
        assert entry["framework"] == "lightning" and entry["sampler"] == "DistributedSampler", entry
        assert entry["built_by"].startswith("Data.") and not entry.get("built_in"), entry


def test_a_run_that_exits_before_its_first_step_has_no_start_up_share(tmp_path):
    program = os.path.join(PROGRAMS, "fails_before_step.py")
    expected, got = plain_beside_gpuprof([program], ["run", "-q", "--out", str(tmp_path / "run"), program],
                                         cwd=str(tmp_path), env=env_with_source())
    assert expected.returncode == got.returncode == 1
    report = load_json(tmp_path / "run" / "report.json")
    startup = report.get("startup")
    assert startup is None or (startup["share"] is None and not startup["notable"]), startup
    findings = [report["verdict"]] + (report.get("findings") or [])
    assert all(f.get("bottleneck") != "setup" for f in findings), findings
