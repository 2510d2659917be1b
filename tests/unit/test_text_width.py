"""Every line of gpuprof's text output fits the width a log or a pipe gets: COLUMNS when set, else
100 (the console report of every golden run, the try table from a saved record, the gate's table,
the doctor's lines and tables, and --help), and code snippets stay valid Python when they are
broken to fit."""

import ast
import contextlib
import io
import json
import os
import re
import subprocess

import pytest

from gpuprof.present.render import formats
from gpuprof.present.render.code_fit import fit_code
from gpuprof.present.render.text_width import text_width
from tests.golden import outputs


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def golden_reports():
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    for name in outputs.run_names():
        yield name, build_report(load_run(os.path.join(outputs.RUNS, name)), run_dir=outputs.RUN_DIR)


def saved_try() -> dict:
    with open(outputs.TRY_RECORD, "r", encoding="utf-8") as handle:
        return json.load(handle)


def test_the_width_is_columns_else_100_on_a_pipe(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert text_width(terminal=False) == 100
    monkeypatch.setenv("COLUMNS", "72")
    assert text_width(terminal=False) == 72 and text_width(terminal=True) == 72
    assert text_width(terminal=False, width=130) == 130
    monkeypatch.setenv("COLUMNS", "wide")
    assert text_width(terminal=False) == 100


@pytest.mark.parametrize("columns", [None, "80", "60"])
def test_every_golden_console_report_fits(monkeypatch, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    limit = int(columns or 100)
    for name, report in golden_reports():
        plain = formats.render("console", report)
        assert widest(plain) <= limit and "…" not in plain, name        # wrapped or folded, never cut
        coloured = formats.render("console", report, terminal=True, width=limit)
        assert widest(re.sub(r"\x1b\[[0-9;]*m", "", coloured)) <= limit, name


@pytest.mark.parametrize("columns", [None, "72", "200"])
def test_the_try_table_fits_and_keeps_every_cell_whole(monkeypatch, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    record = saved_try()
    text = formats.render("try-console", record)
    assert widest(text) <= int(columns or 100)
    flat = " ".join(text.split())
    for row in record["rows"]:
        assert row["label"] in flat           # labels are neither cut nor dropped
    assert "63.93x (58.54-69.32)" in flat


def test_a_snippet_line_is_broken_only_where_python_carries_on():
    lines = [("model = torch.nn.parallel.DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])", 80),
             ("optimizer.zero_grad(); loss.backward(); optimizer.step()   # one step", 50),
             ("cache = np.lib.format.open_memmap('cache.npy', mode='w+', dtype=np.uint8, shape=(N, C, H, W))", 60)]
    for line, width in lines:
        pieces = fit_code("    " + line, width)
        assert max(len(piece) for piece in pieces) <= width and len(pieces) > 1
        assert ast.dump(ast.parse(line)) == ast.dump(ast.parse("\n".join(p[4:] for p in pieces)))
    header = "for x, y in loader: step(x); log(y)          # a compound statement's body stays on its line"
    assert fit_code(header, 40)[-1] == "for x, y in loader: step(x); log(y)"


class Cli:
    """What `gpuprof ARGS` gives (exit status, stdout, stderr), run in this process: the width is
    click's, read from COLUMNS as each command renders, so it matches a fresh `python -m gpuprof`
    byte for byte (the integration tests start the real one)."""

    def __init__(self, monkeypatch):
        self.monkeypatch = monkeypatch

    def __call__(self, *args, columns=None):
        from gpuprof.commands.cli import main
        if columns:
            self.monkeypatch.setenv("COLUMNS", columns)
        else:
            self.monkeypatch.delenv("COLUMNS", raising=False)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
            main(list(args))
        return subprocess.CompletedProcess(args, done.value.code or 0, out.getvalue(), err.getvalue())


@pytest.fixture
def run_cli(monkeypatch):
    return Cli(monkeypatch)


@pytest.mark.parametrize("columns", [None, "70"])
def test_the_gate_table_fits_a_pipe(tmp_path, columns, run_cli):
    report = os.path.join(outputs.EXPECTED, "cpu_starved", "report.json")
    baseline = os.path.join(outputs.EXPECTED, "memmap_batcher", "report.json")
    (tmp_path / "gate.toml").write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.1\n")
    got = run_cli("gate", report, "--config", str(tmp_path / "gate.toml"), "--baseline", baseline, "--force",
                  "--max-regression", "0.1", "--min-gpu-util", "0.5", "--max-p90-step", "0.001", columns=columns)
    assert got.returncode == 1, got.stderr
    assert "gate failed" in got.stderr and widest(got.stderr) <= int(columns or 100)


def test_the_doctor_s_lines_and_table_wrap_to_the_width():
    from gpuprof.commands.doctor.lines import NONE, Line, Section, render
    long = "torch 2.13.0+cpu in /a/rather/long/path/to/python (the python `gpuprof run` starts): " * 3
    text = render([Section("torch", [Line(NONE, long, detail=[long])])], width=60)
    assert widest(text) <= 60 and " ".join(text.split()).count("/a/rather/long/path/to/python") == 6


@pytest.mark.parametrize("command", ["", "run", "try", "report", "gate", "attach", "doctor", "demo"])
def test_help_fits_and_never_cuts_a_path(command, run_cli):
    args = [command, "--help"] if command else ["--help"]
    for columns in (None, "60"):
        got = run_cli(*args, columns=columns)
        assert got.returncode == 0 and widest(got.stdout) <= int(columns or 80), (command, columns)
        if command in ("run", "try", "attach", "demo"):
            assert "~/.local/state/gpuprof/runs" in got.stdout, (command, columns)


def test_attach_help_states_each_default_once(run_cli):
    text = " ".join(run_cli("attach", "--help").stdout.split())
    assert text.count("[default: 25") == 1 and text.count("[default: gpu]") == 1


def test_the_doctor_s_scenario_table_gives_way_to_one_block_per_scenario_when_narrow():
    from gpuprof.commands.doctor import expectations, table
    from tests.unit.test_doctor import MACHINE, Expect, Outcome, Scenario, report
    outcome = Outcome(Scenario("copy-bound-pageable-staging", "p.py", Expect("input.cpu", gpu=1)), machine=MACHINE,
                      expected_uuid=MACHINE.uuid(1), folder="/tmp/kept/01-copy-bound-pageable-staging")
    outcome.checks = expectations.compare(outcome.scenario.expect, report(), MACHINE, outcome.expected_uuid)
    outcome.readings = expectations.readings(report(), outcome.expected_uuid)
    wide, narrow = table.render([outcome]), table.render([outcome], width=60)
    assert widest(wide) > 100 and widest(narrow) <= 60
    flat = " ".join(narrow.split())
    assert "copy-bound-pageable-staging: expected input.cpu, found compute, agrees NO" in flat
    assert "2.0 ms / 50 ms" in flat and "/tmp/kept/01-copy-bound-pageable-staging" in narrow
