"""`gpuprof run`: its command line (the workflow is gpuprof.commands.workflows.run)."""

from typing import List, Optional

import typer

from gpuprof.commands.workflows.options import RunRequest
from gpuprof.commands.workflows.run import profile
from gpuprof.commands.workflows.verify import VERIFY_BUDGET_S, VERIFY_MAX_ROUNDS, VERIFY_ROUNDS, VERIFY_STEPS

#: --verify's help reads the rounds it runs from the workflow's own figures, so the two never drift.
VERIFY_HELP = (f"After the report, measure the input ceiling and the top fix with `gpuprof try` ({VERIFY_ROUNDS} "
               f"rounds of {VERIFY_STEPS} measured steps, up to {VERIFY_MAX_ROUNDS} while a speed-up is unclear and "
               f"another round fits in {VERIFY_BUDGET_S:.0f} s) and print them next to the estimates; a top fix "
               "that needs a code change is named as not tried.")

def run(
    target: Optional[List[str]] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                                 help="The training script and its arguments."),
    module: Optional[str] = typer.Option(None, "-m", "--module", metavar="MODULE",
                                         help="Run a module, as `python -m MODULE ARGS`."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Run folder for samples and events [default: a new folder in "
                                           "~/.local/state/gpuprof/runs, named <script>-<host>-<time>-<id>]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the report as JSON."),
    interval: Optional[float] = typer.Option(None, "--interval", metavar="SECONDS",
                                             help="System sampling interval [default: 0.1]."),
    probes: Optional[bool] = typer.Option(None, "--probes/--no-probes",
                                          help="Probes inside the job (DataLoader, copies, steps) [default: probes]."),
    gpu: Optional[bool] = typer.Option(None, "--gpu/--no-gpu", help="Sample GPUs through NVML [default: gpu]."),
    quiet: Optional[bool] = typer.Option(None, "--quiet/--no-quiet", "-q", help="No terminal report (files are still written)."),
    live: Optional[bool] = typer.Option(None, "--live/--no-live", help="Live status line [default: when stderr is a terminal]."),
    steps: Optional[int] = typer.Option(None, "--steps", metavar="N", help="Stop after N measured steps, as a Ctrl-C would (exit 0)."),
    warmup_steps: int = typer.Option(0, "--warmup-steps", metavar="K", help="Steps to leave out of the figures (after the first)."),
    gate_config: Optional[str] = typer.Option(None, "--gate", metavar="FILE", help="Gate the run with the thresholds in FILE (TOML, [tool.gpuprof.gate])."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="With --gate: write JUnit XML."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="With --gate: write a Markdown summary."),
    html: Optional[str] = typer.Option(None, "--html", metavar="FILE",
                                       help="Also write the report as one self-contained HTML page with plots."),
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE",
                                        help="Also write a timeline for ui.perfetto.dev or chrome://tracing (JSON)."),
    python: Optional[str] = typer.Option(None, "--python", metavar="EXE",
                                         help="Interpreter for SCRIPT or -m MODULE [default: the first python on PATH]."),
    verify: bool = typer.Option(False, "--verify", help=VERIFY_HELP),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when the program succeeded but a report file could "
                                                        "not be written (a full disk) [default: the program's status]."),
    peak_tflops: Optional[float] = typer.Option(None, "--peak-tflops", metavar="TFLOPS",
                                                help="The device's dense peak for MFU [default: measured and cached, "
                                                     "else NVIDIA's data sheet for the GPU, else unknown]."),
    price_per_gpu_hour: Optional[float] = typer.Option(None, "--price-per-gpu-hour", metavar="PRICE",
                                                       help="Cost of the run, of its idle GPU time and each fix's saving."),
    command_mode: bool = typer.Option(False, "--command-mode", hidden=True),
):
    """Run SCRIPT (or -m MODULE, or -- COMMAND) unchanged and report why the GPU waits.

    gpuprof exits with the program's own exit status, and dies of the same signal when the program
    died of one (after the report). A report that could not be written is said on stderr and changes
    the status only with --strict. Defaults for
    --out, --interval, --probes, --gpu, --live, --quiet and --python can be set in
    [tool.gpuprof.run] in pyproject.toml."""
    return profile(RunRequest(target=list(target or []), module=module, out=out, json_path=json_path,
                              interval=interval, probes=probes, gpu=gpu, quiet=quiet, live=live, steps=steps,
                              warmup_steps=warmup_steps, gate_config=gate_config, junit=junit, markdown=markdown,
                              command_mode=command_mode, python=python, verify=verify, html=html, trace=trace,
                              strict=strict, peak_tflops=peak_tflops, price_per_gpu_hour=price_per_gpu_hour))
