"""`gpuprof run`: profile a training command and report why the GPU waits."""

import os
import signal
import sys
from typing import List, Optional

import typer
from typer.core import TyperCommand

from gpuprof.cli import app, error
from gpuprof.launch.errors import UsageProblem


class RunCommand(TyperCommand):
    """Everything from the script (or after -m MODULE, or after --) belongs to the user's program,
    even words that look like gpuprof options, exactly as `python` treats its own command line."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, split_user_args(args, self._value_options()))

    def _value_options(self) -> set:
        names = set()
        for param in self.params:
            if getattr(param, "param_type_name", "") == "option" and not getattr(param, "is_flag", False) \
                    and not getattr(param, "count", False):
                names.update(param.opts)
        return names


def split_user_args(args, value_options) -> list:
    """Insert `--` where gpuprof's options end, marking the `-- COMMAND` form with --command-mode."""
    out = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return out + ["--command-mode", "--"] + args[i + 1:]
        if arg in ("-m", "--module"):
            return out + args[i:i + 2] + ["--"] + args[i + 2:]
        if arg.startswith("--module="):
            return out + ["--module", arg.split("=", 1)[1], "--"] + args[i + 1:]
        if arg.startswith("-m") and not arg.startswith("--"):
            return out + ["-m", arg[2:], "--"] + args[i + 1:]
        if not arg.startswith("-") or arg == "-":
            return out + ["--"] + args[i:]
        out.append(arg)
        if "=" not in arg and arg in value_options and i + 1 < len(args):
            out.append(args[i + 1])
            i += 1
        i += 1
    return out


@app.command(cls=RunCommand, context_settings={"help_option_names": ["-h", "--help"]})
def run(
    target: Optional[List[str]] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                                 help="The training script and its arguments."),
    module: Optional[str] = typer.Option(None, "-m", "--module", metavar="MODULE",
                                         help="Run a module, as `python -m MODULE ARGS`."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Run folder for samples and events [default: gpuprof-runs/<script>-<time>]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the report as JSON."),
    interval: float = typer.Option(0.1, "--interval", metavar="SECONDS", help="System sampling interval."),
    probes: bool = typer.Option(True, "--probes/--no-probes", help="Probes inside the job (DataLoader, copies, steps)."),
    gpu: bool = typer.Option(True, "--gpu/--no-gpu", help="Sample GPUs through NVML."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report (files are still written)."),
    live: Optional[bool] = typer.Option(None, "--live/--no-live", help="Live status line [default: when stderr is a terminal]."),
    steps: Optional[int] = typer.Option(None, "--steps", metavar="N", help="Stop after N measured steps, as a Ctrl-C would (exit 0)."),
    warmup_steps: int = typer.Option(0, "--warmup-steps", metavar="K", help="Steps to leave out of the figures (after the first)."),
    gate_config: Optional[str] = typer.Option(None, "--gate", metavar="FILE", help="Gate the run with the thresholds in FILE (TOML, [tool.gpuprof.gate])."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="With --gate: write JUnit XML."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="With --gate: write a Markdown summary."),
    command_mode: bool = typer.Option(False, "--command-mode", hidden=True),
):
    """Run SCRIPT (or -m MODULE, or -- COMMAND) unchanged and report why the GPU waits.

    gpuprof exits with the program's own exit status (128+N if it died of signal N)."""
    return profile(target=target, module=module, out=out, json_path=json_path, interval=interval, probes=probes,
                   gpu=gpu, quiet=quiet, live=live, steps=steps, warmup_steps=warmup_steps, gate_config=gate_config,
                   junit=junit, markdown=markdown, command_mode=command_mode)


def profile(target=None, module=None, out=None, json_path=None, interval=0.1, probes=True, gpu=True, quiet=False,
            live=None, steps=None, warmup_steps=0, gate_config=None, junit=None, markdown=None,
            command_mode=False) -> int:
    """The run itself, with plain defaults (the demo calls it too); returns the exit status."""
    from gpuprof.launch.command import resolve
    from gpuprof.launch.session import RunOptions, RunSession

    target = list(target or [])
    if command_mode:
        command = resolve(command=target)
    elif module is not None:
        command = resolve(module=module, args=target)
    elif target:
        command = resolve(script=target[0], args=target[1:])
    else:
        raise UsageProblem("nothing to run: give a SCRIPT, -m MODULE, or -- COMMAND")
    if not 0.01 <= interval <= 60:
        raise UsageProblem(f"--interval must be between 0.01 and 60 seconds, not {interval}")
    if json_path is not None:
        check_writable_file(json_path, "--json")
    if steps is not None and steps < 1:
        raise UsageProblem(f"--steps must be at least 1, not {steps}")
    if warmup_steps < 0:
        raise UsageProblem(f"--warmup-steps must not be negative, not {warmup_steps}")
    if (junit or markdown) and not gate_config:
        raise UsageProblem("--junit and --markdown need --gate FILE")
    if gate_config is not None:
        from gpuprof.cli.gate import validate_outputs
        from gpuprof.gate import config as gate_settings
        from gpuprof.gate.errors import GateInputError
        try:
            gate_settings.load(gate_config)        # a bad gate config is refused before launching
        except GateInputError as exc:
            raise UsageProblem(str(exc))
        validate_outputs((junit, "--junit"), (markdown, "--markdown"))
    show_live = (sys.stderr.isatty() if live is None else live) and not quiet
    status_line = None
    if show_live:
        from gpuprof.cli.live import LiveStatus
        status_line = LiveStatus()
    options = RunOptions(out=out, interval=interval, probes=probes, gpu=gpu, live=show_live,
                         max_steps=steps, warmup_steps=warmup_steps)
    session = RunSession(command, options, status_line=status_line, preload=lambda: preload_report(quiet))
    session.prepare()
    outcome = session.execute()
    if status_line is not None:
        status_line.clear()
    with quiet_signals():
        report = finish(session.run_dir, json_path, quiet)
        status = report["exit_code"] if report is not None else outcome.exit_status
        if gate_config is not None:
            if report is None:
                return status or 2
            from gpuprof.cli.gate import run_gate
            gate_status = run_gate(os.path.join(session.run_dir, "report.json"), report=report,
                                   config=gate_config, junit=junit, markdown=markdown)
            return status or gate_status       # the program's own failure wins
    return status


def preload_report(quiet: bool) -> None:
    """Import what building and showing the report needs, while the program runs."""
    import gpuprof.cli.report  # noqa: F401
    import gpuprof.reporting.build  # noqa: F401
    if not quiet:
        import gpuprof.render.console  # noqa: F401


def check_writable_file(path: str, option: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageProblem(f"cannot write {option} {path}: it is a folder")
    if not os.path.isdir(parent):
        raise UsageProblem(f"cannot write {option} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageProblem(f"cannot write {option} {path}: permission denied")


def finish(run_dir: str, json_path, quiet: bool):
    """Build, save and show the report; a failure here is stated, never raised over the exit status."""
    from gpuprof.cli.report import build_and_save, show
    try:
        report = build_and_save(run_dir, json_path)
    except Exception as exc:  # the job's exit status must survive any reporting bug
        error(f"could not build the report for {run_dir}: {exc.__class__.__name__}: {exc}")
        return None
    if not quiet:
        try:
            show(report)
        except Exception as exc:
            error(f"could not show the report (it is saved in {run_dir}): {exc}")
    return report


class quiet_signals:
    """While the report is written, a late Ctrl-C or SIGTERM does not cut it short."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __enter__(self):
        self.previous = {s: signal.signal(s, lambda *_: None) for s in self.SIGNALS}

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
