"""What a real GPU measured, for the simulated GPU's defaults to follow: one table per GPU, each figure
with the measurement it came from. `bench/real_gpu/cost_table.py` measures them (CUDA events and host
timers, medians after a warm-up); docs/simulated-gpu.md ("Calibration") prints the table beside what
the simulated device gives for the same work, and tests/unit/test_simgpu_calibration.py holds the
two together.

The H100 SXM and the H200 share one chip (GH100: 132 SMs, a 1980 MHz top SM clock, the same dense
peaks on NVIDIA's data sheets); they differ in memory (80 GB HBM3 at 3.35 TB/s against 141 GB HBM3e at
4.8 TB/s on the data sheets). So the H200's compute efficiencies, launch costs and PCIe figures stand for
the H100 too, and its memory bandwidth is scaled by the data sheets' ratio."""

#: Where and when the H200 figures were measured.
H200_SOURCE = ("NVIDIA H200 (141 GB HBM3e, PCIe Gen5 x16), driver 580.159.04, torch 2.11.0+cu130, CUDA 13.0, "
               "cuDNN 9.19, on a 16-core Intel Xeon host; 2026-11-27, bench/real_gpu/cost_table.py")

#: Data-sheet dense peaks (TFLOPS) of the H100 SXM and H200 SXM, the figures efficiencies divide by.
DATASHEET_TFLOPS = {"float32": 67.0, "tf32": 494.0, "bfloat16": 989.0, "float16": 989.0, "int8": 1979.0}

H200 = {
    # Achieved TFLOPS over the data sheet's peak, large square matmuls (2048 to 8192): fp32 50.3-51.3,
    # TF32 342-348, bf16 671-704. Smaller ones are bound by the host's launches (1024: 38 / 150 / 178).
    "matmul_efficiency": {"float32": 0.76, "tf32": 0.70, "bfloat16": 0.70, "float16": 0.70},
    # A matmul whose work fills fewer than all the SMs runs below that: its efficiency times the share
    # filled (device.matmul_fill: output tiles of 128x128, a long K split in 1024s) to this power. The
    # one small matmul the device, not the host, bounded, fp32 1024^3 (64 tiles on 132 SMs: 0.485),
    # reached 38.3 TFLOPS, 0.75 of the large rate: 0.485^0.4 = 0.75. The host-bound ones (tf32 / bf16
    # 1024^3 at >= 150 / 178 TFLOPS, every mode's 256x512x512 at >= 9.7) are lower bounds it keeps.
    "small_matmul_exponent": 0.4,
    # 3x3 convolutions at ResNet shapes, forward, NCHW, cudnn.benchmark off: (128,64,32x32,64),
    # (64,64,56x56,64), (64,256,14x14,256); the medians of the three: fp32 41.2 (39.6-67.2), TF32 103.5
    # (93.8-209.5), bf16 158.5 (147.6-305.4) TFLOPS. A 3-channel stem reaches 12-15 in every mode.
    "conv_efficiency": {"float32": 0.62, "tf32": 0.21, "bfloat16": 0.16, "float16": 0.16},
    # Causal scaled_dot_product_attention, forward and backward, (16, 12 heads, 512, 64): bf16 103
    # TFLOPS with the default backend (flash 80, memory-efficient 48, math 10); fp32 21 (memory-
    # efficient; math 11; flash refuses fp32).
    "attention_tflops": {"bfloat16": 103.0, "float32": 21.0},
    # Device-to-device copy of 1 GiB, bytes read plus written: 4.22 TB/s; an elementwise add 4.32.
    "memory_bandwidth": 4.27e12,
    # Host to device, 100 MB: pinned 55.3 GB/s (1 MB: 47.2), pageable 10.2 GB/s (1 MB: 10.3).
    "pinned_copy_bandwidth": 55.3e9,
    "pageable_copy_bandwidth": 10.2e9,
    # Device to host, 100 MB: pinned 55.2 GB/s, pageable 15.4 GB/s.
    "pageable_d2h_bandwidth": 15.4e9,
    # Pinned copies queued back to back behind a long kernel: 4 KB every 2.58 us, 64 KB every 3.85 us,
    # 1 MB every 21.7 us: 2.5 us each beside the bytes at 55.3 GB/s.
    "copy_latency_s": 2.5e-6,
    # Tiny kernels queued back to back behind a long one: one per 3.38 us (16 floats) and 3.27 us (1 MiB
    # add). Launched from the host one by one at 156,000 a second, NVML counted 32% busy: about 2.05 us
    # of each is a kernel running, the rest the device's gap between kernels.
    "min_kernel_s": 2.05e-6,
    "kernel_gap_s": 1.3e-6,
    # NVML's per-process figure less torch's reserved blocks, after the first tensor (610 MiB) and once
    # cuBLAS and cuDNN have loaded (684 MiB): what a training process holds beyond its tensors.
    "context_bytes": 684 << 20,
    # nvmlDeviceGetSamples(GPU_UTILIZATION): one sample every 200 ms. Over duty cycles of 10%, 49% and
    # 89% (bursts of bf16 matmuls, event-timed) NVML's utilisation read 10%, 48% and 89%.
    "util_sample_period_s": 0.2,
    # Host seconds per eager launch (torch.add into a preallocated output: 5.7 us; an in-place add:
    # 6.0 us; a 64x64 Linear forward: 23 us) and per aten op of a small MLP's Adam step (70 ops,
    # 1.14 ms: 16 us an op, autograd and the optimizer's Python included).
    "launch_host_s": 5.7e-6,
    "step_host_s_per_aten_op": 16.4e-6,
    # Power NVML read a second after the last kernel (the simulated GPU keeps its own idle figure).
    "idle_power_w": 123.1,
}

#: H200's HBM3e against H100's HBM3 on the data sheets: 4.8 and 3.35 TB/s.
H100_MEMORY_SCALE = 3.35 / 4.8

#: How many times longer the simulated host takes per op than the H200's host: the face's bookkeeping
#: on this project's 2-core CI machine against the H200 host's eager launches for the same work,
#: torch.add into an output 16 / 5.7 us (2.8x), an in-place add 15 / 6.0 (2.5x), a 64x64 Linear forward
#: 51 / 23 (2.2x), an op of a small MLP's Adam step 42 / 16.4 (2.6x); the median, 2.5. The simulated
#: device runs this many times slower (Machine.time_scale), so the host and the device keep the real
#: machine's proportion. Checked on whole programs it was not taken from (bench/simgpu_agreement.py).
SIMULATED_HOST_SLOWDOWN = 2.5
