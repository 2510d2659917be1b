"""The `gpuprof` command line: a Typer app with one module per subcommand.

`main()` turns every usage problem into one line on stderr and exit status 2; it never shows a
gpuprof traceback for bad input. A plain `gpuprof run ...` line is read without importing Typer
(gpuprof.commands.cli.run_args), so the program starts sooner; anything else, help and mistakes included,
goes through the Typer app."""

import sys

from gpuprof.errors import UsageProblem
from gpuprof.commands.workflows.messages import error


def main(argv=None) -> None:
    _fill_closed_stdio()
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        result = _run_without_typer(args)
        if result is None:
            result = _run_with_typer(args)
    except UsageProblem as exc:
        error(str(exc))
        sys.exit(2)
    except KeyboardInterrupt:       # Ctrl-C before the program started or outside a run
        sys.exit(130)
    from gpuprof.capture.launch.exit_status import die_like
    die_like(result)                # a job that died of a signal: gpuprof dies of it too
    sys.exit(result if isinstance(result, int) else 0)


def _run_without_typer(args):
    """The exit status of a `run` whose command line needs no Typer, or None."""
    from gpuprof.commands.cli.run_args import read_run_args

    options = read_run_args(args)
    if options is None:
        return None
    from gpuprof.commands.workflows.options import RunRequest
    from gpuprof.commands.workflows.run import profile
    return profile(RunRequest(**options))


def _run_with_typer(args):
    from gpuprof.commands.cli.app import app, register_commands

    register_commands()
    try:
        return app(args=args, prog_name="gpuprof", standalone_mode=False)
    except UsageProblem:
        raise
    except Exception as exc:
        # Typer vendors click in recent versions and uses click itself in older ones: recognise
        # click-style exceptions by what they carry, not by the module they come from.
        kind = type(exc).__name__
        if kind == "Exit":
            sys.exit(getattr(exc, "exit_code", 0))
        if kind == "Abort":
            sys.exit(130)
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            message = exc.format_message() or "bad usage"
            error(message.splitlines()[0])
            sys.exit(2)
        raise


def _fill_closed_stdio() -> None:
    """A closed stdin, stdout or stderr (`2>&-`) becomes /dev/null for gpuprof alone: opened
    close-on-exec, so the program still starts with that descriptor closed, as under plain python,
    and none of gpuprof's own files can take its number."""
    import os
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            opened = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        if opened != fd:
            os.dup2(opened, fd, inheritable=False)
            os.close(opened)
        setattr(sys, name, open(fd, mode, closefd=False))
