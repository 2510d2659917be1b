"""The reports of saved runs, in every format, byte for byte as the files in tests/golden/expected:
a refactoring that changes a word, a number or a JSON key fails here. After a deliberate change
of the reports, `python -m tests.golden.outputs --write` rewrites the expected files."""

import os

import pytest

from tests.golden import outputs


def expected(path: str) -> str:
    with open(os.path.join(outputs.EXPECTED, path), "r", encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("name", outputs.run_names())
def test_every_format_of_a_saved_run_is_unchanged(name):
    got = outputs.run_outputs(name)
    assert sorted(got) == sorted(os.listdir(os.path.join(outputs.EXPECTED, name)))
    for file_name, text in got.items():
        assert text == expected(os.path.join(name, file_name)), f"{name}/{file_name} changed"


def test_advice_for_gpu_transfer_and_comm_scenarios_is_unchanged():
    for file_name, text in outputs.advice_outputs().items():
        assert text == expected(file_name)


def test_the_try_table_and_markdown_are_unchanged():
    for path, text in outputs.try_outputs().items():
        assert text == expected(path), f"{path} changed"


def test_the_golden_runs_cover_every_kind_of_verdict_the_examples_give():
    import json
    verdicts = {json.loads(expected(os.path.join(name, "report.json")))["verdict"]["bottleneck"]
                for name in outputs.run_names()}
    assert {"input.cpu", "input.disk", "input.latency", "compute", "memory.oom"} <= verdicts
