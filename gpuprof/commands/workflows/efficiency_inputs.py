"""What the efficiency section needs from outside the job, settled once when the run ends and kept in
its run.json (so `gpuprof report` later gives the same figures): the peak (the user's, else one
measured on this device model and cached, else on a CPU-only run measured now in about a second
with the cores the job was allowed), the price per GPU-hour, and the host's energy (RAPL)."""

import json
import os
import subprocess
import sys

BENCH_SECONDS = 1.0
BENCH_TIMEOUT_S = 30.0
TORCH_DTYPES = {"FP32": "float32", "TF32": "float32", "BF16": "bfloat16", "FP16": "float16", "FP64": "float64"}


def settle(run_dir: str, peak_tflops=None, peak_given_by=None, price=None, host_energy=None) -> None:
    """Add {"efficiency": {...}} to the run's run.json; a failure costs only these figures."""
    try:
        _settle(run_dir, peak_tflops, peak_given_by, price, host_energy)
    except Exception:  # the job's exit status and report must survive any failure here
        pass


def _settle(run_dir: str, peak_tflops, peak_given_by, price, host_energy) -> None:
    from gpuprof.record.atomic import write_json_atomic
    from gpuprof.record.schema import RUN_FILE
    path = os.path.join(run_dir, RUN_FILE)
    try:
        with open(path) as handle:
            meta = json.load(handle)
    except (OSError, ValueError):
        return
    inputs = {"price_per_hour": price, "host_energy": host_energy}
    if peak_tflops is not None:
        inputs["peak"] = {"tflops": float(peak_tflops), "source": f"given ({peak_given_by or '--peak-tflops'})"}
    else:
        inputs["peak"] = _found_peak(run_dir, meta)
    meta["efficiency"] = inputs
    try:
        write_json_atomic(path, meta)
    except OSError:
        pass


def _found_peak(run_dir: str, meta: dict):
    """A cached peak for the counted step's device and dtype, or on a CPU a fresh measurement; None
    leaves the data-sheet table (GPUs) or "unknown" to the report."""
    try:
        device, key, name = _counted_device(run_dir)
    except Exception:
        return None
    if device is None:
        return None
    from gpuprof.judge.sections.peaks import cached_peak, remember_peak
    from gpuprof.commands.doctor.peak_bench import allowed_cpus, cpu_model
    if not device.startswith("cpu"):
        return cached_peak(name, key) if name else None
    threads = allowed_cpus()
    name = cpu_model()
    found = cached_peak(name, key, threads)
    if found is not None:
        return dict(found, dtype=key)
    measured = _measure_cpu(meta, key, threads)
    if measured is None:
        return None
    how = f"matmul benchmark, {threads} cores, after the run"
    remember_peak(name, key, measured, how, threads)
    return {"tflops": measured, "source": f"measured ({how})", "dtype": key}


def _counted_device(run_dir: str) -> tuple:
    """(device, peak key, device name) of the counted step, or (None, None, None)."""
    from gpuprof.judge.sections.devices import analyse_devices
    from gpuprof.judge.sections.efficiency import _main_dtype
    from gpuprof.judge.sections.peaks import dtype_key
    from gpuprof.judge.sections.processes import events_of_kind
    from gpuprof.record import kinds
    from gpuprof.record.reader import load_run
    groups = load_run(run_dir).get("processes") or []
    counted = [e for e in events_of_kind(groups, kinds.FLOPS) if e.get("flops")]
    if not counted:
        return None, None, None
    event = counted[0]
    device = str(event.get("device") or "cpu")
    models = events_of_kind(groups, kinds.MODEL)
    tf32 = bool(((models[0] if models else {}).get("flags") or {}).get("allow_tf32")) and device.startswith("cuda")
    names = [d.get("name") for d in analyse_devices(groups) if d.get("name")]
    return device, dtype_key(_main_dtype(event), tf32), names[0] if names else None


def _measure_cpu(meta: dict, key: str, threads: int):
    """TFLOPS of a dense matmul in this dtype on the job's cores, in a process of its own, or None."""
    from gpuprof.commands.doctor.peak_bench import bench_environment
    interpreter = (meta.get("interpreter") or {}).get("path") or sys.executable
    for python in dict.fromkeys((interpreter, sys.executable)):
        try:
            done = subprocess.run([python, "-m", "gpuprof.commands.doctor.peak_bench", "cpu", TORCH_DTYPES.get(key, "float32"),
                                   str(BENCH_SECONDS), str(threads)], capture_output=True, text=True,
                                  timeout=BENCH_TIMEOUT_S, env=bench_environment())
            result = json.loads(done.stdout.strip().splitlines()[-1])
        except (OSError, ValueError, IndexError, subprocess.SubprocessError):
            continue
        if isinstance(result.get("tflops"), (int, float)) and result["tflops"] > 0:
            return result["tflops"]
    return None


def host_energy_reading():
    """The host's energy counters now (RAPL), or None where unreadable."""
    try:
        from gpuprof.capture.samplers import rapl
        return rapl.read()
    except Exception:
        return None


def host_energy_between(first, last, seconds) -> dict:
    """{joules, seconds, zones} between two readings, or None."""
    try:
        from gpuprof.capture.samplers import rapl
        joules = rapl.joules_between(first, last)
    except Exception:
        return None
    if joules is None or not seconds:
        return None
    return {"joules": round(joules, 3), "seconds": round(seconds, 3), "zones": ", ".join(sorted(first))}
