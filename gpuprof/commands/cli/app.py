"""The Typer app, and the one place that adds each subcommand module's command to it."""

import typer
from typer.core import TyperCommand, TyperGroup

from gpuprof.package import __version__
from gpuprof.commands.cli.help_format import HelpContext
from gpuprof.errors import UsageProblem

class _Group(TyperGroup):
    """The command list's help, wrapped as every command's (gpuprof.commands.cli.help_format)."""

    context_class = HelpContext


app = typer.Typer(
    name="gpuprof",
    cls=_Group,
    help="Why is my GPU idle? Profile a training run without changing its code.",
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Command(TyperCommand):
    """Usage lines as people write them: `gpuprof gate [OPTIONS] REPORT`, not `{REPORT}`; help
    wrapped at spaces, never inside a path (gpuprof.commands.cli.help_format)."""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx):
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]


def _show_version(value: bool) -> None:
    if value:
        print(f"gpuprof {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                       help="Show gpuprof's version and exit.")) -> None:
    if ctx.invoked_subcommand is None:
        raise UsageProblem("missing command; try 'gpuprof --help'")


class RunCommand(Command):
    """Everything from the script (or after -m MODULE, or after --) belongs to the user's program,
    even words that look like gpuprof options, exactly as `python` treats its own command line."""

    def parse_args(self, ctx, args):
        from gpuprof.commands.cli.run_args import split_user_args
        return super().parse_args(ctx, split_user_args(args, self._value_options()))

    def _value_options(self) -> set:
        names = set()
        for param in self.params:
            if getattr(param, "param_type_name", "") == "option" and not getattr(param, "is_flag", False) \
                    and not getattr(param, "count", False):
                names.update(param.opts)
        return names


_registered = []


def register_commands() -> None:
    """Add each subcommand (one module each, none importing another) to the app, once."""
    if _registered:
        return
    from gpuprof.commands.cli import attach, compare, demo, doctor, gate, report, run, try_, tune
    help_options = {"help_option_names": ["-h", "--help"]}
    app.command(cls=RunCommand, context_settings=help_options)(run.run)
    app.command(name="try", cls=RunCommand, context_settings=help_options)(try_.try_)
    app.command(name="tune", cls=RunCommand, context_settings=help_options)(tune.tune)
    app.command(cls=Command)(report.report)
    app.command(cls=Command)(gate.gate)
    app.command(cls=Command)(compare.compare)
    app.command(cls=Command)(attach.attach)
    app.command(cls=Command)(doctor.doctor)
    app.command(cls=Command)(demo.demo)
    _registered.append(True)
