"""GPU memory room from the job's own GPUs, device by device: another program's smaller GPU does not
shrink the job's room, and a job on two GPUs holds each device's peak against that device."""

from gpuprof.judge.sections.memory import analyse_memory

GB = 10 ** 9
STEPS = {"pid": 1, "count": 40, "window_start": 0.5, "window_end": 40.5, "batch_size": 32}


def mem(t, alloc, peak):
    return {"k": "mem", "pid": 1, "t": t, "alloc": alloc, "rss": None, "peak": peak}


def anatomy(params=1_000_000_000):        # 4 GB parameters, 4 GB gradients, 8 GB optimizer state
    return {"k": "memory_anatomy", "pid": 1, "optimizer": "AdamW", "params": params,
            "param_bytes": {"float32": 4 * params}, "grad_bytes": 4 * params, "state_bytes": 8 * params,
            "state": ["exp_avg", "exp_avg_sq"]}


def gpu(index, total, job, uuid=None):
    return {"index": index, "label": f"GPU {index}", "uuid": uuid or f"GPU-{index:08x}-aaaa", "job": job,
            "mem_total_bytes": total}


def system(gpus):
    return {"gpus": gpus, "memory": {"available_bytes": 64 * GB, "events": {}}}


def steady(peak, alloc=None):
    return [mem(float(i), alloc if alloc is not None else peak // 2, peak) for i in range(41)]


def test_the_room_is_the_jobs_gpu_not_another_programs_smaller_one():
    gpus = [gpu(0, 16 * GB, job=False), gpu(1, 80 * GB, job=True)]
    memory = analyse_memory([anatomy()], steady(40 * GB), [], STEPS, [], system(gpus), {})
    room = memory["headroom"]
    assert room["device_bytes"] == 80 * GB and room["peak_share"] == 0.5       # 40 of 80, not 40 of 16
    # 24 GB of activations at batch 32 and 16 GB that stay: (72 - 16) / 24 x 32 = 74
    assert room["largest_batch"] == 74


def test_a_job_on_two_gpus_holds_each_devices_peak_against_that_device():
    gpus = [gpu(0, 40 * GB, job=True), gpu(1, 80 * GB, job=True), gpu(2, 16 * GB, job=False)]
    devices = [{"uuid": "GPU-00000000-AAAA", "cuda_index": 0, "pids": [1], "peak_bytes": 30 * GB},
               {"uuid": "GPU-00000001-aaaa", "cuda_index": 1, "pids": [1], "peak_bytes": 30 * GB}]
    memory = analyse_memory([anatomy()], steady(60 * GB), [], STEPS, [], system(gpus), {}, devices)
    room = memory["headroom"]
    # The summed 60 GB against the smallest GPU would read 150% (or 375% against GPU 2, not the job's).
    assert room["device"] == "GPU 0" and room["device_bytes"] == 40 * GB and room["peak_share"] == 0.75
    assert [(d["label"], d["peak_share"]) for d in room["devices"]] == [("GPU 0", 0.75), ("GPU 1", 0.375)]
    # GPU 0 holds half the process's peak: 22 GB of activations, 8 GB that stay; (36 - 8) / 22 x 32 = 40
    assert room["largest_batch"] == 40 and "on GPU 0" in room["basis"]


def test_growth_runs_out_against_the_memory_of_the_devices_the_counters_add_up():
    gpus = [gpu(0, 40 * GB, job=True), gpu(1, 40 * GB, job=True), gpu(2, 8 * GB, job=False)]
    devices = [{"uuid": "GPU-00000000-aaaa", "pids": [1], "peak_bytes": 20 * GB},
               {"uuid": "GPU-00000001-aaaa", "pids": [1], "peak_bytes": 20 * GB}]
    growing = [mem(float(i), 10 * GB + i * GB // 10, 40 * GB) for i in range(41)]
    memory = analyse_memory([], growing, [], STEPS, [], system(gpus), {}, devices)
    found = memory["findings"][0]
    assert found["kind"] == "growth"
    # 14 GB allocated at the last step, 100 MB more a step, 80 GB on the two devices: 660 steps left
    assert found["steps_until_exhausted"] == 660


def test_without_per_device_peaks_an_unmarked_report_keeps_every_gpu():
    gpus = [{"index": 0, "mem_total_bytes": 80 * GB}, {"index": 1, "mem_total_bytes": 40 * GB}]
    memory = analyse_memory([], steady(20 * GB), [], STEPS, [], system(gpus), {})
    assert memory["headroom"]["device_bytes"] == 40 * GB and "devices" not in memory["headroom"]
