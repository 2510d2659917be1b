"""The `gpuprof` command line: a Typer app with one module per subcommand.

`main()` turns every usage problem into one line on stderr and exit status 2; it never shows a
gpuprof traceback for bad input."""

import sys

import typer

from gpuprof.launch.errors import UsageProblem

app = typer.Typer(
    name="gpuprof",
    help="Why is my GPU idle? Profile a training run without changing its code.",
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        raise UsageProblem("missing command; try 'gpuprof --help'")


def _register() -> None:
    from gpuprof.cli import demo, gate, report, run  # noqa: F401  (each module adds its command)


def error(message: str) -> None:
    sys.stderr.write(f"gpuprof: error: {message}\n")


def main(argv=None) -> None:
    _register()
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        result = app(args=args, prog_name="gpuprof", standalone_mode=False)
    except UsageProblem as exc:
        error(str(exc))
        sys.exit(2)
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
    sys.exit(result if isinstance(result, int) else 0)
