"""Copy blocks past the bounded read's event limit: summed into one block that keeps the span of
the copies it stands for, so the steps' window still tells start-up copies from the step's."""

import pytest

from gpuprof.judge.sections.transfers import analyse_copies, in_window_fraction
from gpuprof.record import bounded
from gpuprof.record.bounded import BoundedEvents

MB = 1 << 20


def block(t0, t1, t, n=10, gpu_s=0.01):
    return {"k": "copies", "pid": 7, "t": t, "t0": t0, "t1": t1, "n": n, "bytes": n * MB, "pageable_bytes": n * MB,
            "host_s": gpu_s, "gpu_s": gpu_s, "timed": n, "timed_bytes": n * MB, "wait_s": 0.0,
            "dtypes": {"float32": n * MB}}


def read(events, monkeypatch, limit=2):
    monkeypatch.setattr(bounded, "OTHER_LIMIT", limit)
    kept = BoundedEvents()
    for event in events:
        kept.add(event)
    return [e for e in kept.events() if e["k"] == "copies"]


def test_merged_blocks_keep_the_first_copys_time_and_the_last_ones(monkeypatch):
    blocks = [block(1.0, 2.0, 2.5), block(3.0, 4.0, 4.5),            # kept as they are
              block(12.0, 13.0, 13.5), block(14.0, 15.0, 15.5), block(16.0, 18.0, 18.5)]
    kept = read(blocks, monkeypatch)
    merged = kept[-1]
    assert (merged["t0"], merged["t1"], merged["t"]) == (12.0, 18.0, 18.5)
    assert merged["n"] == 30 and merged["bytes"] == 30 * MB and merged["dtypes"] == {"float32": 30 * MB}
    assert in_window_fraction(merged, (10.0, 20.0)) == 1.0


def test_a_block_of_late_read_backs_only_does_not_blank_the_merged_span(monkeypatch):
    late = dict(block(None, None, 16.0), n=0, bytes=0, pageable_bytes=0, dtypes={})
    kept = read([block(1.0, 2.0, 2.5), block(3.0, 4.0, 4.5), block(12.0, 13.0, 13.5), late,
                 block(14.0, 15.0, 15.5)], monkeypatch)
    assert (kept[-1]["t0"], kept[-1]["t1"]) == (12.0, 15.0)


def test_start_up_copies_merged_past_the_limit_stay_out_of_the_window(monkeypatch):
    """Model moves before the first step, then step copies: summed spans would put them nowhere."""
    startup = [block(1.0 + i, 1.5 + i, 1.6 + i) for i in range(4)]           # before the window
    steps = [block(11.0 + i, 11.5 + i, 11.6 + i) for i in range(8)]         # inside it
    section = analyse_copies(read(startup + steps, monkeypatch, limit=3),
                             {"pid": 7, "window_start": 10.0, "window_end": 20.0, "window_s": 10.0})
    # Three start-up blocks are kept whole (outside); the fourth and the eight step blocks are
    # merged into one of 90 copies spanning 4.0..18.5, counted by the share of that span inside.
    inside = 90 * (18.5 - 10.0) / (18.5 - 4.0)
    assert section["count"] == round(inside)                      # summed times counted all 90 inside
    assert section["outside_steps"]["count"] == round(120 - inside)
    assert section["share"] == pytest.approx(0.09 * (18.5 - 10.0) / (18.5 - 4.0) / 10.0, abs=1e-4)
