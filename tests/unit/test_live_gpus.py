"""The live status line's GPU figure from the NVML sampler (the fake NVML): the job's own devices
by the UUIDs its processes noted, a MIG instance by GPM, and a lost device left out or said."""

import json

from gpuprof.samplers.nvml import NvmlSampler
from gpuprof.workflows.live import LiveStatus
from tests.conftest import load_fake_nvml


def sampled(clock, ticks=4, **fake):
    sampler = NvmlSampler(load_fake_nvml().FakeNvml(**fake), clock)
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


UUID_1 = "GPU-00000001-aaaa-4bbb-8ccc-000000000001"


def test_the_jobs_own_gpu_not_the_mean_of_every_gpu(tmp_path, clock):
    sampler = sampled(clock, gpus=2, util=lambda index: (0.9, 0.3)[index])
    assert gpu_part(LiveStatus(events_dir=str(tmp_path), clock=clock).line(None, sampler)) == ["GPU 60%"]
    live = LiveStatus(events_dir=job_on(tmp_path, UUID_1.upper()), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU 30%"]


def test_a_mig_instance_shows_gpms_activity_with_sm_activity_beside(tmp_path, clock):
    sampler = sampled(clock, gpus=1, mig={0: [1, 2]}, gpm=True, util=0.7, sm_active=0.4)
    assert sampler.stores == []             # NVML gives no utilisation in MIG mode
    live = LiveStatus(events_dir=job_on(tmp_path, "MIG-00000000-0002-4bbb-8ccc-000000000002"), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU 70% (SM 40%)"]


def test_a_lost_gpu_is_left_out_and_said_when_it_was_the_jobs(tmp_path, clock):
    sampler = sampled(clock, ticks=6, gpus=2, util=lambda index: (0.9, 0.3)[index], lost={1: 2})
    assert sampler.available and sampler.units[1].lost
    assert gpu_part(LiveStatus(clock=clock).line(None, sampler)) == ["GPU 90%"]
    live = LiveStatus(events_dir=job_on(tmp_path, UUID_1), clock=clock)
    assert gpu_part(live.line(None, sampler)) == ["GPU lost"]
