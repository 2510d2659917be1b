"""`gpuprof report` reads every folder gpuprof writes: a `try` folder shows try's own table again
(in console, markdown or json, as `try` renders them), and what it cannot show (an unfinished try,
a folder of separate runs) is named in one line with the command that reads it."""

import json
import os
import shutil

import pytest

from gpuprof.errors import UsageProblem
from gpuprof.present.render import formats
from gpuprof.commands.workflows.report import report_runs
from tests.golden import outputs


def try_folder(tmp_path, claim=None) -> str:
    folder = tmp_path / "try-train-host-20260101-000000-abcdef"
    folder.mkdir()
    shutil.copy(outputs.TRY_RECORD, folder / "try.json")
    claim = claim or {"format": "gpuprof.try/1", "status": "finished", "results": "try.json"}
    (folder / "run.json").write_text(json.dumps(claim))
    return str(folder)


def saved_try() -> dict:
    with open(outputs.TRY_RECORD, "r", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.parametrize("fmt,try_fmt", [("console", "try-console"), ("markdown", "try-markdown"),
                                         ("json", "try-json")])
def test_a_try_folder_shows_try_s_own_table_again(tmp_path, capsys, fmt, try_fmt):
    assert report_runs([try_folder(tmp_path)], fmt) == 0
    assert capsys.readouterr().out == formats.render(try_fmt, saved_try())


def test_a_try_json_alone_is_read_too_and_json_goes_to_its_file(tmp_path, capsys):
    folder = try_folder(tmp_path)
    assert report_runs([os.path.join(folder, "try.json")], "console", json_path=str(tmp_path / "t.json")) == 0
    assert "measured speed-up" in capsys.readouterr().out
    assert json.loads((tmp_path / "t.json").read_text())["format"] == "gpuprof.try/1"


def test_a_picture_of_a_try_is_refused_in_one_line_naming_what_can_be_shown(tmp_path):
    with pytest.raises(UsageProblem) as caught:
        report_runs([try_folder(tmp_path)], "html")
    text = str(caught.value)
    assert "is a `gpuprof try` experiment" in text and "console, markdown, json" in text and "\n" not in text


def test_a_try_of_another_version_says_which_versions_are_read(tmp_path):
    folder = try_folder(tmp_path)
    record = dict(saved_try(), format="gpuprof.try/9")
    with open(os.path.join(folder, "try.json"), "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    with pytest.raises(UsageProblem, match=r"try` results of format gpuprof.try/9, this gpuprof reads gpuprof.try/1"):
        report_runs([folder], "console")


def test_an_unfinished_try_is_named_with_a_run_inside_it(tmp_path):
    folder = try_folder(tmp_path, claim={"format": "gpuprof.run/1", "status": "running", "pid": 1})
    os.remove(os.path.join(folder, "try.json"))
    os.makedirs(os.path.join(folder, "r1-baseline"))
    shutil.copy(os.path.join(outputs.RUNS, "cpu_starved", "run.json"), os.path.join(folder, "r1-baseline"))
    with pytest.raises(UsageProblem) as caught:
        report_runs([folder], "console")
    assert "has not finished" in str(caught.value)
    assert f"gpuprof report {os.path.join(folder, 'r1-baseline')}" in str(caught.value)


def test_a_folder_of_separate_runs_is_not_merged_into_a_job(tmp_path):
    for name in ("cpu_starved", "compute_heavy"):            # both written on one host
        shutil.copytree(os.path.join(outputs.RUNS, name), tmp_path / "runs" / name)
    with pytest.raises(UsageProblem, match="holds 2 separate run folders, not one job's nodes"):
        report_runs([str(tmp_path / "runs")], "console")
