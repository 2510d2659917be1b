"""The NVML sampler and the GPU analysis against the simulated GPU's NVML face (the real pynvml
interface over a simulated machine), on a hand-moved clock: eight GPUs, one lost mid-run, one in MIG
mode, and a job whose kernels run on one GPU and one MIG instance."""

import os

import pytest

from gpuprof.judge.sections.gpus import summarize_gpus
from gpuprof.judge.sections.job_gpus import job_gpu_util, select_job_gpus
from gpuprof.capture.samplers.nvml import NvmlSampler
from gpuprof.testing.simgpu import Gpu, Machine, MigInstance, state
from gpuprof.testing.simgpu.machine import GIB, device_dir, mig_dir
from gpuprof.testing.simgpu.nvml_face import CHANGES_LOG, simulated_pynvml

START = 1000.0


class Clock:
    def __init__(self, now=START):
        self.now = now

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        pass


def eight_gpus():
    gpus = [Gpu() for _ in range(8)]
    gpus[3] = Gpu(fail_after_reads=12)
    gpus[6] = Gpu(mig=[MigInstance(profile="3g.40gb", sm_count=66, memory_bytes=40 * GIB),
                       MigInstance(profile="1g.10gb", sm_count=16, memory_bytes=10 * GIB)])
    return Machine(gpus=gpus, util_sample_period_s=0.1)


@pytest.fixture
def sampled(tmp_path):
    machine = eight_gpus()
    folder = machine.create(str(tmp_path / "machine"))
    # The job: kernels keeping all SMs busy on GPU 5 from 1001 s, and half the SMs of MIG instance 2.
    state.ActivityWriter(device_dir(folder, 5), os.getpid()).add(START + 1.0, START + 3.0, 1.0, state.KERNEL)
    state.ActivityWriter(mig_dir(folder, 6, 2), os.getpid()).add(START + 1.0, START + 3.0, 0.5, state.KERNEL)
    clock = Clock()
    nvml = simulated_pynvml(folder, clock=clock, sleep=clock.sleep)
    sampler = NvmlSampler(nvml, clock, job_pids=lambda: {os.getpid()})
    assert sampler.start()
    while clock.now < START + 3.0:
        if round((clock.now - START) * 10) % 10 == 0:
            sampler.tick_pcie()
        sampler.tick()
        clock.now += 0.1
    sampler.stop()
    return machine, folder, sampler.to_dict()


def test_a_lost_gpu_stops_alone_and_mig_instances_are_sampled_each(sampled):
    machine, folder, record = sampled
    entries = record["gpus"]
    assert [(g["index"], (g.get("mig") or {}).get("gpu_instance_id")) for g in entries] == \
        [(i, None) for i in range(7)] + [(6, 1), (6, 2), (7, None)]
    assert [g["uuid"] for g in entries if not g.get("mig")] == [machine.uuid(i) for i in range(8)]
    lost = entries[3]
    assert lost["lost"] and "lost" in lost["lost"].lower() and 0 < len(lost["series"]["columns"]["t"]) < 30
    assert all(len(g["series"]["columns"]["t"]) == 30 for g in entries if not g.get("lost"))
    assert record["available"] and record["reason"] is None
    assert not os.path.exists(os.path.join(folder, CHANGES_LOG))      # nothing was changed on the device


def test_the_jobs_gpu_and_mig_instance_are_found_by_uuid_with_their_figures(sampled):
    machine, _, record = sampled
    gpus, _ = summarize_gpus(record, (START + 1.2, START + 2.9))
    by_label = {g["label"]: g for g in gpus}
    assert by_label["GPU 5"]["util_gpu"] == pytest.approx(1.0) and by_label["GPU 5"]["sm_active"] == pytest.approx(1.0)
    assert by_label["GPU 5"]["util_gpu_run"] < 0.8
    instance = by_label["GPU 6 MIG 2"]
    assert instance["uuid"] == machine.gpus[6].mig[1].uuid and instance["util_source"] == "gpm"
    assert instance["util_gpu"] == pytest.approx(1.0) and instance["sm_active"] == pytest.approx(0.5, abs=0.05)
    assert by_label["GPU 0"]["util_gpu"] == 0.0
    cuda = [{"uuid": machine.uuid(5), "pids": [os.getpid()], "ranks": [None]},
            {"uuid": machine.gpus[6].mig[1].uuid, "pids": [os.getpid()], "ranks": [None]}]
    assert select_job_gpus(gpus, cuda, {os.getpid()})["labels"] == ["GPU 5", "GPU 6 MIG 2"]
    assert job_gpu_util(gpus) == pytest.approx(1.0)
