"""GPU figures in the report: over the measured steps, of the job's own GPUs, with SM activity beside
utilisation, clocks judged while busy, and lost or MIG devices kept apart. The GPU records come from
the NVML sampler run against the simulated GPU's NVML face on a hand-moved clock, from the kernels
each test has the simulated devices run."""

import os

import pytest

from gpuprof.judge.sections.gpus import slowdown_notes, sm_activity_notes, summarize_gpus
from gpuprof.judge.sections.job_gpus import job_gpu_util, select_job_gpus
from gpuprof.gate.decide import FAIL, PASS, decide
from gpuprof.record.reader import load_run
from gpuprof.present.reporting.build import build_report
from gpuprof.present.reporting.gpu_section import job_gpu_figures
from gpuprof.capture.samplers.nvml import NvmlSampler
from gpuprof.testing.simgpu import Gpu, Machine, MigInstance
from tests.conftest import FakeClock, ROOT
from tests.simulated_nvml import LiveProcesses, hold_memory, keep_busy, open_machine

GOLDEN = os.path.join(ROOT, "tests", "golden", "runs")


def machine_of(count=1, **gpu):
    """A machine of `count` GPUs, without GPM (utilisation alone) unless asked, clocked in real time."""
    return Machine(gpus=[Gpu(**{"gpm": False, **gpu}) for _ in range(count)], time_scale=1.0)


def sampled(tmp_path, start, end, machine, work=(), holders=(), step=0.1, pids=()):
    """The gpu.json an NVML sampler writes from `start` to `end` reading `machine`, whose devices run
    `work`: [(GPU index or (index, GPU instance), from, to, share of the time, share of the SMs)],
    and where `holders` [(GPU index, pid, bytes)] hold memory."""
    clock = FakeClock(start)
    nvml, folder = open_machine(tmp_path / "machine", machine, clock)
    for device, lo, hi, util, sm_active in work:
        gpu, instance = device if isinstance(device, tuple) else (device, None)
        keep_busy(folder, gpu, lo, hi, util, sm_active, instance=instance)
    for gpu, pid, nbytes in holders:
        hold_memory(folder, gpu, pid, nbytes)
    sampler = NvmlSampler(nvml, clock, job_pids=lambda: set(pids))
    assert sampler.start()
    while clock.now <= end + 1e-9:
        sampler.tick_pcie()
        sampler.tick()
        clock.advance(step)
    sampler.stop()
    return sampler.to_dict()


def test_utilisation_is_taken_over_the_measured_steps_and_the_whole_run_is_a_second_figure(tmp_path):
    record = sampled(tmp_path, 100.0, 119.95, machine_of(), work=[(0, 110.0, 121.0, 0.9, 1.0)])
    [gpu], _ = summarize_gpus(record, (110.0, 120.0))
    assert gpu["util_gpu"] == pytest.approx(0.9) and gpu["figures_over"] == "steps"
    assert gpu["util_gpu_run"] == pytest.approx(0.45, abs=0.01)
    [whole], _ = summarize_gpus(record, None)
    assert whole["util_gpu"] == pytest.approx(0.45, abs=0.01) and whole["figures_over"] == "run"


def test_readings_that_still_look_back_before_the_steps_are_left_out_of_the_steps_figure(tmp_path):
    """A reading averages NVML's past sample period (200 ms on an H200): one taken 0.1 s into the
    steps still holds 0.1 s of the idle start-up before them."""
    record = sampled(tmp_path, 100.0, 111.95, machine_of(), work=[(0, 99.0, 109.8, 0.9, 1.0), (0, 110.0, 113.0, 0.9, 1.0)])
    [gpu], _ = summarize_gpus(record, (110.0, 112.0))
    assert gpu["util_gpu"] == pytest.approx(0.9) and gpu["figures_over"] == "steps"


def compute_heavy_with(gpu_record):
    record = load_run(os.path.join(GOLDEN, "compute_heavy"))
    record["gpu"] = gpu_record
    return build_report(record)


def test_the_report_and_the_gate_read_the_steps_figure_not_start_up(tmp_path):
    # compute_heavy's measured steps run from 135.02 to 136.48 on the sampler's clock; before them
    # the GPU idles through imports and start-up.
    record = sampled(tmp_path, 131.5, 137.3, machine_of(), work=[(0, 135.0, 138.0, 0.95, 1.0)])
    report = compute_heavy_with(record)
    status = report["system"]["gpu_status"]
    assert status["job_util"] == pytest.approx(0.95) and status["job_util_over"] == "steps"
    assert status["job_util_run"] < 0.5
    checks = decide(report, {"min_gpu_util": 0.9}).checks
    assert checks[0].status == PASS and checks[0].measured == pytest.approx(0.95)
    assert "over the measured steps" in checks[0].detail
    assert decide(report, {"min_gpu_util": 0.97}).checks[0].status == FAIL


EIGHT = [machine_of(8).uuid(i) for i in range(8)]
HOST_PIDS = 3_000_000       # NVML lists PIDs of the host's namespace: the job's own plus this


def eight_gpus_one_busy(tmp_path, pids):
    """GPU 5 of eight busy; each GPU lists one process (pids[i]), by its host PID, memory unknown."""
    machine = machine_of(8)
    machine.pid_mode, machine.host_pid_offset, machine.used_memory_known = "host", HOST_PIDS, False
    return sampled(tmp_path, 10.0, 12.0, machine, work=[(5, 9.0, 13.0, 0.95, 1.0)],
                   holders=[(i, pid, 1 << 30) for i, pid in enumerate(pids)])


def test_the_jobs_gpu_is_found_by_the_uuid_torch_opened_not_by_averaging_all(tmp_path):
    with LiveProcesses(8) as pids:
        gpus, _ = summarize_gpus(eight_gpus_one_busy(tmp_path, pids), (10.0, 12.0))
    cuda = [{"uuid": EIGHT[5].upper(), "name": "Fake GPU", "cuda_index": 0,
             "pids": [41], "ranks": [None]}]
    selection = select_job_gpus(gpus, cuda, {41})       # NVML lists host PIDs: none match
    assert selection["basis"] == "uuid" and selection["labels"] == ["GPU 5"]
    assert job_gpu_util(gpus) == pytest.approx(0.95)
    assert [g["job"] for g in gpus] == [False] * 5 + [True] + [False] * 2


def test_without_cuda_devices_the_jobs_pids_in_nvml_pick_the_gpu_even_without_memory_figures(tmp_path):
    with LiveProcesses(8) as pids:
        gpus, _ = summarize_gpus(eight_gpus_one_busy(tmp_path, pids), (10.0, 12.0))
    selection = select_job_gpus(gpus, None, {HOST_PIDS + pids[5]})
    assert selection["basis"] == "pids" and selection["labels"] == ["GPU 5"]
    assert job_gpu_util(gpus) == pytest.approx(0.95)


def test_when_nothing_says_which_gpus_all_are_averaged_and_the_report_says_so(tmp_path):
    record = load_run(os.path.join(GOLDEN, "compute_heavy"))
    record["gpu"] = sampled(tmp_path, 131.5, 137.3, machine_of(8), work=[(5, 131.0, 138.0, 0.95, 1.0)])      # no process
    report = build_report(record)
    status = report["system"]["gpu_status"]
    assert status["job_gpus"]["basis"] == "unknown" and status["job_util"] == pytest.approx(0.95 / 8)
    assert any("which GPUs the job used is unknown" in note and "all 8 GPUs" in note for note in report["notes"])


def test_each_gpu_is_named_by_index_and_uuid_in_the_rendered_report(tmp_path):
    from gpuprof.present.render import formats
    record = load_run(os.path.join(GOLDEN, "compute_heavy"))
    # The saved job's PID, as NVML lists it: this live process seen from another PID namespace.
    machine = machine_of(2)
    machine.pid_mode, machine.host_pid_offset = "host", (record["meta"].get("pid") or 0) - os.getpid()
    record["gpu"] = sampled(tmp_path, 131.5, 137.3, machine, work=[(0, 131.0, 138.0, 0.5, 1.0), (1, 131.0, 138.0, 0.5, 1.0)],
                            holders=[(0, os.getpid(), 2 << 30), (1, os.getpid(), 2 << 30)])
    report = build_report(record)
    for fmt in ("console", "markdown", "html"):
        text = formats.render(fmt, report, record=record)
        assert EIGHT[0] in text and EIGHT[1] in text, fmt
        assert "over the measured steps" in text, fmt


def test_a_kernel_running_all_the_time_on_few_sms_is_said_beside_utilisation(tmp_path):
    record = sampled(tmp_path / "few", 10.0, 12.0, machine_of(gpm=True, active_sm_occupancy=0.5),
                     work=[(0, 9.0, 13.0, 0.95, 0.2 / 0.95)])
    gpus, _ = summarize_gpus(record, (10.0, 12.0))
    assert gpus[0]["sm_active"] == pytest.approx(0.2)
    [note] = sm_activity_notes(gpus)
    assert "95% of the time" in note and "20% of its SMs were active (SM activity, GPM" in note
    busy, _ = summarize_gpus(sampled(tmp_path / "many", 10.0, 12.0, machine_of(gpm=True),
                                     work=[(0, 9.0, 13.0, 0.95, 0.8 / 0.95)]), (10.0, 12.0))
    assert sm_activity_notes(busy) == []


def test_the_compute_verdict_states_sm_activity_where_gpm_gives_it():
    from gpuprof.judge.verdict.classify import classify
    gpus = [{"util_gpu": 0.95, "sm_active": 0.3, "mem_used_max_bytes": 2e10, "mem_total_bytes": 8e10, "job": True}]
    sections = {"steps": {"count": 51, "measured": 50, "data_wait_share": 0.02, "data_wait_source": "dataloader",
                          "window_s": 10.0},
                "dataloaders": [], "system": {"cpu_count": 8, "job": {"cores_busy": 1.0}, "cpu": {"idle": 0.5},
                                              "gpus": gpus},
                "copies": {"count": 0}, "hdf5": []}
    verdict = classify(sections)["verdict"]
    assert verdict["bottleneck"] == "compute" and verdict["evidence"]["gpu_sm_active"] == 0.3
    assert "a kernel was running on the GPU 95% of the time (30% of its SMs active, GPM)" in verdict["reason"]


def test_an_idle_gap_under_a_power_cap_is_no_slowdown(tmp_path):
    # Busy at the top clock with the power-cap bit set, then idle at 345 MHz: the old whole-run mean
    # (about 1160 MHz) read as a slowdown.
    capped = machine_of(busy_clock_reasons=0x4, idle_clock_reasons=0x4)
    record = sampled(tmp_path, 10.0, 13.95, capped, work=[(0, 10.0, 12.0, 0.9, 1.0)])
    gpus, _ = summarize_gpus(record, None)
    assert gpus[0]["sm_clock_mhz"] == 1980 and abs(gpus[0]["busy_samples"] - 20) <= 1 and gpus[0]["samples"] == 40
    assert gpus[0]["slowdowns"] == {"sw_power_cap": 1.0}
    assert slowdown_notes(gpus) == []


def test_a_busy_gpu_held_down_by_heat_is_named_with_its_share_of_the_busy_samples(tmp_path):
    hot = machine_of(busy_sm_clock_mhz=1300, busy_clock_reasons=0x40)
    record = sampled(tmp_path, 10.0, 13.95, hot, work=[(0, 10.0, 12.0, 0.9, 1.0)])
    gpus, _ = summarize_gpus(record, None)
    [note] = slowdown_notes(gpus)
    assert note.startswith("GPU 0 ran at 1300 of its 1980 MHz SM clock on average while busy")
    assert "hardware thermal slowdown 100% of its busy samples" in note and "cooling" in note


def test_a_lost_gpu_keeps_its_figures_and_is_named_in_a_note(tmp_path):
    record = load_run(os.path.join(GOLDEN, "compute_heavy"))
    machine = machine_of(3)
    machine.gpus[2].fail_after_reads = 10
    record["gpu"] = dict(sampled(tmp_path, 131.5, 137.3, machine, work=[(i, 131.0, 138.0, 0.5, 1.0) for i in range(3)]),
                         late_ticks=4)
    report = build_report(record)
    gpus = report["system"]["gpus"]
    assert gpus[2]["lost"] and gpus[2]["samples"] == 10 and gpus[0]["samples"] > 50
    [note] = [n for n in report["notes"] if "stopped answering NVML" in n]
    assert note.startswith(f"GPU 2 ({machine.uuid(2)}") and "the other GPUs were sampled on" in note
    assert "the NVML sampler fell behind 4 times; its intervals were stretched" in report["notes"]


def test_a_mig_instance_takes_its_utilisation_from_gpm_and_stands_for_its_gpu(tmp_path):
    machine = machine_of(2, gpm=True)
    machine.gpus[1].mig = [MigInstance(gpu_instance_id=1), MigInstance(gpu_instance_id=2)]
    work = [(0, 9.0, 13.0, 0.6, 1.0)] + [((1, j), 9.0, 13.0, 0.6, 0.5 / 0.6) for j in (1, 2)]
    record = sampled(tmp_path, 10.0, 12.0, Machine(**machine.to_dict()), work=work)
    gpus, _ = summarize_gpus(record, (10.0, 12.0))
    instance = gpus[2]
    assert instance["label"] == "GPU 1 MIG 1" and instance["util_source"] == "gpm"
    assert instance["util_gpu"] == pytest.approx(0.6) and instance["sm_active"] == pytest.approx(0.5)
    cuda = [{"uuid": instance["uuid"], "name": "MIG", "cuda_index": 0, "pids": [5], "ranks": [None]}]
    assert select_job_gpus(gpus, cuda, {5})["labels"] == ["GPU 1 MIG 1"]
    everything = select_job_gpus(gpus, None, set())
    assert everything["basis"] == "unknown" and "GPU 1" not in everything["labels"]


def test_each_rank_is_shown_with_its_own_gpu(tmp_path, monkeypatch):
    from gpuprof.present.render import formats
    from gpuprof.present.reporting import build
    record = load_run(os.path.join(GOLDEN, "ddp_straggler"))
    record["gpu"] = sampled(tmp_path, 187.0, 196.1, machine_of(2), work=[(0, 186.0, 197.0, 0.9, 1.0), (1, 186.0, 197.0, 0.3, 1.0)])
    real = build.probe_sections

    def with_devices(groups, meta):
        sections, notes = real(groups, meta)
        sections["cuda_devices"] = [{"uuid": EIGHT[0], "name": "Fake GPU", "cuda_index": 0, "pids": [2740],
                                     "ranks": [0]},
                                    {"uuid": EIGHT[1], "name": "Fake GPU", "cuda_index": 1, "pids": [2741],
                                     "ranks": [1]}]
        return sections, notes

    monkeypatch.setattr(build, "probe_sections", with_devices)
    report = build_report(record)
    assert [[g["label"] for g in row["gpus"]] for row in report["ranks"]] == [["GPU 0"], ["GPU 1"]]
    assert report["ranks"][1]["gpus"][0]["util_gpu"] == pytest.approx(0.3)
    assert "GPU 1 (30%)" in formats.render("console", report, record=record, width=1000)   # no cell wrapped
    status = job_gpu_figures(record, {"steps": report["steps"], "cuda_devices": None}, [])[1]
    assert status["job_gpus"]["basis"] == "unknown"
