"""Every example gets the verdict and top fix it was built to show (bench/expectations.py)."""

import importlib.util
import os

import pytest

from tests.conftest import ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _expectations():
    spec = importlib.util.spec_from_file_location("expectations", os.path.join(ROOT, "bench", "expectations.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXPECTATIONS = _expectations()


def intra_op_threads(example: str) -> dict:
    """The examples run with one intra-op thread (as torchrun starts ranks): with torch's default of
    one per core, a program holding one of two cores stalls every parallel operator on it, and compute
    slows out of proportion (comprehension_batcher.py's data share fell from 46% to 12%), so the
    verdict would depend on the machine's load rather than the example. The examples about the
    training's threads themselves keep torch's default (EXPECTATIONS.THREADED)."""
    if example in EXPECTATIONS.THREADED:
        return env_with_source()
    return dict(env_with_source(), OMP_NUM_THREADS="1")


@pytest.mark.parametrize("example", sorted(EXPECTATIONS.EXPECTED))
def test_example_verdict_and_top_fixes(tmp_path, example):
    got = gpuprof("run", "--out", str(tmp_path / "run"), os.path.join(ROOT, "examples", example),
                  cwd=tmp_path, timeout=300, env=intra_op_threads(example))
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    want, check, check_text = EXPECTATIONS.expected_for(example, report)
    ids = [a["id"] for a in report["advice"]]
    assert report["verdict"]["bottleneck"] in want.split("|"), report["verdict"]
    assert check(ids), f"{check_text}: {ids}"
    assert report["verdict"]["summary"] in " ".join(got.stderr.split())  or report["verdict"]["summary"][:40] in got.stderr
    for item in report["advice"]:
        assert (item["estimated_speedup"] or item["prior"]) >= 1.0 and item["why"] and item["detail"]
    if want.startswith("input.") and report["dataloaders"]:
        where = report["dataloaders"][0]["where"]
        assert where.endswith(f"{example}:{_line_of_dataloader(example)}")
        assert where in report["verdict"]["summary"]


def _line_of_dataloader(example):
    with open(os.path.join(ROOT, "examples", example)) as handle:
        for number, line in enumerate(handle, 1):
            if "DataLoader(" in line and "import" not in line:
                return number
    raise AssertionError(example)
