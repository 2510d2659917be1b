"""Output files the user names: checked before anything runs, and a failure after the run costs one
line, never the report or the exit status; a short program's stderr holds nothing of gpuprof's but
its report."""

import pytest

from tests.integration.helpers import gpuprof, load_json


def one_line_program(tmp_path):
    path = tmp_path / "hi.py"
    path.write_text('print("hi")\n')
    return str(path)


@pytest.mark.parametrize("args", [
    ["run", "--json", "/proc/x.json"],
    ["run", "--gate", "GATE", "--junit", "/proc/j.xml"],
    ["run", "--json", "NOFOLDER/x.json"],
])
def test_unwritable_outputs_of_run_are_refused_before_launching(tmp_path, args):
    gate = tmp_path / "gate.toml"
    gate.write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.5\n")
    args = [str(gate) if a == "GATE" else str(tmp_path / "missing" / "x.json") if a == "NOFOLDER/x.json" else a
            for a in args]
    marker = tmp_path / "ran"
    program = tmp_path / "touch.py"
    program.write_text(f"open({str(marker)!r}, 'w').close()\n")
    got = gpuprof(*args, "--out", str(tmp_path / "run"), str(program), cwd=str(tmp_path))
    assert got.returncode == 2
    assert got.stderr.count("\n") == 1 and got.stderr.startswith("gpuprof: error: cannot write")
    assert not marker.exists()                      # nothing was launched


def test_unwritable_outputs_of_report_and_gate_give_one_line_and_exit_2(tmp_path):
    program = one_line_program(tmp_path)
    assert gpuprof("run", "-q", "--out", str(tmp_path / "run"), program, cwd=str(tmp_path)).returncode == 0
    saved = (tmp_path / "run" / "report.json").read_text()
    got = gpuprof("report", str(tmp_path / "run"), "--json", "/proc/r.json", cwd=str(tmp_path))
    assert got.returncode == 2 and got.stderr.startswith("gpuprof: error: cannot write --json /proc/r.json")
    got = gpuprof("gate", str(tmp_path / "run"), "--max-data-wait", "0.5", "--junit", "/proc/j.xml", cwd=str(tmp_path))
    assert got.returncode == 2 and "cannot write --junit /proc/j.xml" in got.stderr and "Traceback" not in got.stderr
    assert (tmp_path / "run" / "report.json").read_text() == saved      # report never rewrites it


def test_json_to_stdout_and_a_json_file_lost_during_the_run(tmp_path):
    program = one_line_program(tmp_path)
    got = gpuprof("report", "--format", "console", "--json", "-", str(tmp_path), cwd=str(tmp_path))
    assert got.returncode == 2                                          # not a run folder: one line
    assert gpuprof("run", "-q", "--out", str(tmp_path / "run"), program, cwd=str(tmp_path)).returncode == 0
    got = gpuprof("report", "-f", "json", str(tmp_path / "run"), cwd=str(tmp_path))
    assert got.returncode == 0 and '"format": "gpuprof.report/1"' in got.stdout
    # The folder for --json exists at the start and is removed by the program: the run keeps the
    # program's status, says in one line what was lost, and its own report.json is saved.
    folder = tmp_path / "out"
    folder.mkdir()
    remover = tmp_path / "remover.py"
    remover.write_text(f"import shutil, sys\nshutil.rmtree({str(folder)!r})\nsys.exit(3)\n")
    got = gpuprof("run", "--out", str(tmp_path / "run2"), "--json", str(folder / "r.json"), str(remover),
                  cwd=str(tmp_path))
    assert got.returncode == 3
    errors = [line for line in got.stderr.splitlines() if line.startswith("gpuprof: error:")]
    assert len(errors) == 1 and "could not write --json" in errors[0]
    assert load_json(tmp_path / "run2" / "report.json")["exit_code"] == 3


def test_a_short_program_leaves_nothing_of_gpuprof_on_stderr_but_its_report(tmp_path):
    program = one_line_program(tmp_path)
    for i in range(12):
        got = gpuprof("run", "--out", str(tmp_path / f"run{i}"), program, cwd=str(tmp_path))
        assert got.returncode == 0 and got.stdout == "hi\n"
        assert got.stderr.startswith("gpuprof "), got.stderr          # the report's header first
        assert "Exception" not in got.stderr and "Traceback" not in got.stderr
        assert "No verdict" in got.stderr

