"""`gpuprof run`: launch the program under the session, then build, show, verify, save and gate the report."""

import os
import sys
import time

from gpuprof.errors import UsageProblem
from gpuprof.capture.launch.exit_status import JobStatus
from gpuprof.present.reporting.outputs import check_all
from gpuprof.commands.workflows.messages import error
from gpuprof.commands.workflows.options import RunRequest


def profile(request: RunRequest) -> int:
    """The run itself (the demo calls it too); returns the exit status: the program's own (a
    JobStatus that remembers a deadly signal), or 2 under `strict` when it succeeded but a report
    file could not be written. An option left None takes its value from [tool.gpuprof.run] in
    pyproject.toml, else gpuprof's default."""
    from gpuprof.capture.launch.command import from_cli
    from gpuprof.capture.launch.session import RunOptions, RunSession

    peak_by = "--peak-tflops" if request.peak_tflops is not None else "[tool.gpuprof.run] peak_tflops"
    request = request.settled()
    _check_prices(request.peak_tflops, request.price_per_gpu_hour)
    command = from_cli(request.target, module=request.module, command_mode=request.command_mode,
                       python=request.python)
    _check_options(request)
    quiet = request.quiet
    show_live = (_isatty(sys.stderr) if request.live is None else request.live) and not quiet
    options = RunOptions(out=request.out, interval=request.interval, probes=request.probes, gpu=request.gpu,
                         live=show_live, max_steps=request.steps, warmup_steps=request.warmup_steps)
    session = RunSession(command, options, preload=lambda: preload_report(quiet))
    session.prepare()
    status_line = None
    if show_live:
        from gpuprof.commands.workflows.live import LiveStatus
        status_line = session.status_line = LiveStatus(events_dir=session.settings()["events_dir"])
    from gpuprof.commands.workflows import efficiency_inputs
    energy_before, started = efficiency_inputs.host_energy_reading(), time.monotonic()
    # Signals that arrive from here on stay held until gpuprof exits: a late Ctrl-C or SIGTERM never
    # cuts the report short or changes the exit status.
    outcome = session.execute()
    if status_line is not None:
        status_line.clear()
    efficiency_inputs.settle(session.run_dir, request.peak_tflops, peak_by, request.price_per_gpu_hour,
                             efficiency_inputs.host_energy_between(
                                 energy_before, efficiency_inputs.host_energy_reading(), time.monotonic() - started))
    def measure(report):
        from gpuprof.commands.workflows.verify import verify_estimates
        return verify_estimates(session.run_dir, report, request)
    lost = []
    report = finish(session, request.json_path, quiet, measure=measure if request.verify else None, lost=lost)
    if report is not None:
        write_pictures(session.run_dir, report, html=request.html, trace=request.trace, lost=lost)
    return _final_status(session.run_dir, report, job_status(report, outcome), lost, request.strict,
                         request.gate_config, request.junit, request.markdown)


def _check_prices(peak_tflops, price) -> None:
    if peak_tflops is not None and not peak_tflops > 0:
        raise UsageProblem(f"--peak-tflops must be a positive number of TFLOPS, not {peak_tflops}")
    if price is not None and not price >= 0:
        raise UsageProblem(f"--price-per-gpu-hour must not be negative, not {price}")


def _final_status(run_dir, report, status, lost, strict, gate_config, junit, markdown) -> int:
    """--strict: 2 when the program succeeded but a report file was lost; --gate: the gate's
    verdict when the program succeeded; otherwise the program's own status."""
    if strict and lost and not status:
        return 2
    if gate_config is not None:
        return _gated_status(run_dir, report, status, gate_config, junit, markdown)
    return status


def job_status(report, outcome) -> JobStatus:
    """The job's own status, never what became of the report's files: the report's (a `--steps`
    stop that ended in a SIGINT is a planned 0) when it has one, else the supervisor's."""
    code = report.get("exit_code") if report is not None else None
    if not isinstance(code, int):
        code = outcome.exit_status
    return JobStatus(code, outcome.died_of if code == outcome.exit_status else None)


def _check_options(request: RunRequest) -> None:
    """Refuse bad options, output paths and gate configs before the program is launched."""
    interval, steps, warmup_steps, gate_config = request.interval, request.steps, request.warmup_steps, \
        request.gate_config
    json_path, junit, markdown, html, trace = request.json_path, request.junit, request.markdown, request.html, \
        request.trace
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
    from gpuprof.commands.workflows.gate import run_gate
    try:
        gate_status = run_gate(os.path.join(run_dir, "report.json"), report=report,
                               config=gate_config, junit=junit, markdown=markdown)
    except UsageProblem as exc:
        error(str(exc))
        gate_status = 2
    return status or gate_status       # the program's own failure wins


def write_pictures(run_dir: str, report: dict, html=None, trace=None, lost=None) -> None:
    """--html and --trace, after the report (and --verify's measurements); a failure costs one line
    (and is added to `lost`)."""
    from gpuprof.present.reporting.outputs import try_write
    from gpuprof.present.reporting.pictures import report_text
    for fmt, path, option in (("html", html, "--html"), ("trace", trace, "--trace")):
        if path is None:
            continue
        try:
            text = report_text(run_dir, report, fmt)
        except Exception as exc:  # the job's exit status must survive any rendering bug
            error(f"could not build {option} for {run_dir}: {exc.__class__.__name__}: {exc}")
            _note_lost(lost, option)
            continue
        if not try_write(path, text, option):
            _note_lost(lost, option)


def preload_report(quiet: bool) -> None:
    """Import what building and showing the report needs, while the program runs."""
    import gpuprof.present.reporting.build  # noqa: F401
    import gpuprof.present.reporting.save  # noqa: F401
    if not quiet:
        import gpuprof.present.render.console  # noqa: F401


def finish(session, json_path, quiet: bool, measure=None, lost=None):
    """Build, save and show the report; a failure here is stated in one line, never raised over the
    exit status, and never costs the other outputs; each file that could not be written is added
    to `lost`. `measure(report) -> report` (run --verify) runs after the report is shown and before
    it is saved, so report.json is written once, with the measurements; it runs only when the
    program succeeded."""
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.outputs import try_write
    from gpuprof.present.reporting.save import build, show

    run_dir = session.run_dir
    unwritten = [_record_failure(session)] if session.save_error else []
    try:
        report = explain_missing_module(build(run_dir))
    except Exception as exc:  # the job's exit status must survive any reporting bug
        _say_unwritten(unwritten, run_dir, lost)
        error(f"could not build the report for {run_dir}: {exc.__class__.__name__}: {exc}")
        _note_lost(lost, "report.json")
        return None
    measured = measure is not None and report.get("exit_code") == 0
    if not measured:
        _save(report, run_dir, unwritten)
    if not quiet:
        try:
            show(report)
        except Exception as exc:
            error(f"could not show the report (it is kept in {run_dir}): {exc}")
    if measured:
        try:
            report = measure(report)
        finally:
            _save(report, run_dir, unwritten)
    _say_unwritten(unwritten, run_dir, lost)
    if json_path is not None and not try_write(json_path, formats.render("json", report), "--json"):
        _note_lost(lost, "--json")
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


def _save(report: dict, run_dir: str, unwritten: list) -> None:
    from gpuprof.present.reporting.save import save_in_run
    try:
        save_in_run(report, run_dir)
    except OSError as exc:
        unwritten.append(("report.json", exc.strerror or str(exc)))


def _record_failure(session) -> tuple:
    """(what, why) of the run record's failed write; attach's session says only why."""
    return getattr(session, "save_failure", None) or ("the run record", session.save_error)


def _say_unwritten(unwritten: list, run_dir: str, lost) -> None:
    """One line for every file of the run folder that could not be written (a full disk costs the
    run record and report.json alike): what, where, why."""
    if not unwritten:
        return
    names = list(dict.fromkeys(name for name, _ in unwritten))
    reasons = list(dict.fromkeys(why for _, why in unwritten))
    what = " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]
    shown = "; the report shown is built from what was written" if "report.json" not in names else ""
    error(f"could not write {what} in {run_dir}: {'; '.join(reasons)}{shown}")
    for name in names:
        _note_lost(lost, name)
    unwritten.clear()


def _note_lost(lost, what: str) -> None:
    if lost is not None:
        lost.append(what)


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False
