"""A real Hugging Face Trainer with evaluation every 20 steps and a collator that tokenizes each
batch (tests/programs/hf_trainer_eval.py): its training and evaluation loaders, built at one line of
the user's (`trainer.train()`), are two pipelines with their roles; the collator is named at its
line with its share of making a batch; the evaluation's share matches the Trainer's own clock, on
an idle machine and beside a process spinning on a core."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json

pytestmark = pytest.mark.torch
PROGRAM = os.path.join(PROGRAMS, "hf_trainer_eval.py")
STEPS = "70"            # evaluations after steps 20, 40 and 60 inside the measured window


def _run(tmp_path, name, hog=False):
    pytest.importorskip("transformers")
    env = env_with_source({"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    spinner = subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "busy.py"), "600"],
                               stdout=subprocess.DEVNULL) if hog else None
    try:
        got = gpuprof("run", "-q", "--out", str(tmp_path / name), PROGRAM, STEPS, cwd=str(tmp_path), env=env,
                      timeout=400)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    assert got.returncode == 0, got.stderr[-3000:]
    timed = float(re.search(r"timed evaluation share ([0-9.]+)", got.stdout).group(1))
    return load_json(tmp_path / name / "report.json"), timed


@pytest.fixture(scope="module")
def idle(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("hf"), "idle")


def test_the_trainers_two_loaders_are_two_pipelines_with_their_roles(idle):
    report, _ = idle
    loaders = {entry["role"]: entry for entry in report["dataloaders"]}
    assert set(loaders) == {"train", "validation"}, [(e["role"], e["where"]) for e in report["dataloaders"]]
    train, validation = loaders["train"], loaders["validation"]
    assert train["where"] == validation["where"] and train["where"].endswith("hf_trainer_eval.py:" + _train_line())
    assert train["built_by"] == "Trainer.get_train_dataloader" and validation["built_by"] == "Trainer.get_eval_dataloader"
    assert train["built_in"].startswith("transformers/trainer.py:")
    assert train["sampler"] != "SequentialSampler" and validation["sampler"] == "SequentialSampler"
    assert train["batch_size"] == 16 and validation["batch_size"] == 32
    evaluation = report["steps"]["evaluation"]
    assert [entry["role"] for entry in evaluation["loaders"]] == ["validation"]
    assert evaluation["passes"] == 3


def test_the_tokenizing_collator_is_named_with_its_share_and_its_fix(idle):
    report, _ = idle
    train = next(entry for entry in report["dataloaders"] if entry["role"] == "train")
    parts = train["batch_parts"]
    assert parts["collate"]["name"] == "Collator.__call__" and parts["notable"]
    assert parts["collate"]["where"].endswith("hf_trainer_eval.py:" + _line_of("class Collator:", after=3))
    assert parts["collate_share"] > 0.8
    ids = [fix["id"] for fix in report["advice"]]
    assert "collate-once" in ids and "cache-preprocessed" not in ids and "device-preprocessing" not in ids
    collate = next(fix for fix in report["advice"] if fix["id"] == "collate-once")
    assert collate["where"] == parts["collate"]["where"] and "DataCollatorWithPadding" in collate["snippet"]
    assert "Trainer(..., train_dataset=tokenized" in collate["snippet"]
    if report["verdict"]["bottleneck"] == "compute":
        # Beside another program holding a core, torch's intra-op threads stall the compute, which
        # then leads: the thread setting comes first, and workers would only share the same cores.
        assert ids[0] == "training-threads" and "num-workers" not in ids, ids
        return
    workers = next(fix for fix in report["advice"] if fix["id"] == "num-workers")
    assert "TrainingArguments(..., dataloader_num_workers=" in workers["snippet"]


def test_the_evaluation_share_matches_the_trainers_own_clock(idle):
    report, timed = idle
    assert abs(report["steps"]["evaluation"]["share"] - timed) <= 0.05, (report["steps"]["evaluation"], timed)


@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="a spinner on one of two cores")
def test_beside_a_busy_core_the_evaluation_share_still_matches(tmp_path):
    report, timed = _run(tmp_path, "busy", hog=True)
    assert report["system"]["others"]["notable"], report["system"]["others"]
    assert abs(report["steps"]["evaluation"]["share"] - timed) <= 0.05, (report["steps"]["evaluation"], timed)
    assert {entry["role"] for entry in report["dataloaders"]} == {"train", "validation"}


def _line_of(text: str, after: int = 0) -> str:
    with open(PROGRAM) as handle:
        lines = handle.read().splitlines()
    return str(next(i for i, line in enumerate(lines, 1) if line.startswith(text)) + after)


def _train_line() -> str:
    return _line_of("result = trainer.train()")
