"""`gpuprof attach PID`: its command line (the workflow is gpuprof.commands.workflows.attach)."""

from typing import Optional

import typer


def attach(
    pid: int = typer.Argument(..., metavar="PID",
                              help="The training process, or a launcher (torchrun, a shell) whose tree holds it."),
    duration: str = typer.Option("30s", "--duration", "-d", metavar="TIME",
                                 help="How long to sample: 30s, 2m, 45 (seconds). Ctrl-C ends it early, with a report."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the report as JSON."),
    html: Optional[str] = typer.Option(None, "--html", metavar="FILE",
                                       help="Also write the report as one self-contained HTML page with plots."),
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE",
                                        help="Also write a timeline for ui.perfetto.dev or chrome://tracing (JSON)."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Run folder [default: a new folder in ~/.local/state/gpuprof/runs, "
                                           "named attach-<script>-...]."),
    rate: int = typer.Option(25, "--rate", metavar="HZ", show_default=False,
                             help="Stack samples a second [default: 25; py-spy then uses about 5% of a core]."),
    gpu: bool = typer.Option(True, "--gpu/--no-gpu", show_default=False, help="Sample GPUs through NVML [default: gpu]."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report (files are still written)."),
):
    """Diagnose a training job that is already running, without restarting or changing it.

    Reads the job's Python stacks from outside with py-spy (`pip install py-spy`)
    and its processes from /proc and NVML, then prints the report `run` would: the verdict, the
    evidence and the ranked fixes. The job's output, timing and exit status are untouched."""
    from gpuprof.commands.workflows.attach import attach as attach_job
    return attach_job(pid, duration=duration, json_path=json_path, html=html, trace=trace, out=out, rate=rate,
                      gpu=gpu, quiet=quiet)
