"""The simulated GPU against what a real H200 measured (gpuprof/testing/simgpu/measured.py, from
bench/real_gpu/cost_table.py): the same work, timed by the device model on a fake clock, lands within
a stated tolerance of the measured figure. A default changed without a new measurement fails here."""

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, h200, measured
from gpuprof.testing.simgpu.device import Device, FakeClock
from gpuprof.testing.simgpu.enumeration import whole_gpu

H200 = measured.H200
MB = 1 << 20


class NoRecorder:
    def add(self, *args, **kwargs):
        pass

    def memory(self, *args):
        pass

    def flush(self):
        pass


def device(gpu=None):
    spec = whole_gpu(Machine(gpus=[gpu or h200()]).gpus[0], 0)
    return Device(spec, 0, FakeClock(), NoRecorder())


def matmul_tflops(dev, n, dtype):
    element = 4 if dtype in ("float32", "tf32") else 2
    flops = 2 * n ** 3
    return flops / dev.kernel_seconds(flops, 3 * n * n * element, dtype) / 1e12


@pytest.mark.parametrize("dtype,n,measured_tflops", [("float32", 8192, 51.2), ("tf32", 4096, 342.3),
                                                     ("tf32", 8192, 347.3), ("bfloat16", 4096, 686.1),
                                                     ("bfloat16", 8192, 670.9)])
def test_a_large_matmul_runs_at_the_rate_the_h200_measured(dtype, n, measured_tflops):
    assert matmul_tflops(device(), n, dtype) == pytest.approx(measured_tflops, rel=0.06)


def shaped_matmul_tflops(dev, m, k, n, dtype):
    """An (m, k) x (k, n) matmul's rate on `dev`, its SM fill taken into account as the face does."""
    element = 4 if dtype in ("float32", "tf32") else 2
    flops = 2 * m * k * n
    seconds = dev.kernel_seconds(flops, (m * k + k * n + m * n) * element, dtype, fill=dev.matmul_fill(m * n, flops))
    return flops / seconds / 1e12


def test_a_small_float32_matmul_that_fills_half_the_sms_runs_at_the_rate_the_h200_measured():
    assert shaped_matmul_tflops(device(), 1024, 1024, 1024, "float32") == pytest.approx(38.3, rel=0.06)


@pytest.mark.parametrize("m,k,n,dtype,at_least", [(1024, 1024, 1024, "tf32", 150.5), (1024, 1024, 1024, "bfloat16", 178.0),
                                                  (256, 512, 512, "float32", 9.7), (256, 512, 512, "bfloat16", 11.0)])
def test_small_matmuls_the_host_bounded_run_at_least_as_fast_as_it_let_them(m, k, n, dtype, at_least):
    dev = device()
    rate = shaped_matmul_tflops(dev, m, k, n, dtype)
    assert rate >= at_least
    assert rate < matmul_tflops(dev, 8192, dtype)           # and below a large one's rate


def test_a_matmul_with_a_small_output_and_a_long_reduction_fills_the_gpu_as_split_k_does():
    # a GPT's weight gradient: 768 x 768 outputs over 8192 tokens
    dev = device()
    assert dev.matmul_fill(768 * 768, 2 * 768 * 768 * 8192) == 1.0
    assert shaped_matmul_tflops(dev, 768, 8192, 768, "tf32") == pytest.approx(matmul_tflops(dev, 8192, "tf32"), rel=0.06)


@pytest.mark.parametrize("dtype,measured_tflops", [("float32", 41.2), ("tf32", 103.5), ("bfloat16", 158.5)])
def test_a_resnet_convolution_runs_far_below_the_matmul_rate_as_measured(dtype, measured_tflops):
    batch, cin, size, cout = 64, 64, 56, 64          # ImageNet ResNet stage 1, the shapes' median
    element = 4 if dtype != "bfloat16" else 2
    flops = 2 * batch * cout * size * size * cin * 9
    nbytes = (batch * cin * size * size + batch * cout * size * size + cout * cin * 9) * element
    seconds = device().kernel_seconds(flops, nbytes, dtype, conv=True)
    assert flops / seconds / 1e12 == pytest.approx(measured_tflops, rel=0.1)
    assert flops / device().kernel_seconds(flops, nbytes, dtype) / 1e12 > 2 * measured_tflops or dtype == "float32"


def test_device_memory_moves_at_the_measured_bandwidth():
    nbytes = 2 * (1 << 30)                              # a 1 GiB copy: read plus written
    assert nbytes / device().kernel_seconds(0, nbytes) / 1e12 == pytest.approx(4.22, rel=0.03)


@pytest.mark.parametrize("nbytes,pinned,measured_s", [(100 * MB, True, 1.896e-3), (MB, True, 22.2e-6),
                                                      (100 * MB, False, 10.26e-3), (MB, False, 102e-6)])
def test_host_to_device_copies_take_the_measured_time(nbytes, pinned, measured_s):
    dev = device()
    start, end = dev.copy_to_device(dev.default_stream, nbytes, pinned=pinned, non_blocking=pinned)
    assert end - start == pytest.approx(measured_s, rel=0.08)


def test_a_copy_to_pageable_host_memory_runs_at_the_measured_rate():
    dev = device()
    start, end = dev.copy_to_host(dev.default_stream, 100 * MB, pinned=False, non_blocking=False)
    assert 100 * MB / (end - start) / 1e9 == pytest.approx(15.35, rel=0.03)


def test_tiny_kernels_queued_back_to_back_start_one_per_3_4_microseconds():
    dev = device()
    dev.kernel(dev.default_stream, 0.1, 1.0)             # the long kernel they queue behind
    ends = [dev.kernel(dev.default_stream, dev.kernel_seconds(0, 64), 0.01)[1] for _ in range(1000)]
    spacing = (ends[-1] - ends[0]) / 999
    assert spacing == pytest.approx(3.38e-6, rel=0.03)


def test_tiny_kernels_launched_one_by_one_keep_the_device_busy_as_nvml_counted():
    """156,000 launches a second kept NVML's utilisation at 32%."""
    dev = device()
    clock, busy = dev.clock, 0.0
    for _ in range(1000):
        start, end = dev.kernel(dev.default_stream, dev.kernel_seconds(0, 64), 0.01)
        busy += end - start
        clock.advance(1 / 156_000)
    assert busy / (1000 / 156_000) == pytest.approx(0.32, abs=0.02)


def test_a_process_holds_the_measured_context_beyond_its_tensors():
    assert device().memory.held() == H200["context_bytes"]


def test_the_default_gpu_is_the_h200_with_hbm3_memory():
    """The H100 default shares every measured figure but the memory bandwidth, scaled by the data
    sheets: an H100 here moved about 3.0 TB/s device to device (.library/device/KINDS.md, 2026-11-13)."""
    default, measured_h200 = Gpu(), h200()
    assert default.memory_bandwidth == pytest.approx(3.0e12, rel=0.02)
    for name in ("efficiency", "conv_efficiency", "pinned_copy_bandwidth", "pageable_copy_bandwidth",
                 "copy_latency_s", "min_kernel_s", "kernel_gap_s", "context_bytes", "tflops", "sm_count",
                 "max_sm_clock_mhz"):
        assert getattr(default, name) == getattr(measured_h200, name), name
    assert Machine().util_sample_period_s == H200["util_sample_period_s"]


def test_one_gpu_s_efficiencies_are_its_own():
    first, second = Gpu(), Gpu()
    first.efficiency["bfloat16"] = 0.1
    assert second.efficiency["bfloat16"] == H200["matmul_efficiency"]["bfloat16"]


@pytest.mark.parametrize("dtype,measured_tflops", [("bfloat16", 103.0), ("float32", 21.0), ("tf32", 21.0)])
def test_fused_attention_runs_at_the_rate_the_h200_measured_whatever_tf32_allows(dtype, measured_tflops):
    """Causal SDPA forward and backward (16, 12, 512, 64): bf16 103 TFLOPS with torch's default
    kernel, float32 21 with the memory-efficient one (TF32 does not change it)."""
    flops = 4 * 16 * 12 * 512 ** 2 * 64 * 3.5
    rate = flops / device().kernel_seconds(flops, 0, dtype, attention=True) / 1e12
    assert rate == pytest.approx(measured_tflops, rel=0.01)


def test_a_gpu_on_an_older_pcie_link_copies_at_that_links_share_of_the_measured_rate(tmp_path):
    gen4 = Machine(gpus=[Gpu(pcie_generation=4)]).gpus[0]
    assert gen4.pinned_copy_bandwidth == pytest.approx(H200["pinned_copy_bandwidth"] / 2)
    assert gen4.pageable_copy_bandwidth == pytest.approx(H200["pageable_copy_bandwidth"] / 2)
    again = Machine(**Machine(gpus=[Gpu(pcie_generation=4)]).to_dict()).gpus[0]    # as machine.json reloads it
    assert again.pinned_copy_bandwidth == pytest.approx(H200["pinned_copy_bandwidth"] / 2)
    own = Machine(gpus=[Gpu(pcie_generation=4, pinned_copy_bandwidth=20e9)]).gpus[0]
    assert own.pinned_copy_bandwidth == 20e9 and Machine().gpus[0].pinned_copy_bandwidth == H200["pinned_copy_bandwidth"]
