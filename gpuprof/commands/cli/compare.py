"""`gpuprof compare A B`: its command line (the workflow is gpuprof.commands.workflows.compare)."""

from typing import Optional

import typer


def compare(
    run_a: str = typer.Argument(..., metavar="A", help="The baseline: a run folder, a report JSON, or a try folder "
                                                       "(its baseline runs)."),
    run_b: str = typer.Argument(..., metavar="B", help="The run compared with A, given the same ways."),
    fmt: str = typer.Option("console", "--format", "-f", metavar="FORMAT",
                            help="console, markdown (for a pull-request comment) or json (gpuprof.compare/1)."),
    output: Optional[str] = typer.Option(None, "--output", "--out", "-o", metavar="FILE",
                                         help="Write the comparison to FILE instead of stdout."),
    fail_if_slower: Optional[float] = typer.Option(None, "--fail-if-slower", metavar="PCT",
                                                   help="Exit 1 when B's step time is more than PCT percent slower "
                                                        "than A's and the change is beyond the noise of the two "
                                                        "(the gate's regression check)."),
    force: bool = typer.Option(False, "--force", help="Compare runs of two different programs."),
):
    """Two runs side by side: step times and their noise, faster, slower or within noise, the
    verdicts and phase shares, what changed between them and the fixes they were made with.

    Exit 0 whatever the result, unless --fail-if-slower is given; 2 on bad input."""
    from gpuprof.commands.workflows.compare import compare_runs
    return compare_runs(run_a, run_b, fmt, output=output, fail_if_slower=fail_if_slower, force=force)
