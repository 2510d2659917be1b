"""Copies, devices and device memory on the simulated GPU (gpuprof.testing.simgpu), through a
real `gpuprof run`: copy time is device time, the host's wait for earlier kernels is reported as
waiting for the device, the model's move stays out of the steps, and the job's GPU is named by
UUID with its memory counted on the device the program used."""

import os
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("gpuprof.testing.simgpu.torch_face")

from gpuprof.testing.simgpu import Gpu, Machine, environment  # noqa: E402
from tests.integration.helpers import env_with_source, gpuprof, load_json  # noqa: E402

MIB = 1 << 20

# A float32 MLP (about 60 ms of kernels a step, against under 3 ms of copying) built on the CPU and moved with model.to(device) (the first CUDA call: untimed),
# then steps that each copy a pageable float32 batch with a plain blocking .to(device) while the
# previous step's kernels are still queued.
PROGRAM = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn

    device = sys.argv[1]
    steps = int(sys.argv[2])
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                          nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                          nn.Linear(4096, 16)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = torch.randn(8192, 1024)
    for _ in range(steps):
        x = batch.to(device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    print("done", float(loss.item()))
""")


def run(tmp_path, machine, *args):
    program = tmp_path / "train.py"
    program.write_text(PROGRAM)
    folder = machine.create(str(tmp_path / "machine"))
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), str(program), *args, cwd=str(tmp_path),
                  env=environment(folder, env_with_source()), timeout=300)
    assert got.returncode == 0, got.stderr
    return load_json(tmp_path / "run" / "report.json")


def test_pageable_copies_after_queued_kernels_are_device_wait_not_copying(tmp_path):
    machine = Machine(gpus=[Gpu()])
    report = run(tmp_path, machine, "cuda", "25")
    copies = report["copies"]
    assert copies["basis"] == "device" and copies["count"] >= 20
    # 32 MiB at the simulated pageable bandwidth (12 GB/s) is under 3 ms of copying per step...
    assert copies["seconds"] / copies["count"] < 0.01
    # ...while the host, held by each blocking copy until the last step's kernels ended, waited longer.
    assert copies["device_wait_s"] > copies["seconds"]
    assert copies["share"] < 0.2 and report["verdict"]["bottleneck"] != "transfer.h2d"
    # The model's move (before the first step) is reported apart, not as a step copy.
    assert copies["outside_steps"]["count"] >= 5 and copies["outside_steps"]["bytes"] >= 40 * MIB
    (device,) = report["cuda_devices"]
    assert device["uuid"] == machine.uuid(0) and device["cuda_index"] == 0 and device["pids"]


def test_a_copy_to_another_device_is_timed_on_that_devices_stream(tmp_path):
    machine = Machine(gpus=[Gpu(), Gpu()])
    report = run(tmp_path, machine, "cuda:1", "15")
    copies = report["copies"]
    # Timed on device 1's stream, a copy takes its real device time (32 MiB at ~12 GB/s); events on
    # device 0's idle stream would have said next to nothing.
    assert copies["count"] >= 10 and copies["basis"] == "device"
    assert copies["seconds"] / copies["count"] > 0.3 * (32 * MIB / 12e9)
    used = {d["uuid"]: d for d in report["cuda_devices"]}
    assert machine.uuid(1) in used and used[machine.uuid(1)]["cuda_indices"] == [1]
    assert used[machine.uuid(1)]["peak_bytes"] >= 40 * MIB          # the model's memory, on device 1
    assert report["memory"]["peak_bytes"] >= 40 * MIB
