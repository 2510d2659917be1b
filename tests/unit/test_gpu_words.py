"""NVML's utilisation is the share of time a kernel ran, not how busy the GPU was: the sampler-only
guess says so, with GPM's SM activity beside it where the GPU has GPM."""

import pytest

from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.verdict.gpu_words import kernel_time


def no_steps(gpus, cores_busy=0.3):
    return {"steps": {"count": 0, "data_wait_share": None}, "dataloaders": [],
            "system": {"cpu_count": 8, "job": {"cores_busy": cores_busy}, "cpu": {"idle": 0.9, "iowait": 0.0},
                       "pressure": {"io_some": 0.0, "cpu_some": 0.0}, "disk": {"busy": 0.0}, "gpus": gpus},
            "copies": {"count": 0}, "hdf5": [], "duration_s": 14.0, "probes": True}


@pytest.mark.parametrize("util, bottleneck, words", [
    (0.95, "compute", "a kernel was running on the GPU 95% of the time (40% of its SMs active, GPM)"),
    (0.2, "host.overhead", "a kernel was running on the GPU only 20% of the time (40% of its SMs active, GPM) and "
                           "the CPUs are not saturated"),
])
def test_the_sampler_only_guess_says_a_kernel_was_running_with_sm_activity_beside(util, bottleneck, words):
    gpus = [{"label": "GPU 0", "job": True, "util_gpu": util, "sm_active": 0.4, "mem_total_bytes": 80e9}]
    verdict = classify(no_steps(gpus))["verdict"]
    assert verdict["basis"] == "sampler" and verdict["bottleneck"] == bottleneck
    assert verdict["reason"] == words and "busy" not in verdict["summary"]
    assert verdict["evidence"]["gpu_sm_active"] == 0.4


def test_without_gpm_only_the_time_a_kernel_ran_is_said():
    verdict = classify(no_steps([{"label": "GPU 0", "job": True, "util_gpu": 0.9, "mem_total_bytes": 80e9}]))["verdict"]
    assert verdict["reason"] == "a kernel was running on the GPU 90% of the time"
    assert "gpu_sm_active" not in verdict["evidence"]
    assert kernel_time(0.5, only=True, where="on GPU 3") == "a kernel was running on GPU 3 only 50% of the time"
