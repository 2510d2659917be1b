"""Rules, verdict and advice on plain section dictionaries: the edges of each decision."""

import re

import pytest

from gpuprof.advise import model
from gpuprof.advise.rank import advise
from gpuprof.judge.verdict.classify import classify


def sections(wait=0.8, source="dataloader", workers=0, cpu=0.95, user=None, read_rate=0.0, cores_busy=1.0,
             cpu_count=2, idle=0.4, gpus=None, copies=None, hdf5=None, measured=50, batch=None, sampler="RandomSampler"):
    wall = 10.0
    loader = {"where": "train.py:42", "batch_size": 32, "num_workers": workers, "sampler": sampler,
              "producer": {"batches": 100, "wall_s": wall, "cpu_s": cpu * wall,
                           "system_cpu_s": (cpu - (user if user is not None else cpu)) * wall,
                           "read_bytes": read_rate * wall, "read_chars": read_rate * wall},
              "batch": batch, "epochs": 1}
    return {
        "steps": {"count": measured + 1, "measured": measured, "data_wait_share": wait, "data_wait_source": source,
                  "window_s": 12.0, "data_wait_cpu_share": cpu if source == "before-first-forward" else None},
        "dataloaders": [loader] if source == "dataloader" else [],
        "system": {"cpu_count": cpu_count, "job": {"cores_busy": cores_busy}, "cpu": {"idle": idle, "iowait": 0.0},
                   "pressure": {"io_some": 0.0, "cpu_some": 0.0}, "disk": {"busy": 0.1}, "gpus": gpus or []},
        "copies": copies or {"count": 0}, "hdf5": hdf5 or [], "duration_s": 14.0, "probes": True,
    }


def judge(data):
    result = classify(data)
    return result["verdict"], [a["id"] for a in advise(result["evidence"], result["verdict"], result["findings"])]


def test_cpu_bound_single_process_loader_wants_workers_first():
    verdict, fixes = judge(sections())
    assert verdict["bottleneck"] == "input.cpu" and verdict["share"] == pytest.approx(0.8)
    assert verdict["summary"].startswith("Input-bound: 80% of each step waits on the DataLoader at train.py:42, "
                                         "whose single process is CPU-bound")
    assert "num-workers" in fixes[:3]
    # Echoing changes what the model trains on: it follows the fixes that keep training the same.
    assert fixes.index("batch-echoing") > fixes.index("num-workers")


def test_no_more_workers_when_every_core_is_busy():
    verdict, fixes = judge(sections(wait=0.5, workers=2, cpu=0.7, cores_busy=2.0, idle=0.02))
    assert verdict["bottleneck"] == "input.cpu"
    assert "num-workers" not in fixes and fixes[0] in ("batch-echoing", "cache-preprocessed", "device-preprocessing")


def test_kernel_time_reading_from_disk_is_input_disk():
    verdict, fixes = judge(sections(cpu=0.9, user=0.1, read_rate=200e6))
    assert verdict["bottleneck"] == "input.disk"
    assert "num-workers" in fixes[:2]


def test_idle_producers_are_latency_and_want_many_workers():
    verdict, fixes = judge(sections(wait=0.9, cpu=0.05))
    assert verdict["bottleneck"] == "input.latency" and fixes[0] == "num-workers"


@pytest.mark.parametrize("wait", [0.0, 0.1, 0.29])
def test_small_waits_are_compute_and_input_fixes_do_not_lead(wait):
    verdict, fixes = judge(sections(wait=wait))
    assert verdict["bottleneck"] == "compute"
    assert not fixes or fixes[0] not in ("num-workers", "uint8-transfer")


def test_the_input_threshold_is_inclusive():
    assert judge(sections(wait=0.30))[0]["bottleneck"] == "input.cpu"


def test_handwritten_loops_lead_with_device_side_fixes():
    verdict, fixes = judge(sections(wait=0.85, source="before-first-forward", cpu=0.97))
    assert verdict["bottleneck"] == "input.cpu" and "before each forward" in verdict["summary"]
    # a cheaper batch, cached or built on the device, first: the hand-written loop corpus program
    # measured its cache at 2.54x (bench/corpus/single_process_loop)
    assert fixes[0] in ("cache-preprocessed", "device-preprocessing") and "num-workers" not in fixes


def test_hdf5_cache_fix_names_chunks_and_a_cache_size():
    hdf5 = [{"file": "x.h5", "dataset": "/images", "chunks": [32, 1, 64, 128], "chunk_bytes": 1 << 20,
             "rdcc_nbytes": 256 * 1024, "rdcc_nslots": 521, "cache_holds_a_chunk": False, "reads": 512,
             "chunks_touched": 512, "read_amplification": 32.0}]
    result = classify(sections(wait=0.9, hdf5=hdf5))
    advice = advise(result["evidence"], result["verdict"], result["findings"])
    fix = next(a for a in advice if a["id"] == "hdf5-chunk-cache")
    assert [a["id"] for a in advice].index("hdf5-chunk-cache") < 3
    assert "rdcc_nbytes=33554432" in fix["snippet"]          # 32 random samples x 1 MiB chunks
    assert "[32, 1, 64, 128]" in fix["detail"] and "[1, 1, 64, 128]" in fix["detail"]
    nslots = int(fix["snippet"].split("rdcc_nslots=")[1].split(")")[0])
    assert nslots >= 3200 and all(nslots % d for d in range(2, int(nslots ** 0.5) + 1))


def test_echoing_states_its_effect_on_randomness():
    result = classify(sections())
    echo = next(a for a in advise(result["evidence"], result["verdict"]) if a["id"] == "batch-echoing")
    assert "Randomness" in echo["detail"] and echo["estimated_speedup"] <= 1 / (1 - 0.8) + 1e-9


def test_every_estimate_is_bounded_by_removing_the_wait():
    for wait in (0.35, 0.6, 0.95):
        result = classify(sections(wait=wait, cpu=0.05))
        for item in advise(result["evidence"], result["verdict"]):
            # The pessimistic end removes no more than the wait; the optimistic end no more than the
            # wait and the compute part's slowdown from sharing the cores, within the steps' spread.
            optimistic_ceiling = (1 + model.STEP_SPREAD_MAX) / ((1 - wait) * model.COMPUTE_RELIEF_CPU_ONLY)
            assert item["estimate"]["low"] <= 1 / (1 - wait) + 1e-6, item
            assert item["estimate"]["low"] <= item["estimated_speedup"] <= item["estimate"]["high"], item
            assert 1.0 <= item["estimate"]["high"] <= optimistic_ceiling + 0.01, item


def test_uint8_only_when_batches_could_be_uint8():
    copies = {"count": 100, "bytes": 4e9, "pageable_bytes": 4e9, "seconds": 6.0, "timed": 100}
    gpus = [{"util_gpu": 0.3, "mem_used_max_bytes": 10e9, "mem_total_bytes": 80e9}]
    candidate = {"dtype": "float32", "shape": [256, 3, 128, 128], "uint8_candidate": True, "uint8_form": "0..255"}
    verdict, fixes = judge(sections(wait=0.05, gpus=gpus, copies=copies, batch=candidate))
    assert verdict["bottleneck"] == "transfer.h2d"
    assert {"pin-memory", "uint8-transfer"} <= set(fixes[:3])
    verdict, fixes = judge(sections(wait=0.05, gpus=gpus, copies=copies, batch=dict(candidate, uint8_candidate=False)))
    assert "uint8-transfer" not in fixes


def test_gpu_idle_with_data_ready_is_host_overhead():
    gpus = [{"util_gpu": 0.2, "mem_used_max_bytes": 5e9, "mem_total_bytes": 80e9}]
    verdict, fixes = judge(sections(wait=0.02, gpus=gpus))
    assert verdict["bottleneck"] == "host.overhead" and fixes[0] == "larger-batch"


def test_busy_gpu_is_compute_with_device_fixes():
    gpus = [{"util_gpu": 0.97, "mem_used_max_bytes": 20e9, "mem_total_bytes": 80e9}]
    verdict, fixes = judge(sections(wait=0.02, gpus=gpus))
    assert verdict["bottleneck"] == "compute" and fixes[0] == "mixed-precision"


def test_without_steps_the_verdict_is_a_labelled_low_confidence_guess():
    data = sections()
    data["steps"] = {"count": 0, "data_wait_share": None}
    verdict, _ = judge(data)
    assert verdict["basis"] == "sampler" and verdict["confidence"] <= 0.45 and "a guess" in verdict["summary"]


def test_few_steps_lower_the_confidence_and_say_so():
    many, _ = judge(sections(measured=50))
    few, _ = judge(sections(measured=5))
    assert few["confidence"] < many["confidence"] and "only 5 steps" in few["summary"]


def test_near_ties_go_to_the_fix_with_less_effort_and_say_so():
    from gpuprof.advise.rank import _prefer_less_effort_among_near_ties
    item = lambda fix_id, gain, effort: {"id": fix_id, "estimated_speedup": gain, "effort": effort,  # noqa: E731
                                         "addresses": ["input.cpu"]}
    ranked = _prefer_less_effort_among_near_ties(
        [item("cache-preprocessed", 1.90, 2), item("num-workers", 1.82, 1), item("device-preprocessing", 1.5, 3)],
        "input.cpu")
    assert [a["id"] for a in ranked] == ["num-workers", "cache-preprocessed", "device-preprocessing"]
    assert ranked[0]["ranked_by"].startswith("ahead of cache-preprocessed (1.90x)")
    far = _prefer_less_effort_among_near_ties([item("cache-preprocessed", 1.90, 2), item("num-workers", 1.5, 1)],
                                              "input.cpu")
    assert far[0]["id"] == "cache-preprocessed" and "ranked_by" not in far[1]


def advice_of(data):
    result = classify(data)
    return {a["id"]: a for a in advise(result["evidence"], result["verdict"], result["findings"])}


def with_memory(data, available=None, rss=None, open_files=None):
    data["system"]["memory"] = {"available_bytes": available, "open_files_limit": open_files}
    data["system"]["job"]["process_rss_peak_bytes"] = rss
    return data


def test_latency_workers_are_bounded_per_core_and_say_why():
    fixes = advice_of(sections(wait=0.94, cpu=0.02, cpu_count=2))
    assert fixes["num-workers"]["detail"].startswith("num_workers 0 -> 8")
    assert "at most 4 per core" in fixes["num-workers"]["why"]
    assert fixes["num-workers"]["change"] == {"num_workers": 8, "persistent_workers": True}


def test_workers_are_bounded_by_the_memory_the_machine_has():
    fixes = advice_of(with_memory(sections(wait=0.94, cpu=0.02, cpu_count=8), available=2 * 2**30, rss=400 * 2**20))
    assert fixes["num-workers"]["detail"].startswith("num_workers 0 -> 2")
    assert "memory: 2.0 GiB available" in fixes["num-workers"]["why"]


def test_no_change_from_x_to_x_when_workers_are_at_the_bound():
    fixes = advice_of(sections(wait=0.6, workers=8, cpu=0.02, cpu_count=2))
    assert "num-workers" not in fixes
    assert "concurrent-fetch" in fixes          # what still helps a remote store


def test_the_reason_states_the_figure_the_range_is_built_around():
    item = advice_of(sections())["num-workers"]
    stated = float(re.search(r"a step is about ([0-9.]+)x faster at these figures", item["why"]).group(1))
    assert item["estimate"]["low"] <= stated <= item["estimate"]["high"] and "up to" not in item["why"]


def test_cpu_budget_bounds_workers_when_compute_fills_the_cores():
    # Compute takes half of each step on both cores of a CPU-only machine; producers need a core:
    # (1.0 + 0.5 * 2) / 2 cores = 1 -> no worker count can make a step faster.
    data = sections(wait=0.5, cpu=0.95)
    data["dataloaders"][0]["producer"]["cpu_s"] = 12.0       # one core over the 12 s window
    assert "num-workers" not in advice_of(data)


def hdf5_entry(cache, reopened):
    return [{"file": "images.h5", "dataset": "/images", "chunks": [32, 1, 64, 128], "chunk_bytes": 1 << 20,
             "rdcc_nbytes": cache, "rdcc_nslots": 521, "read_amplification": 32.0, "reads": 512,
             "chunks_touched": 512, "opens": 512 if reopened else 1, "reopened_per_read": reopened,
             "cache_holds_a_chunk": cache >= (1 << 20)}]


def test_hdf5_cache_too_small_gets_a_bigger_cache():
    fix = advice_of(sections(hdf5=hdf5_entry(256 * 1024, False), sampler="SequentialSampler"))["hdf5-chunk-cache"]
    assert "chunk cache 262144 B -> 2097152 B" in fix["detail"] and "keep its handle" not in fix["detail"]


def test_hdf5_reopened_per_read_names_the_handle_and_never_x_to_x():
    fix = advice_of(sections(hdf5=hdf5_entry(2097152, True), sampler="SequentialSampler"))["hdf5-chunk-cache"]
    assert "keep its handle" in fix["detail"] and "->" not in fix["detail"]
    assert 'self.data = h5py.File(path, "r"' in fix["snippet"]


def test_hdf5_cache_already_right_and_handle_kept_gives_no_fix():
    assert "hdf5-chunk-cache" not in advice_of(sections(hdf5=hdf5_entry(2097152, False), sampler="SequentialSampler"))


def test_hand_written_loop_waiting_on_latency_gets_a_prefetch_thread():
    fixes = advice_of(sections(wait=0.6, source="before-first-forward", cpu=0.05))
    assert "background-prefetch" in fixes
    assert "ThreadPoolExecutor" in fixes["background-prefetch"]["snippet"]


def contended(wait=0.05, queued=0.35, producer_cpu_s=8.4, cores_busy=2.0, idle=0.02):
    data = sections(wait=wait, workers=2, cpu=0.6, cores_busy=cores_busy, idle=idle)
    producer = data["dataloaders"][0]["producer"]
    producer["runqueue_s"] = queued * producer["wall_s"]
    producer["cpu_s"] = producer_cpu_s                  # over the 12 s window: 0.7 cores of the 2 busy
    producer["system_cpu_s"] = 0.0
    return data


def test_workers_starved_of_cpu_without_a_wait_are_input_bound_contended():
    verdict, fixes = judge(contended())
    assert verdict["bottleneck"] == "input.cpu" and verdict["evidence"]["contended"] is True
    assert verdict["share"] == pytest.approx(0.35)
    assert verdict["summary"].startswith("Input-bound (contended)")
    assert "num-workers" not in fixes and fixes[0] in ("batch-echoing", "cache-preprocessed", "device-preprocessing")


def test_contended_estimates_save_a_share_of_the_cpu():
    result = classify(contended(producer_cpu_s=9.6, cores_busy=2.0))       # 0.8 of 2 cores: 40% of the CPU
    advice = {a["id"]: a for a in advise(result["evidence"], result["verdict"], result["findings"])}
    assert result["verdict"]["share"] == pytest.approx(0.4)
    estimate = advice["batch-echoing"]["estimate"]
    assert estimate["low"] < 1 / (1 - 0.4 * 0.5) < estimate["high"]
    assert "of the job's CPU" in advice["batch-echoing"]["why"]


def test_many_workers_with_little_cpu_that_slow_the_training_threads_are_the_verdict():
    # Eight workers making cheap batches on two cores: 20% of the job's CPU, yet the training's
    # threads wait for a core 19% of the time they want one (the shape of an 8-worker HDF5 trainer
    # whose free input ran 1.45x faster).
    data = contended(wait=0.13, queued=0.65, producer_cpu_s=4.8, cores_busy=2.0)
    data["steps"]["training_cpu"] = {"run_s": 10.0, "wait_s": 2.33, "wait_share": 0.189, "threads": 11}
    verdict, _ = judge(data)
    assert verdict["bottleneck"] == "input.cpu" and verdict["evidence"]["contended"] is True
    assert verdict["share"] == pytest.approx(0.13 + 0.87 * 0.189, abs=0.005)
    data["steps"]["training_cpu"] = dict(data["steps"]["training_cpu"], wait_s=1.0, wait_share=0.09)
    assert judge(data)[0]["bottleneck"] == "compute"           # a little waiting for a core is no verdict


def test_on_a_gpu_contended_workers_cost_the_steps_only_while_the_gpu_idles():
    # Workers and the training thread share two cores, yet the GPU ran a kernel 80% of the steps:
    # the slowed training thread can cost at most the 20% the GPU idled, below a verdict.
    def with_gpu(util):
        data = contended(producer_cpu_s=9.6)
        data["system"]["gpus"] = [{"util_gpu": util, "mem_used_max_bytes": 5e9, "mem_total_bytes": 80e9}]
        return data
    assert judge(with_gpu(0.8))[0]["bottleneck"] == "compute"
    verdict, _ = judge(with_gpu(0.35))
    assert verdict["bottleneck"] == "input.cpu" and verdict["evidence"]["contended"] is True
    assert verdict["share"] == pytest.approx(0.4)           # the workers' CPU share, under the GPU's 65% idle
    assert "the GPU idled 65% of the steps" in verdict["summary"]


def test_an_idle_core_or_unqueued_workers_are_not_contended():
    assert judge(contended(idle=0.4, cores_busy=1.2))[0]["bottleneck"] == "compute"
    assert judge(contended(queued=0.05))[0]["bottleneck"] == "compute"


@pytest.mark.parametrize("user", [0.38, 0.42, 0.47])
def test_a_reader_that_also_decodes_gets_one_verdict(user):
    # Cold files and real CPU work: CPU/wall ~0.7, user time varying run to run. The larger part of
    # the producers' time (reading: kernel + blocked) decides, the same every time.
    verdict, _ = judge(sections(wait=0.6, cpu=0.7, user=user, read_rate=50e6))
    assert verdict["bottleneck"] == "input.disk"
    assert verdict["evidence"]["producer_time_split"]["reading"] > verdict["evidence"]["producer_time_split"]["computing"]


def _num_workers_fix(data):
    result = classify(data)
    return next(a for a in advise(result["evidence"], result["verdict"], result["findings"]) if a["id"] == "num-workers")


def test_on_a_cpu_only_machine_workers_come_with_fewer_intra_op_threads():
    # The training's 2 intra-op threads (torch's default, one per core) and 2 workers would share 2
    # cores: the fix keeps one thread in the training process, and try applies the same.
    data = sections()
    data["dataloaders"][0]["torch_threads"] = 2
    fix = _num_workers_fix(data)
    assert fix["change"] == {"num_workers": 2, "persistent_workers": True, "torch_threads": 1}
    assert fix["snippet"].startswith("torch.set_num_threads(1)")
    assert "torch.set_num_threads(1) in the training process" in fix["detail"]


def test_threads_stay_as_they_are_with_a_gpu_or_when_they_fit():
    gpu = [{"index": 0, "util_gpu": 0.3, "mem_used_max_bytes": 1e9, "mem_total_bytes": 8e9, "job_memory_bytes": 1e9}]
    data = sections(gpus=gpu)
    data["dataloaders"][0]["torch_threads"] = 8
    assert "torch_threads" not in _num_workers_fix(data)["change"]
    data = sections(cpu_count=8, cores_busy=1.0, idle=0.8)
    data["dataloaders"][0]["torch_threads"] = 1
    assert "torch_threads" not in _num_workers_fix(data)["change"]


def test_a_worthwhile_setting_goes_ahead_of_code_changes_and_says_why():
    from gpuprof.advise.rank import _settings_before_rewrites
    item = lambda fix_id, gain, change=None, high=None: {  # noqa: E731
        "id": fix_id, "estimated_speedup": gain, "effort": 1, "addresses": ["input.cpu"], "change": change,
        "estimate": {"low": gain * 0.8, "high": high or gain * 1.2}}
    ranked = _settings_before_rewrites(
        [item("cache-preprocessed", 1.80), item("device-preprocessing", 1.80),
         item("num-workers", 1.34, {"num_workers": 2}, high=1.9), item("batch-echoing", 1.80, {"echo": 2})], "input.cpu")
    assert [a["id"] for a in ranked] == ["num-workers", "cache-preprocessed", "device-preprocessing", "batch-echoing"]
    assert ranked[0]["ranked_by"].startswith("ahead of cache-preprocessed (1.44–2.16x): a setting")
    # A setting that buys little stays behind: the code change's estimate is then far larger.
    small = _settings_before_rewrites([item("cache-preprocessed", 1.80), item("num-workers", 1.10, {"num_workers": 2})],
                                      "input.cpu")
    assert [a["id"] for a in small] == ["cache-preprocessed", "num-workers"] and "ranked_by" not in small[1]
    # A setting whose range does not reach the code change's midpoint stays behind it
    # (examples/short_steps_tabular.py: num-workers 1.08-1.38x against cache-preprocessed 1.25-2.48x).
    below = _settings_before_rewrites([item("cache-preprocessed", 1.87), item("num-workers", 1.23, {"num_workers": 2},
                                                                             high=1.38)], "input.cpu")
    assert [a["id"] for a in below] == ["cache-preprocessed", "num-workers"]


def test_the_fix_list_heading_says_how_it_is_ranked():
    from gpuprof.advise.wording import advice_heading
    heading = advice_heading({"verdict": {"bottleneck": "input.cpu"}})
    assert "in the order to try them" in heading and "settings gpuprof can measure ahead of code changes" in heading
    assert "then by estimated speed-up" in heading
    assert advice_heading({"verdict": {"bottleneck": "memory.oom"}}) == "Fixes, ranked by the memory each frees"


def test_compute_on_a_cpu_names_whose_cores_are_busy():
    from gpuprof.judge.verdict.bottlenecks import compute
    from tests.unit.fixes.cases import LOADER, evidence
    with_workers = compute.evaluate(evidence(wait_share=0.03, cores_busy=1.9, loader=dict(LOADER, num_workers=4)))
    assert "the job (the training process and 4 DataLoader workers) keeps 1.9 of 4 cores busy" in with_workers.reason
    measured = compute.evaluate(evidence(wait_share=0.03, cores_busy=1.9, training_cores=1.1,
                                         loader=dict(LOADER, num_workers=4)))
    assert "the training process keeps 1.1 of 4 cores busy" in measured.reason


def test_a_producer_whose_tensor_work_runs_on_intra_op_threads_is_cpu_bound_not_latency():
    """The producing thread runs 40% of the time and is blocked the rest while torch's intra-op
    threads do its tensor work: its process's CPU meanwhile says it computes, it does not wait."""
    data = sections(wait=0.8, cpu=0.4)
    verdict, _ = judge(data)
    assert verdict["bottleneck"] == "input.latency"                  # the thread alone looks half idle
    data["dataloaders"][0]["producer"]["process_cpu_s"] = 0.98 * data["dataloaders"][0]["producer"]["wall_s"]
    verdict, _ = judge(data)
    assert verdict["bottleneck"] == "input.cpu"
    assert verdict["evidence"]["producer_time_split"]["computing"] > 0.9


def test_the_clock_share_is_against_the_clock_the_data_sheet_states_its_peaks_at():
    # NVML's top clock may itself be held low (a simulated device in slow motion reads 792 of 792 MHz);
    # an H100's data-sheet peaks are at 1980 MHz, so it computes at 40% of them.
    def share(name, clock, top):
        gpus = [{"name": name, "util_gpu": 0.97, "sm_clock_mhz": clock, "sm_clock_max_mhz": top,
                 "mem_used_max_bytes": 20e9, "mem_total_bytes": 80e9}]
        return classify(sections(wait=0.02, gpus=gpus))["evidence"].gpu_clock_share
    assert share("NVIDIA H100 80GB HBM3", 792, 792) == pytest.approx(0.4)
    assert share("NVIDIA H100 80GB HBM3", 1980, 1980) == pytest.approx(1.0)
    assert share("Some GPU", 900, 1800) == pytest.approx(0.5)          # no data sheet: NVML's top clock
