"""Every renderer shows the copies as the analysis now gives them: device time and its share of the
step, the host's wait for the device apart from it, how many copies were estimated or that host
time stood in, copies outside the steps and other processes' apart, and each rank's share."""

import pytest

from gpuprof.present.render import formats
from gpuprof.present.render.copies_text import copies_rows

MB = 10 ** 6
COPIES = {"observed": True, "count": 40, "bytes": 400 * MB, "pageable_bytes": 400 * MB, "seconds": 0.06,
          "basis": "device", "share": 0.075, "timed": 30, "estimated": 10, "bytes_per_s": 8000 * MB,
          "device_wait_s": 0.4, "device_wait_share": 0.5, "outside_steps": {"count": 2, "bytes": 90 * MB},
          "other_processes": {"processes": 1, "count": 5, "bytes": 5 * MB},
          "ranks": [{"rank": 0, "share": 0.05, "device_wait_share": 0.4},
                    {"rank": 1, "share": 0.075, "device_wait_share": 0.5}]}


def report(copies):
    return {"command": ["python", "train.py"], "outcome": "finished", "duration_s": 3.0, "copies": copies,
            "system": {"cpu_count": 2, "job": {}, "cpu": {}, "disk": {}, "gpus": [], "gpu_status": {}}}


def test_the_rows_say_device_time_the_wait_apart_and_what_was_left_out():
    rows = dict(copies_rows(COPIES))
    assert rows["copies to GPU"] == ("40 copies in the measured steps, 400.0 MB (400.0 MB from pageable memory): "
                                     "60.0 ms of device time, 7.5% of step time; 10 of 40 estimated from the timed "
                                     "copies' throughput (8.0 GB/s)")
    assert rows["waiting for the device"].startswith("400.0 ms, 50.0% of step time: blocking copies held the host")
    assert "not copy time" in rows["waiting for the device"]
    assert rows["outside the steps"].startswith("2 copies, 90.0 MB before the measured steps (model moves, start-up)")
    assert rows["other processes"] == "5 copies, 5.0 MB by 1 other process: not counted"
    assert rows["per rank"].startswith("rank 0: copies 5.0%, waiting for the device 40.0%; rank 1: copies 7.5%")


def test_host_time_is_labelled_and_no_wait_row_without_a_wait():
    rows = dict(copies_rows({"count": 4, "bytes": 4 * MB, "pageable_bytes": 0, "seconds": 0.4, "basis": "host",
                             "share": 0.4, "device_wait_s": 0.0, "estimated": 0}))
    assert rows["copies to GPU"].endswith("400.0 ms of host time (no copy was timed on the device), 40.0% of step time")
    assert list(rows) == ["copies to GPU"]
    assert copies_rows({"count": 0, "observed": False}) == []


@pytest.mark.parametrize("fmt", ["console", "markdown", "html"])
def test_every_format_carries_the_share_the_wait_and_the_left_out_copies(fmt):
    text = formats.render(fmt, report(COPIES), record={}, tried=None, width=1000)    # one line per sentence
    for words in ("7.5% of step time", "50.0% of step time", "10 of 40 estimated", "model moves, start-up",
                  "by 1 other process", "rank 1: copies 7.5%"):
        assert words in text, (fmt, words)
