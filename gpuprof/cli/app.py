"""The Typer app every subcommand module adds its command to."""

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


def register_commands() -> None:
    from gpuprof.cli import demo, gate, report, run  # noqa: F401  (each module adds its command)
