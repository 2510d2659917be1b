"""The costs the simulated GPU models, measured on the GPU at hand with CUDA events and host timers.

One process, about a minute on an H100/H200. Writes a JSON table (`--json`) and prints it. Every
figure is a median over repeats after a warm-up; device time is read from CUDA events, host time from
`time.perf_counter`. The same program runs on the simulated GPU (GPUPROF_SIMGPU set, the shim on
PYTHONPATH), so the two tables compare figure for figure (docs/simulated-gpu.md, "Calibration").

    python bench/real_gpu/cost_table.py --json costs.json [--quick]

What it measures, in this order (each part on its own; one that fails records its error and the
rest go on):
  context     device memory a process holds beyond torch's reserved blocks: after its first tensor,
              and after cuBLAS and cuDNN have loaded (NVML's per-process and device figures); first,
              before anything else makes the CUDA context
  device      name, SMs, memory, torch, CUDA and driver versions, CPU model
  launch      host microseconds per eager launch (elementwise, in-place, a small Linear, a whole
              small training step per aten op) and the device time of a tiny kernel back to back
  matmul      achieved TFLOPS of square matmuls and a small one in fp32, TF32 and bf16
  conv        achieved TFLOPS of ResNet-shaped 3x3 convolutions in fp32, TF32 and bf16 (forward)
  attention   causal scaled_dot_product_attention forward and backward by backend, fp32 and bf16
  memory      device-to-device copy and elementwise add bandwidth
  copies      host-to-device GB/s, pageable and pinned, 4 KB / 1 MB / 100 MB; device-to-host 100 MB
  copy_latency  pinned copies back to back behind a long kernel (latency per copy), pageable by host
              time, 4 KB to 8 MB; the board's power after a second idle
  nvml_util   NVML's utilisation against event-timed busy time at three duty cycles and a
              launch-bound loop
  models      step time of the transformer LM in fp32, TF32 and bf16 autocast, and of the conv net
              in fp32 (TF32 convolutions), bf16 autocast, channels-last bf16, without TF32 and with
              cudnn.benchmark; FLOPs counted once
"""

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "programs"))
DEV = "cuda"
RESULTS = {}


def part(name):
    """Run one part, keep its result (or its error) under `name`, save the table after each part."""
    def wrap(fn):
        def run(args):
            started = time.perf_counter()
            try:
                RESULTS[name] = fn(args)
            except Exception as exc:               # a part that fails must not cost the others
                RESULTS[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
            RESULTS.setdefault("seconds", {})[name] = round(time.perf_counter() - started, 2)
            save(args)
            print(f"[cost_table] {name}: {RESULTS['seconds'][name]} s", file=sys.stderr, flush=True)
        run.part = name
        return run
    return wrap


def save(args):
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(RESULTS, f, indent=1, default=str)
        os.replace(tmp, args.json)


def events_time(fn, reps, rounds=5, warmup=2):
    """Median device seconds of one call of `fn`, from CUDA events around `reps` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    return statistics.median(between_events(fn, reps) for _ in range(rounds))


def between_events(fn, reps):
    """Device seconds per call of `fn` over `reps` calls, from CUDA events recorded around them."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def reps_for(seconds_each, budget=0.05):
    return max(1, min(200, int(budget / max(seconds_each, 1e-7))))


def nvml():
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def nvml_handle(pynvml):
    """NVML's handle for torch's current device, matched by UUID."""
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        if uuid in pynvml.nvmlDeviceGetUUID(h):
            return h
    return pynvml.nvmlDeviceGetHandleByIndex(0)


@part("device")
def device(args):
    p = torch.cuda.get_device_properties(0)
    out = {"name": p.name, "capability": f"{p.major}.{p.minor}", "sms": p.multi_processor_count,
           "memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None),
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
           "defaults": {"matmul_precision": torch.get_float32_matmul_precision(),
                        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                        "cudnn_benchmark": torch.backends.cudnn.benchmark}}
    try:
        with open("/proc/cpuinfo") as f:
            out["cpu"] = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
        out["cpus"] = os.cpu_count()
    except OSError:
        pass
    pynvml = nvml()
    if pynvml:
        h = nvml_handle(pynvml)
        out["driver"] = pynvml.nvmlSystemGetDriverVersion()
        out["cuda_driver"] = pynvml.nvmlSystemGetCudaDriverVersion()
        for key, fn in (("max_sm_clock_mhz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
                        ("pcie_gen", lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                        ("pcie_width", lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
                        ("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3),
                        ("power_now_w", lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1e3)):
            try:
                out[key] = fn()
            except Exception as exc:
                out[key] = f"unsupported ({type(exc).__name__})"
    return out


def nvml_memory(pynvml, h):
    used_device = pynvml.nvmlDeviceGetMemoryInfo(h).used
    mine = None
    try:
        for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if proc.pid == os.getpid():
                mine = proc.usedGpuMemory
    except Exception:
        pass
    return used_device, mine


@part("context")
def context(args):
    """NVML's device figure before this process touches CUDA, then after; beside torch's reserved."""
    pynvml = nvml()
    if pynvml is None:
        return {"error": "no NVML"}
    h = None
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        break
    before, _ = nvml_memory(pynvml, h)
    torch.zeros(1, device=DEV)
    torch.cuda.synchronize()
    time.sleep(0.2)
    after_first, mine_first = nvml_memory(pynvml, h)
    reserved_first = torch.cuda.memory_reserved()
    a = torch.randn(256, 256, device=DEV)
    (a @ a).sum().item()
    torch.nn.functional.conv2d(torch.randn(8, 16, 32, 32, device=DEV), torch.randn(16, 16, 3, 3, device=DEV)).sum().item()
    torch.cuda.synchronize()
    time.sleep(0.2)
    after_libs, mine_libs = nvml_memory(pynvml, h)
    reserved_libs = torch.cuda.memory_reserved()
    return {"device_used_before": before,
            "first_tensor": {"device_delta": after_first - before, "process": mine_first, "reserved": reserved_first,
                             "context": (mine_first if mine_first is not None else after_first - before) - reserved_first},
            "after_cublas_cudnn": {"device_delta": after_libs - before, "process": mine_libs, "reserved": reserved_libs,
                                   "context": (mine_libs if mine_libs is not None else after_libs - before) - reserved_libs}}


def host_per_call(fn, n):
    fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t0) / n)
        torch.cuda.synchronize()
    return statistics.median(best)


def count_aten_ops(fn):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.n += 1
            return func(*args, **(kwargs or {}))

    with Count():
        fn()
    return Count.n


@part("launch")
def launch(args):
    a, b, c = (torch.randn(16, device=DEV) for _ in range(3))
    lin = torch.nn.Linear(64, 64, device=DEV)
    x = torch.randn(32, 64, device=DEV)
    n = 2000 if args.quick else 5000
    out = {"add_out_us": host_per_call(lambda: torch.add(a, b, out=c), n) * 1e6,
           "add_inplace_us": host_per_call(lambda: a.add_(1.0), n) * 1e6,
           "linear_forward_us": host_per_call(lambda: lin(x), n // 2) * 1e6}
    # a whole small training step: host time per aten op the step dispatches
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 1)).to(DEV)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xb, yb = torch.randn(64, 32, device=DEV), torch.randn(64, 1, device=DEV)

    def step():
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    for _ in range(5):
        step()
    ops = count_aten_ops(step)
    per_step = host_per_call(step, 100 if args.quick else 300)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(100):
        step()
    end.record()
    end.synchronize()
    wall = time.perf_counter() - t0
    out["mlp_adam_step"] = {"aten_ops": ops, "host_ms": per_step * 1e3, "host_us_per_op": per_step / ops * 1e6,
                            "wall_ms": wall / 100 * 1e3, "events_ms": start.elapsed_time(end) / 100}
    # device time of a tiny kernel, and of a 1 MiB elementwise one, back to back
    out["tiny_kernel_device_us"] = back_to_back(lambda: a.add_(1.0), 1000) * 1e6
    big = torch.randn(1 << 18, device=DEV)
    out["add_1mib_device_us"] = back_to_back(lambda: big.add_(1.0), 1000) * 1e6
    return out


def back_to_back(fn, k, sleep_s=0.1):
    """Device seconds per call of `fn` when `k` calls run back to back: queued behind a long sleep
    kernel, so the host's launches are all in before the first one runs (k under the launch queue's
    depth, so every launch returns at once)."""
    torch.cuda.synchronize()
    torch.cuda._sleep(int(sleep_s * 1.98e9))
    return between_events(fn, k)


MODES = {"fp32": (torch.float32, False), "tf32": (torch.float32, True), "bf16": (torch.bfloat16, False)}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


@part("matmul")
def matmul(args):
    shapes = [(256, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
    if args.quick:
        shapes = shapes[:3]
    rows = []
    defaults = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    try:
        for mode, (dtype, tf32) in MODES.items():
            set_tf32(tf32)
            for m, k, n in shapes:
                a = torch.randn(m, k, device=DEV, dtype=dtype)
                b = torch.randn(k, n, device=DEV, dtype=dtype)
                once = events_time(lambda: a @ b, 1, rounds=1)
                t = events_time(lambda: a @ b, reps_for(once))
                rows.append({"mode": mode, "m": m, "k": k, "n": n, "s": t, "tflops": 2 * m * k * n / t / 1e12})
                del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = defaults
    return rows


@part("conv")
def conv(args):
    # (batch, channels in, size, channels out): CIFAR ResNet stage 1, ImageNet ResNet stage 1 and 3
    shapes = [(128, 64, 32, 64), (64, 64, 56, 64), (64, 256, 14, 256), (128, 3, 32, 64)]
    rows = []
    defaults = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    try:
        for mode, (dtype, tf32) in MODES.items():
            set_tf32(tf32)
            for batch, cin, size, cout in shapes:
                x = torch.randn(batch, cin, size, size, device=DEV, dtype=dtype)
                w = torch.randn(cout, cin, 3, 3, device=DEV, dtype=dtype)
                fn = lambda: torch.nn.functional.conv2d(x, w, padding=1)
                once = events_time(fn, 1, rounds=1)
                t = events_time(fn, reps_for(once))
                flops = 2 * batch * cout * size * size * cin * 9
                rows.append({"mode": mode, "batch": batch, "cin": cin, "size": size, "cout": cout, "s": t,
                             "tflops": flops / t / 1e12})
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = defaults
    return rows


@part("attention")
def attention(args):
    """Causal scaled_dot_product_attention, forward and backward, by backend and dtype (the LM's shape)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    b, h, t, d = (16, 12, 512, 64) if not args.quick else (4, 8, 256, 64)
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        q, k, v = (torch.randn(b, h, t, d, device=DEV, dtype=dtype, requires_grad=True) for _ in range(3))
        grad = torch.randn(b, h, t, d, device=DEV, dtype=dtype)
        for backend in (None, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
            def fwd_bwd():
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)
            try:
                if backend is None:
                    t_s = events_time(fwd_bwd, 5)
                else:
                    with sdpa_kernel([backend]):
                        t_s = events_time(fwd_bwd, 5)
            except RuntimeError as exc:
                rows.append({"dtype": str(dtype), "backend": backend.name, "error": str(exc)[:200]})
                continue
            flops = 4 * b * h * t * t * d / 2 * 3.5      # causal: half the scores; backward 2.5x forward
            rows.append({"dtype": str(dtype), "backend": backend.name if backend else "default", "fwd_bwd_s": t_s,
                         "tflops": flops / t_s / 1e12})
    return rows


@part("memory")
def memory(args):
    n = (1 << 28) if not args.quick else (1 << 26)      # float32 elements: 1 GiB (256 MiB quick)
    a, b = torch.randn(n, device=DEV), torch.empty(n, device=DEV)
    t_copy = events_time(lambda: b.copy_(a), 5)
    c = torch.empty(n, device=DEV)
    t_add = events_time(lambda: torch.add(a, b, out=c), 5)
    size = n * 4
    return {"bytes": size, "copy_GBps_read_plus_write": 2 * size / t_copy / 1e9,
            "add_GBps_read_plus_write": 3 * size / t_add / 1e9}


@part("copies")
def copies(args):
    rows = []
    for size in (4 << 10, 1 << 20, 100 << 20):
        n = size // 4
        pageable = torch.randn(n)
        pinned = torch.randn(n).pin_memory()
        dst = torch.empty(n, device=DEV)
        reps = 200 if size < (1 << 20) else (50 if size == (1 << 20) else 5)
        for kind, src, nb in (("pageable", pageable, False), ("pinned", pinned, True), ("pinned_blocking", pinned, False)):
            dev_s = events_time(lambda: dst.copy_(src, non_blocking=nb), reps)
            host_s = host_per_call(lambda: dst.copy_(src, non_blocking=nb), reps) if nb else None
            rows.append({"direction": "h2d", "kind": kind, "bytes": size, "device_s": dev_s,
                         "GBps": size / dev_s / 1e9, "host_return_s": host_s})
        if size == (100 << 20):
            back = torch.empty(n).pin_memory()
            dev_s = events_time(lambda: back.copy_(dst, non_blocking=True), reps)
            rows.append({"direction": "d2h", "kind": "pinned", "bytes": size, "device_s": dev_s, "GBps": size / dev_s / 1e9})
            back_pageable = torch.empty(n)
            dev_s = events_time(lambda: back_pageable.copy_(dst), reps)
            rows.append({"direction": "d2h", "kind": "pageable", "bytes": size, "device_s": dev_s, "GBps": size / dev_s / 1e9})
    return rows


@part("copy_latency")
def copy_latency(args):
    """Pinned non-blocking copies queued behind a long kernel, so they run back to back: device time
    per copy by size, whose intercept is the per-copy latency; pageable copies by host time (each
    synchronises first, so it cannot queue)."""
    rows = []
    for size in (4 << 10, 64 << 10, 1 << 20, 8 << 20):
        n = size // 4
        src, dst = torch.randn(n).pin_memory(), torch.empty(n, device=DEV)
        per = back_to_back(lambda: dst.copy_(src, non_blocking=True), 100, sleep_s=0.05)
        pageable = torch.randn(n)
        host = host_per_call(lambda: dst.copy_(pageable), 50)
        rows.append({"bytes": size, "pinned_back_to_back_s": per, "pinned_GBps": size / per / 1e9,
                     "pageable_host_s": host, "pageable_GBps": size / host / 1e9})
    # idle power once nothing has run for a second
    pynvml = nvml()
    idle_w = None
    if pynvml:
        time.sleep(1.0)
        try:
            idle_w = pynvml.nvmlDeviceGetPowerUsage(nvml_handle(pynvml)) / 1e3
        except Exception:
            pass
    return {"rows": rows, "idle_power_w": idle_w}


class UtilPoller(threading.Thread):
    def __init__(self, pynvml, handle, period=0.05):
        super().__init__(daemon=True)
        self.pynvml, self.handle, self.period = pynvml, handle, period
        self.readings, self.stop = [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.readings.append((time.perf_counter(), self.pynvml.nvmlDeviceGetUtilizationRates(self.handle).gpu))
            except Exception:
                pass
            time.sleep(self.period)


@part("nvml_util")
def nvml_util(args):
    """Bursts of a known device time, separated by host sleeps; NVML polled meanwhile. The first
    and last 0.3 s of NVML readings are left out (its window trails the instant read)."""
    pynvml = nvml()
    if pynvml is None:
        return {"error": "no NVML"}
    h = nvml_handle(pynvml)
    out = {}
    try:
        samples = pynvml.nvmlDeviceGetSamples(h, pynvml.NVML_GPU_UTILIZATION_SAMPLES, 0)
        stamps = sorted(s.timeStamp for s in samples[1])
        gaps = [b - a for a, b in zip(stamps, stamps[1:]) if b > a]
        out["sample_period_ms"] = statistics.median(gaps) / 1e3 if gaps else None
    except Exception as exc:
        out["sample_period_ms"] = f"unsupported ({type(exc).__name__})"
    a = torch.randn(2048, 2048, device=DEV, dtype=torch.bfloat16)
    one = events_time(lambda: a @ a, 20)
    seconds = 1.5 if args.quick else 2.5
    rows = []
    for busy_ms, idle_ms in ((2, 18), (5, 5), (18, 2), (50, 150)):
        reps = max(1, int(busy_ms / 1e3 / one))
        poller = UtilPoller(pynvml, h)
        events = []
        torch.cuda.synchronize()
        poller.start()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(reps):
                a @ a
            e.record()
            e.synchronize()
            events.append((s, e))
            time.sleep(idle_ms / 1e3)
        wall = time.perf_counter() - t0
        poller.stop.set()
        poller.join()
        busy = sum(s.elapsed_time(e) for s, e in events) / 1e3
        inside = [u for t, u in poller.readings if t0 + 0.3 <= t <= t0 + wall - 0.05]
        rows.append({"burst_ms": busy_ms, "sleep_ms": idle_ms, "busy_share_events": busy / wall,
                     "nvml_gpu_util_mean": statistics.mean(inside) / 100 if inside else None,
                     "nvml_readings": len(inside)})
    # launch-bound: tiny kernels back to back from the host, each a few microseconds on the device
    x = torch.randn(16, device=DEV)
    poller = UtilPoller(pynvml, h)
    poller.start()
    t0 = time.perf_counter()
    launched = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(1000):
            x.mul_(1.0)
        launched += 1000
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    poller.stop.set()
    poller.join()
    inside = [u for t, u in poller.readings if t0 + 0.3 <= t <= t0 + wall - 0.05]
    tiny_us = RESULTS.get("launch", {}).get("tiny_kernel_device_us") or 2.0
    rows.append({"burst_ms": "tiny kernels", "launches_per_s": launched / wall,
                 "busy_share_events": min(1.0, launched * tiny_us / 1e6 / wall),
                 "nvml_gpu_util_mean": statistics.mean(inside) / 100 if inside else None, "nvml_readings": len(inside)})
    out["rows"] = rows
    return out


def step_time(make_step, steps, warmup=3):
    step = make_step()
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / steps, (time.perf_counter() - t0) / steps


def flops_of(step):
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with counter:
        step()
    return counter.get_total_flops()


@part("models")
def models(args):
    import transformer_lm
    import conv_workers_pinned
    out = {}
    defaults = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    lm_cfg = dict(layers=12, d=768, heads=12, block=512, batch=16) if not args.quick else \
        dict(layers=4, d=512, heads=8, block=256, batch=8)
    for mode in ("fp32", "tf32", "bf16"):
        set_tf32(mode == "tf32")
        try:
            def make():
                return transformer_lm.synthetic_step(precision="bf16" if mode == "bf16" else "fp32", **lm_cfg)
            s, wall = step_time(make, 5 if args.quick else 10)
            flops = flops_of(make())
            out[f"lm_{mode}"] = {"step_s": s, "wall_step_s": wall, "flops": flops, "tflops": flops / s / 1e12}
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = defaults
    for mode in ("fp32", "bf16", "bf16_channels_last", "fp32_no_tf32", "fp32_cudnn_benchmark"):
        set_tf32(mode != "fp32_no_tf32")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = mode == "fp32_cudnn_benchmark"
        try:
            def make():
                return conv_workers_pinned.synthetic_step(batch=256 if not args.quick else 64,
                                                          precision="bf16" if mode.startswith("bf16") else "fp32",
                                                          channels_last=mode.endswith("channels_last"))
            s, wall = step_time(make, 5 if args.quick else 15)
            flops = flops_of(make())
            out[f"resnet18_cifar_{mode}"] = {"step_s": s, "wall_step_s": wall, "flops": flops, "tflops": flops / s / 1e12}
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = defaults
            torch.backends.cudnn.benchmark = False
    return out


PARTS = [context, device, launch, matmul, conv, attention, memory, copies, copy_latency, nvml_util, models]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the table here (after each part)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--only", nargs="*", help="parts to run (default: all)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cost_table: no CUDA device", file=sys.stderr)
        return 2
    RESULTS["started"] = time.strftime("%Y-%m-%d %H:%M:%S")
    for run in PARTS:
        if not args.only or run.part in args.only:
            run(args)
    print(json.dumps({k: v for k, v in RESULTS.items()}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
