"""`gpuprof run`'s command line read without Typer gives profile() exactly the request the Typer
command gives it, and leaves every line it cannot read that way to Typer."""

import dataclasses

import pytest

from gpuprof.commands.workflows.options import RunRequest
from gpuprof.commands.cli.run_args import FLAGS, MODULE_OPTIONS, VALUE_OPTIONS, read_run_args

LINES = [
    ["run", "train.py"],
    ["run", "train.py", "--out", "x", "-q", "--lr=1"],
    ["run", "--out", "runs", "-q", "--json", "r.json", "train.py", "--epochs", "2"],
    ["run", "--out=runs", "--interval=0.5", "--steps", "20", "--warmup-steps=3", "t.py"],
    ["run", "--no-probes", "--no-gpu", "--live", "t.py", "--", "x"],
    ["run", "--probes", "--gpu", "--no-live", "--quiet", "t.py"],
    ["run", "-m", "pkg.train", "--out", "x"],
    ["run", "-mpkg.train", "a", "b"],
    ["run", "--module=pkg.train"],
    ["run", "-q", "--module", "pkg", "-q"],
    ["run", "-q", "--", "torchrun", "--nproc", "2", "t.py"],
    ["run", "--gate", "g.toml", "--junit", "j.xml", "--markdown", "m.md", "t.py"],
    ["run", "--interval", "1e-1", "t.py"],
    ["run", "--out", "a", "--out", "b", "t.py"],
    ["run", "-", "x"],
]

TYPER_ONLY = [
    ["run"], ["run", "--help"], ["run", "-h"], ["run", "--bogus", "t.py"], ["run", "--interval", "fast", "t.py"],
    ["run", "--steps", "2.5", "t.py"], ["run", "--out"], ["run", "--"], ["run", "-qm", "pkg"], ["report", "x"],
    ["run", "--quiet=yes", "t.py"], ["run", "--command-mode", "t.py"], [], ["--help"],
]


def _typer_kwargs(monkeypatch, line):
    from gpuprof.commands.cli import run as run_command
    from gpuprof.commands.cli.app import app, register_commands

    register_commands()
    seen = {}
    monkeypatch.setattr(run_command, "profile", lambda request: seen.update(dataclasses.asdict(request)) or 0)
    app(args=line, prog_name="gpuprof", standalone_mode=False)
    return seen


def _normal(fields):
    request = RunRequest(**fields)
    return dataclasses.asdict(dataclasses.replace(request, target=list(request.target or [])))


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_read_as_typer_reads_it(monkeypatch, line):
    fast = read_run_args(line)
    assert fast is not None, "this line should start without Typer"
    assert _normal(fast) == _normal(_typer_kwargs(monkeypatch, line))


@pytest.mark.parametrize("line", TYPER_ONLY, ids=" ".join)
def test_lines_it_cannot_read_exactly_go_to_typer(line):
    assert read_run_args(line) is None


def test_every_option_of_the_typer_command_is_known():
    from gpuprof.commands.cli import run as run_command
    from gpuprof.commands.cli.app import app, register_commands
    import typer.main

    register_commands()
    command = typer.main.get_command(app).commands["run"]
    known = set(VALUE_OPTIONS) | set(FLAGS) | set(MODULE_OPTIONS) | {"--command-mode", "--help", "-h"}
    for param in command.params:
        for name in list(getattr(param, "opts", [])) + list(getattr(param, "secondary_opts", [])):
            if name.startswith("-"):
                assert name in known, f"{name} is an option of `gpuprof run` that run_args does not know"
    assert run_command.run is not None


def test_the_run_path_imports_no_typer():
    """A plain `gpuprof run` starts the program before Typer could even be imported: none of the
    modules on its path may import it."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import gpuprof.commands.cli, gpuprof.commands.workflows.run, gpuprof.commands.cli.run_args, gpuprof.capture.launch.session\n"
            "import gpuprof.present.reporting.save, gpuprof.present.reporting.build, gpuprof.present.render.console\n"
            "print('typer' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
