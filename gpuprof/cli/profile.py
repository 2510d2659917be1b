"""The run itself: launch the program under the session, then build, save, show and gate the report."""

import os
import sys

from gpuprof.cli import error
from gpuprof.launch.errors import UsageProblem
from gpuprof.reporting.outputs import check_all


def profile(target=None, module=None, out=None, json_path=None, interval=None, probes=None, gpu=None, quiet=None,
            live=None, steps=None, warmup_steps=0, gate_config=None, junit=None, markdown=None,
            command_mode=False, python=None, verify=False, html=None, trace=None) -> int:
    """The run itself (the demo calls it too); returns the exit status. An option left None takes
    its value from [tool.gpuprof.run] in pyproject.toml, else gpuprof's default."""
    from gpuprof.cli.run_config import settle
    from gpuprof.launch.command import from_cli
    from gpuprof.launch.session import RunOptions, RunSession

    settings = settle({"out": out, "interval": interval, "probes": probes, "gpu": gpu, "live": live,
                       "quiet": quiet, "python": python})
    out, interval, probes, gpu = settings["out"], settings["interval"], settings["probes"], settings["gpu"]
    live, quiet, python = settings["live"], settings["quiet"], settings["python"]

    target = list(target or [])
    command = from_cli(target, module=module, command_mode=command_mode, python=python)
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
    show_live = (_isatty(sys.stderr) if live is None else live) and not quiet
    options = RunOptions(out=out, interval=interval, probes=probes, gpu=gpu, live=show_live,
                         max_steps=steps, warmup_steps=warmup_steps)
    session = RunSession(command, options, preload=lambda: preload_report(quiet))
    session.prepare()
    status_line = None
    if show_live:
        from gpuprof.cli.live import LiveStatus
        status_line = session.status_line = LiveStatus(events_dir=session.settings()["events_dir"])
    # Signals that arrive from here on stay held until gpuprof exits: a late Ctrl-C or SIGTERM never
    # cuts the report short or changes the exit status.
    outcome = session.execute()
    if status_line is not None:
        status_line.clear()
    report = finish(session, json_path, quiet)
    status = report["exit_code"] if report is not None else outcome.exit_status
    if verify and report is not None and status == 0:
        verify_estimates(session.run_dir, report, target=target, module=module, command_mode=command_mode,
                         python=python, gpu=gpu, quiet=quiet)
    if report is not None:
        write_pictures(session.run_dir, report, html=html, trace=trace)
    if gate_config is not None:
        if report is None:
            return status or 2
        from gpuprof.cli.gate import run_gate
        try:
            gate_status = run_gate(os.path.join(session.run_dir, "report.json"), report=report,
                                   config=gate_config, junit=junit, markdown=markdown)
        except UsageProblem as exc:
            error(str(exc))
            gate_status = 2
        return status or gate_status       # the program's own failure wins
    return status


VERIFY_ROUNDS, VERIFY_STEPS, VERIFY_WARMUP = 2, 20, 3


def verify_estimates(run_dir, report, target, module, command_mode, python, gpu, quiet) -> None:
    """`run --verify`: the input ceiling and the top fix measured by `gpuprof try` in short windows,
    printed next to the estimates. It never changes the run's exit status; what cannot be measured
    is said in one line."""
    from gpuprof.cli.try_ import try_changes

    advice = report.get("advice") or []
    applicable = [a for a in advice[:1] if a.get("change")]
    has_loader = bool(report.get("dataloaders"))
    if not has_loader and not applicable:
        error("--verify: nothing to measure: the program builds no DataLoader and its top fix needs a code change")
        return
    def keep_in_report(record) -> None:
        """The measured input share and the top fix's measured speed-up, saved with the report;
        a verdict the ceiling contradicts says so."""
        from gpuprof.reporting.save import save_in_run
        report["verified"] = {"try": os.path.join(run_dir, "verify", "try.json"),
                              "input_check": record.get("input_check"),
                              "rows": [{k: row.get(k) for k in ("label", "fix", "speedup", "speedup_min",
                                                                "speedup_max", "estimate")}
                                       for row in record.get("rows", [])[1:]]}
        check = record.get("input_check") or {}
        if check.get("corrected") and report.get("verdict"):
            report["verdict"]["corrected"] = check["corrected"]
        try:
            save_in_run(report, run_dir)
        except OSError as exc:
            error(f"--verify: could not save the measurements in {run_dir}: {exc.strerror or exc}")

    try:
        try_changes(target=target, module=module, input_ceiling=has_loader, top=1 if applicable else 0,
                    rounds=VERIFY_ROUNDS, steps=VERIFY_STEPS, warmup_steps=VERIFY_WARMUP,
                    out=os.path.join(run_dir, "verify"), gpu=gpu, python=python, quiet=quiet,
                    command_mode=command_mode, on_record=keep_in_report)
    except UsageProblem as exc:
        error(f"--verify: {exc}")


def write_pictures(run_dir: str, report: dict, html=None, trace=None) -> None:
    """--html and --trace, after the report (and --verify's measurements); a failure costs one line."""
    from gpuprof.reporting.outputs import try_write
    from gpuprof.reporting.pictures import picture_text
    for fmt, path, option in (("html", html, "--html"), ("trace", trace, "--trace")):
        if path is None:
            continue
        try:
            text = picture_text(run_dir, report, fmt)
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


def finish(session, json_path, quiet: bool):
    """Build, save and show the report; a failure here is stated in one line, never raised over the
    exit status, and never costs the other outputs."""
    from gpuprof.render.json_report import json_text
    from gpuprof.reporting.outputs import try_write
    from gpuprof.reporting.save import build, save_in_run, show

    run_dir = session.run_dir
    if session.save_error:
        error(f"could not save the run record in {run_dir} ({session.save_error}): "
              "the report is built from what remains")
    try:
        report = build(run_dir)
    except Exception as exc:  # the job's exit status must survive any reporting bug
        error(f"could not build the report for {run_dir}: {exc.__class__.__name__}: {exc}")
        return None
    try:
        save_in_run(report, run_dir)
    except OSError as exc:
        error(f"could not save report.json in {run_dir}: {exc.strerror or exc}")
    if not quiet:
        try:
            show(report)
        except Exception as exc:
            error(f"could not show the report (it is saved in {run_dir}): {exc}")
    if json_path is not None:
        try_write(json_path, json_text(report), "--json")
    return report


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False
