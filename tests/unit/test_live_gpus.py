"""The live status line's GPU figure from the NVML sampler (on the simulated GPU's NVML face): the
job's own devices by the UUIDs its processes noted, a MIG instance by GPM, and a lost device left out
or said."""

import json

from gpuprof.capture.samplers.nvml import NvmlSampler
from gpuprof.testing.simgpu import Gpu, Machine, MigInstance
from gpuprof.commands.workflows.live import LiveStatus
from tests.simulated_nvml import keep_busy, open_machine

TWO = Machine(gpus=[Gpu(gpm=False), Gpu(gpm=False)])          # utilisation alone, no SM activity


def sampled(tmp_path, clock, machine, busy, ticks=4):
    """The sampler after `ticks` readings of `machine`, whose GPUs (or MIG instances: (gpu, instance))
    run kernels as `busy` says: {device: (share of the time, share of the SMs)}."""
    nvml, folder = open_machine(tmp_path / "machine", machine, clock)
    for device, (util, sm_active) in busy.items():
        gpu, instance = device if isinstance(device, tuple) else (device, None)
        keep_busy(folder, gpu, clock.now - 1.0, clock.now + 10.0, util, sm_active, instance=instance)
    sampler = NvmlSampler(nvml, clock)
    assert sampler.start()
    for _ in range(ticks):
        sampler.tick()
        clock.advance(0.2)
    return sampler


def job_on(folder, *uuids):
    (folder / "h-1-ab.jsonl").write_text(
        json.dumps({"k": "process", "pid": 1, "t": 0.0}) + "\n"
        + json.dumps({"k": "cuda_devices", "t": 1.0, "devices": [{"cuda_index": i, "uuid": u, "name": "x"}
                                                                for i, u in enumerate(uuids)]}) + "\n")
    return str(folder)


def gpu_part(line):
    return [part for part in line.split(" · ") if part.startswith("GPU")]


UUID_1 = TWO.uuid(1)


def test_the_jobs_own_gpu_not_the_mean_of_every_gpu(tmp_path, clock):
    sampler = sampled(tmp_path, clock, TWO, {0: (0.9, 1.0), 1: (0.3, 1.0)})
    assert gpu_part(LiveStatus(events_dir=str(tmp_path), clock=clock).line(None, sampler)) == ["GPU 60%"]
    live = LiveStatus(events_dir=job_on(tmp_path, UUID_1.upper()), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU 30%"]


def test_a_mig_instance_shows_gpms_activity_with_sm_activity_beside(tmp_path, clock):
    machine = Machine(gpus=[Gpu(mig=[MigInstance(gpu_instance_id=1), MigInstance(gpu_instance_id=2)])])
    sampler = sampled(tmp_path, clock, machine, {(0, 2): (0.7, 0.4 / 0.7)})
    assert sampler.stores == []             # NVML gives no utilisation in MIG mode
    live = LiveStatus(events_dir=job_on(tmp_path, machine.gpus[0].mig[1].uuid), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU 70% (SM 40%)"]


def test_a_lost_gpu_is_left_out_and_said_when_it_was_the_jobs(tmp_path, clock):
    machine = Machine(gpus=[Gpu(gpm=False), Gpu(gpm=False, fail_after_reads=2)])
    sampler = sampled(tmp_path, clock, machine, {0: (0.9, 1.0), 1: (0.3, 1.0)}, ticks=6)
    assert sampler.available and sampler.units[1].lost
    assert gpu_part(LiveStatus(clock=clock).line(None, sampler)) == ["GPU 90%"]
    live = LiveStatus(events_dir=job_on(tmp_path, UUID_1), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU lost"]
