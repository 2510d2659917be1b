"""The copies section: device time, the host's wait for the device, start-up copies apart,
untimed copies estimated, and each rank's copies against its own window."""

import copy
import os

import pytest

from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.verdict.evidence import gather
from gpuprof.judge.verdict.bottlenecks import transfer_h2d
from gpuprof.judge.sections.transfers import analyse_copies, in_window_fraction

MB = 1 << 20
STEPS = {"pid": 7, "window_start": 10.0, "window_end": 20.0, "window_s": 10.0, "count": 51, "measured": 50}


def block(t0, t1, t, pid=7, n=0, nbytes=0, host_s=0.0, timed=0, timed_bytes=0, gpu_s=0.0, wait_s=0.0, **extra):
    event = {"k": "copies", "pid": pid, "t": t, "t0": t0, "t1": t1, "n": n, "bytes": nbytes, "pageable_bytes": nbytes,
             "pinned_bytes": 0, "non_blocking": 0, "small": 0, "host_s": host_s, "gpu_s": gpu_s, "timed": timed,
             "timed_bytes": timed_bytes, "timed_host_s": host_s if timed else 0.0, "wait_s": wait_s,
             "pin_n": 0, "pin_bytes": 0, "pin_s": 0.0, "dtypes": {"float32": nbytes}}
    event.update(extra)
    return event


def compute_bound_job():
    """model.to(device) before the first step (CUDA not yet initialised: untimed, seconds of host
    time), then 50 steps each copying 4 MiB with a plain blocking .to('cuda') that waits ~150 ms
    for the previous step's kernels and copies for 0.3 ms."""
    return [block(2.0, 2.0, 10.0, n=1, nbytes=400 * MB, host_s=3.5),
            block(10.1, 19.9, 20.5, n=50, nbytes=50 * 4 * MB, host_s=50 * 0.1503, timed=50,
                  timed_bytes=50 * 4 * MB, gpu_s=50 * 0.0003, wait_s=50 * 0.15)]


def test_a_compute_bound_job_with_blocking_copies_is_not_copy_bound():
    section = analyse_copies(compute_bound_job(), STEPS)
    assert section["count"] == 50 and section["basis"] == "device"
    assert section["seconds"] == pytest.approx(0.015)            # device time, not 7.5 s of host time
    assert section["share"] == pytest.approx(0.0015)
    assert section["device_wait_s"] == pytest.approx(7.5) and section["device_wait_share"] == pytest.approx(0.75)
    assert section["outside_steps"] == {"count": 1, "bytes": 400 * MB}   # the model's move, apart
    ev = gather({"steps": STEPS, "copies": section})
    assert ev.copy_share == pytest.approx(0.0015)
    assert transfer_h2d.evaluate(ev) is None


def test_the_same_job_read_as_before_would_have_been_copy_bound():
    """What the section is for: the host time of those copies is most of each step."""
    legacy = [{k: v for k, v in e.items() if k not in ("t0", "t1", "timed_bytes", "timed_host_s", "wait_s")}
              for e in compute_bound_job()]
    section = analyse_copies(legacy, STEPS)            # events written before blocks had spans
    assert section["basis"] == "host" and section["seconds"] == pytest.approx(11.015)


def test_a_blocking_copy_of_50_ms_that_the_events_time_at_2_ms():
    section = analyse_copies([block(12.0, 12.0, 13.0, n=1, nbytes=MB, host_s=0.050, timed=1, timed_bytes=MB,
                                    gpu_s=0.002, wait_s=0.048)], STEPS)
    assert section["seconds"] == pytest.approx(0.002) and section["device_wait_s"] == pytest.approx(0.048)


def test_untimed_copies_are_estimated_from_the_timed_ones_throughput():
    # 4 copies of 1 MiB in the window, 2 of them timed at 1 ms each: 1 MiB per ms.
    section = analyse_copies([block(11.0, 15.0, 16.0, n=4, nbytes=4 * MB, host_s=0.4, timed=2, timed_bytes=2 * MB,
                                    gpu_s=0.002)], STEPS)
    assert section["seconds"] == pytest.approx(0.004)
    assert section["timed"] == 2 and section["estimated"] == 2
    assert section["bytes_per_s"] == pytest.approx(2 * MB / 0.002, rel=1e-6)


def test_without_any_timed_copy_the_host_time_stands_and_says_so():
    section = analyse_copies([block(11.0, 15.0, 16.0, n=4, nbytes=4 * MB, host_s=0.4)], STEPS)
    assert section["basis"] == "host" and section["seconds"] == pytest.approx(0.4)
    finding = transfer_h2d.evaluate(gather({"steps": dict(STEPS, window_s=1.0), "copies": dict(section, share=0.4)}))
    assert finding is not None and "no copy was timed" in finding.reason
    assert finding.evidence["timed_by_cuda_events"] is False


def test_a_block_straddling_the_window_counts_its_share_inside():
    assert in_window_fraction({"t0": 5.0, "t1": 15.0, "t": 16.0}, (10.0, 20.0)) == pytest.approx(0.5)
    assert in_window_fraction({"t0": 21.0, "t1": 21.0, "t": 22.0}, (10.0, 20.0)) == 0.0   # after the last step
    assert in_window_fraction({"t0": None, "t1": None, "t": 12.0}, (10.0, 20.0)) == 1.0    # late read-backs only
    assert in_window_fraction({"t": 12.0}, (10.0, 20.0)) == 1.0                            # written before spans


def test_other_processes_copies_are_reported_apart_not_added():
    events = compute_bound_job() + [block(11.0, 19.0, 20.0, pid=8, n=500, nbytes=500 * MB, host_s=9.0, timed=500,
                                          timed_bytes=500 * MB, gpu_s=9.0)]
    section = analyse_copies(events, STEPS)
    assert section["count"] == 50 and section["seconds"] == pytest.approx(0.015)
    assert section["other_processes"] == {"processes": 1, "count": 500, "bytes": 500 * MB}


def test_an_estimated_share_lowers_the_findings_confidence_and_says_how_many():
    base = {"steps": dict(STEPS), "copies": {"count": 10, "bytes": 10 * MB, "pageable_bytes": 10 * MB, "seconds": 5.0,
                                             "share": 0.5, "basis": "device", "timed": 10, "estimated": 0}}
    estimated = copy.deepcopy(base)
    estimated["copies"].update(timed=5, estimated=5)
    full, partly = transfer_h2d.evaluate(gather(base)), transfer_h2d.evaluate(gather(estimated))
    assert partly.confidence < full.confidence
    assert "5 of 10 copies estimated" in partly.reason and partly.evidence["estimated_copies"] == 5


RUN = os.path.join(os.path.dirname(__file__), "..", "golden", "runs", "ddp_straggler")


def test_two_ranks_copies_are_each_against_their_own_window_never_summed():
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report, probe_sections

    record = load_run(RUN)
    trainers = [g for g in record["processes"] if any(e.get("k") == "step" for e in g)]
    assert len(trainers) == 2
    for group in trainers:
        steps, _ = probe_sections([group], record["meta"])
        start, end, window = (steps["steps"][k] for k in ("window_start", "window_end", "window_s"))
        seconds = 0.3 * window                       # each rank copies for 30% of its own window
        group.append(block(start + 0.01, end - 0.01, end, pid=group[0]["pid"], n=20, nbytes=20 * MB,
                           host_s=seconds, timed=20, timed_bytes=20 * MB, gpu_s=seconds))
    report = build_report(record)
    ranks = report["copies"]["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["share"] == pytest.approx(0.3, abs=0.01) for r in ranks)
    assert report["copies"]["share"] == pytest.approx(0.3, abs=0.01)          # not 0.6
    assert report["copies"]["count"] == 20
    judged = classify(dict(report, steps=report["steps"]))
    assert all(f["share"] < 0.35 for f in judged["findings"] if f["bottleneck"] == "transfer.h2d")
