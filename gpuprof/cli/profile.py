"""The run itself: launch the program under the session, then build, save, show and gate the report."""

import os
import signal
import sys

from gpuprof.cli import error
from gpuprof.launch.errors import UsageProblem


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
    import gpuprof.reporting.build  # noqa: F401
    import gpuprof.reporting.save  # noqa: F401
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


def validate_outputs(*pairs) -> None:
    for path, option in pairs:
        if path is not None:
            check_writable_file(path, option)


def finish(run_dir: str, json_path, quiet: bool):
    """Build, save and show the report; a failure here is stated, never raised over the exit status."""
    from gpuprof.reporting.save import build_and_save, show
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
