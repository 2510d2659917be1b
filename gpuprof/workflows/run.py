"""`gpuprof run`: launch the program under the session, then build, show, verify, save and gate the report."""

import os
import sys

from gpuprof.launch.errors import UsageProblem
from gpuprof.reporting.outputs import check_all
from gpuprof.workflows.messages import error


def profile(target=None, module=None, out=None, json_path=None, interval=None, probes=None, gpu=None, quiet=None,
            live=None, steps=None, warmup_steps=0, gate_config=None, junit=None, markdown=None,
            command_mode=False, python=None, verify=False, html=None, trace=None) -> int:
    """The run itself (the demo calls it too); returns the exit status. An option left None takes
    its value from [tool.gpuprof.run] in pyproject.toml, else gpuprof's default."""
    from gpuprof.workflows.run_config import settle
    from gpuprof.launch.command import from_cli
    from gpuprof.launch.session import RunOptions, RunSession

    settings = settle({"out": out, "interval": interval, "probes": probes, "gpu": gpu, "live": live,
                       "quiet": quiet, "python": python})
    out, interval, probes, gpu = settings["out"], settings["interval"], settings["probes"], settings["gpu"]
    live, quiet, python = settings["live"], settings["quiet"], settings["python"]

    target = list(target or [])
    command = from_cli(target, module=module, command_mode=command_mode, python=python)
    _check_options(interval, steps, warmup_steps, gate_config, json_path, junit, markdown, html, trace)
    show_live = (_isatty(sys.stderr) if live is None else live) and not quiet
    options = RunOptions(out=out, interval=interval, probes=probes, gpu=gpu, live=show_live,
                         max_steps=steps, warmup_steps=warmup_steps)
    session = RunSession(command, options, preload=lambda: preload_report(quiet))
    session.prepare()
    status_line = None
    if show_live:
        from gpuprof.workflows.live import LiveStatus
        status_line = session.status_line = LiveStatus(events_dir=session.settings()["events_dir"])
    # Signals that arrive from here on stay held until gpuprof exits: a late Ctrl-C or SIGTERM never
    # cuts the report short or changes the exit status.
    outcome = session.execute()
    if status_line is not None:
        status_line.clear()
    def measure(report):
        from gpuprof.workflows.verify import verify_estimates
        return verify_estimates(session.run_dir, report, target=target, module=module, command_mode=command_mode,
                                python=python, gpu=gpu, quiet=quiet)
    report = finish(session, json_path, quiet, measure=measure if verify else None)
    status = report["exit_code"] if report is not None else outcome.exit_status
    if report is not None:
        write_pictures(session.run_dir, report, html=html, trace=trace)
    if gate_config is not None:
        return _gated_status(session.run_dir, report, status, gate_config, junit, markdown)
    return status


def _check_options(interval, steps, warmup_steps, gate_config, json_path, junit, markdown, html, trace) -> None:
    """Refuse bad options, output paths and gate configs before the program is launched."""
    if not 0.01 <= interval <= 60:
        raise UsageProblem(f"--interval must be between 0.01 and 60 seconds, not {interval}")
    if steps is not None and steps < 1:
        raise UsageProblem(f"--steps must be at least 1, not {steps}")
    if warmup_steps < 0:
        raise UsageProblem(f"--warmup-steps must not be negative, not {warmup_steps}")
    if (junit or markdown) and not gate_config:
        raise UsageProblem("--junit and --markdown need --gate FILE")
    check_all((json_path, "--json"), (junit, "--junit"), (markdown, "--markdown"), (html, "--html"),
              (trace, "--trace"))
    if gate_config is not None:
        from gpuprof.gate import config as gate_settings
        from gpuprof.gate.errors import GateInputError
        try:
            gate_settings.load(gate_config)        # a bad gate config is refused before launching
        except GateInputError as exc:
            raise UsageProblem(str(exc))


def _gated_status(run_dir: str, report, status, gate_config, junit, markdown) -> int:
    """The exit status under --gate: the program's own failure wins, else the gate's verdict."""
    if report is None:
        return status or 2
    from gpuprof.workflows.gate import run_gate
    try:
        gate_status = run_gate(os.path.join(run_dir, "report.json"), report=report,
                               config=gate_config, junit=junit, markdown=markdown)
    except UsageProblem as exc:
        error(str(exc))
        gate_status = 2
    return status or gate_status       # the program's own failure wins


def write_pictures(run_dir: str, report: dict, html=None, trace=None) -> None:
    """--html and --trace, after the report (and --verify's measurements); a failure costs one line."""
    from gpuprof.reporting.outputs import try_write
    from gpuprof.reporting.pictures import report_text
    for fmt, path, option in (("html", html, "--html"), ("trace", trace, "--trace")):
        if path is None:
            continue
        try:
            text = report_text(run_dir, report, fmt)
        except Exception as exc:  # the job's exit status must survive any rendering bug
            error(f"could not build {option} for {run_dir}: {exc.__class__.__name__}: {exc}")
            continue
        try_write(path, text, option)


def preload_report(quiet: bool) -> None:
    """Import what building and showing the report needs, while the program runs."""
    import gpuprof.reporting.build  # noqa: F401
    import gpuprof.reporting.save  # noqa: F401
    if not quiet:
        import gpuprof.render.console  # noqa: F401


def finish(session, json_path, quiet: bool, measure=None):
    """Build, save and show the report; a failure here is stated in one line, never raised over the
    exit status, and never costs the other outputs. `measure(report) -> report` (run --verify)
    runs after the report is shown and before it is saved, so report.json is written once, with
    the measurements; it runs only when the program succeeded."""
    from gpuprof.render import formats
    from gpuprof.reporting.outputs import try_write
    from gpuprof.reporting.save import build, show

    run_dir = session.run_dir
    if session.save_error:
        error(f"could not save the run record in {run_dir} ({session.save_error}): "
              "the report is built from what remains")
    try:
        report = explain_missing_module(build(run_dir))
    except Exception as exc:  # the job's exit status must survive any reporting bug
        error(f"could not build the report for {run_dir}: {exc.__class__.__name__}: {exc}")
        return None
    measured = measure is not None and report.get("exit_code") == 0
    if not measured:
        _save(report, run_dir)
    if not quiet:
        try:
            show(report)
        except Exception as exc:
            error(f"could not show the report (it is kept in {run_dir}): {exc}")
    if measured:
        try:
            report = measure(report)
        finally:
            _save(report, run_dir)
    if json_path is not None:
        try_write(json_path, formats.render("json", report), "--json")
    return report


def explain_missing_module(report: dict) -> dict:
    """A program that failed to import a module gpuprof's own interpreter has: it ran under another
    interpreter (the first python on PATH, as `python train.py` would in this shell). The report's
    first note says which ran it, which has the module, and how to use that one."""
    import importlib.util
    interpreter = report.get("interpreter") or {}
    module = interpreter.get("missing_module")
    if not module or not report.get("exit_code") or interpreter.get("same_environment", True):
        return report
    try:
        found = importlib.util.find_spec(module.split(".", 1)[0]) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return report
    own = interpreter.get("gpuprof") or sys.executable
    note = (f"the program could not import {module}: it ran under {interpreter.get('path')}, which does not have "
            f"it; gpuprof's own interpreter {own} does. gpuprof runs the first python on PATH, as `python train.py` "
            f"would: activate that environment, or run `gpuprof run --python {own} ...`")
    return dict(report, notes=[note] + list(report.get("notes") or []))


def _save(report: dict, run_dir: str) -> None:
    from gpuprof.reporting.save import save_in_run
    try:
        save_in_run(report, run_dir)
    except OSError as exc:
        error(f"could not save report.json in {run_dir}: {exc.strerror or exc}")


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False
