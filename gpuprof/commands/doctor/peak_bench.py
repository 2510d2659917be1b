"""A device's dense matmul rate, measured: `python -m gpuprof.commands.doctor.peak_bench DEVICE DTYPE SECONDS
[THREADS]` prints one JSON line {"tflops", "device_name", "size", "threads"}.

Square matmuls large enough to keep the device busy are timed back to back for about SECONDS
(synchronised on a GPU) and the best rate of any of them is kept: the peak a training step can hope
for on this device, in this dtype. Run in a process of its own, so that gpuprof's supervisor never
imports torch; an error prints {"error": ...}."""

import json
import os
import sys
import time

SIZES = {"cpu": 1024, "cuda": 8192}


def measure(device: str, dtype_name: str, seconds: float = 1.0, threads: int = None) -> dict:
    import torch
    if threads:
        torch.set_num_threads(int(threads))
    dtype = getattr(torch, dtype_name)
    kind = device.split(":")[0]
    size = SIZES.get(kind, 1024)
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    sync = torch.cuda.synchronize if kind == "cuda" else (lambda: None)
    torch.mm(a, b)
    sync()
    best, deadline = 0.0, time.perf_counter() + seconds
    batch = 1 if kind == "cpu" else 8
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        for _ in range(batch):
            torch.mm(a, b)
        sync()
        best = max(best, 2.0 * size ** 3 * batch / (time.perf_counter() - started) / 1e12)
    return {"tflops": round(best, 6), "device_name": device_name(device, torch), "size": size,
            "threads": torch.get_num_threads() if kind == "cpu" else None}


def device_name(device: str, torch=None) -> str:
    """The device model the peak is cached under: the GPU's name, or the CPU's model name."""
    if device.startswith("cuda") and torch is not None:
        return torch.cuda.get_device_name(torch.device(device))
    return cpu_model()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return "CPU " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return "CPU " + (platform.processor() or platform.machine() or "unknown")


def allowed_cpus() -> int:
    """The cores this process may run on (its affinity), which a job started from it inherits."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def bench_environment() -> dict:
    """The environment with gpuprof importable by the interpreter that measures, whatever its own path."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def main(argv) -> int:
    try:
        device, dtype = argv[0], argv[1]
        seconds = float(argv[2]) if len(argv) > 2 else 1.0
        threads = int(argv[3]) if len(argv) > 3 else None
        print(json.dumps(measure(device, dtype, seconds, threads)))
        return 0
    except Exception as exc:
        print(json.dumps({"error": f"{exc.__class__.__name__}: {exc}"}))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
