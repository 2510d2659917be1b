"""`gpuprof doctor`'s peak check: a short dense matmul benchmark on this machine's first GPU (BF16
and FP32) or its CPU (FP32, with the cores a job started here may use), kept in the peak cache for
the MFU of later runs on the same device model, and set beside the data sheet's dense figure."""

import json
import subprocess

from gpuprof.commands.doctor.lines import BAD, NONE, OK, Line, Section

BENCH_SECONDS = 1.0
TIMEOUT_S = 60.0
GPU_DTYPES = (("bfloat16", "BF16"), ("float32", "FP32"))


def measure_peaks(python: str, on_gpu: bool, run=subprocess.run) -> list:
    """[{device, key, tflops, device_name, cached} or {device, key, error}], measured in `python`'s
    torch and remembered in the cache."""
    from gpuprof.judge.sections.peaks import remember_peak
    from gpuprof.commands.doctor.peak_bench import allowed_cpus, bench_environment
    threads = allowed_cpus()
    plan = [("cuda:0", dtype, key, None) for dtype, key in GPU_DTYPES] if on_gpu else [("cpu", "float32", "FP32",
                                                                                          threads)]
    found = []
    for device, dtype, key, cores in plan:
        argv = [python, "-m", "gpuprof.commands.doctor.peak_bench", device, dtype, str(BENCH_SECONDS)] + ([str(cores)] if cores
                                                                                                 else [])
        try:
            done = run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=bench_environment())
            result = json.loads(done.stdout.strip().splitlines()[-1])
        except (OSError, ValueError, IndexError, subprocess.SubprocessError) as exc:
            result = {"error": f"{exc.__class__.__name__}: {exc}"}
        if result.get("tflops"):
            how = f"gpuprof doctor, {cores} cores" if cores else "gpuprof doctor"
            remember_peak(result["device_name"], key, result["tflops"], how, cores)
        found.append(dict(result, device=device, key=key))
    return found


def peaks_section(peaks: list) -> Section:
    """Each measured peak beside the data sheet's dense figure, or why none was measured."""
    from gpuprof.judge.sections.peaks import cache_path, known_peak
    lines = []
    for peak in peaks or []:
        if peak.get("error"):
            lines.append(Line(BAD, f"{peak['device']} {peak['key'].upper()}: the benchmark failed ({peak['error']}): "
                                   "MFU falls back to the data sheet, or --peak-tflops"))
            continue
        text = f"{peak['device_name']}: {peak['tflops']:.4g} TFLOPS dense {peak['key'].upper()} measured"
        sheet = known_peak(peak["device_name"], peak["key"])
        if sheet is not None:
            text += f" ({peak['tflops'] / sheet['tflops']:.0%} of the {sheet['source']} {sheet['tflops']:g})"
        lines.append(Line(OK, text))
    if not lines:
        lines.append(Line(NONE, "no torch to measure with: MFU uses the data sheet's figure, or --peak-tflops"))
    else:
        lines.append(Line(NONE, f"kept in {cache_path()} for the MFU of later runs on this device model"))
    return Section("Peak arithmetic rate (MFU)", lines)
