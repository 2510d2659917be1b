"""The Typer app every subcommand module adds its command to."""

import typer
from typer.core import TyperCommand

import gpuprof
from gpuprof.launch.errors import UsageProblem

app = typer.Typer(
    name="gpuprof",
    help="Why is my GPU idle? Profile a training run without changing its code.",
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Command(TyperCommand):
    """Usage lines as people write them: `gpuprof gate [OPTIONS] REPORT`, not `{REPORT}`."""

    def collect_usage_pieces(self, ctx):
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]


def _show_version(value: bool) -> None:
    if value:
        print(f"gpuprof {gpuprof.__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                       help="Show gpuprof's version and exit.")) -> None:
    if ctx.invoked_subcommand is None:
        raise UsageProblem("missing command; try 'gpuprof --help'")


def register_commands() -> None:
    from gpuprof.cli import demo, gate, report, run, try_  # noqa: F401  (each module adds its command)
