"""gpuprof's own cost: the probes' sampled timing, the report section built from it and the
supervisor's figures, the line every format prints, and the packed rows the streams write."""

import json

import pytest

from gpuprof.judge.sections.self_cost import self_cost_section
from gpuprof.capture.probes import self_cost
from gpuprof.capture.probes.stream import Stream
from gpuprof.record.packed import pack, rows_of, unpack
from gpuprof.record.reader import expand_rows, read_event_file
from gpuprof.present.render.self_cost_text import self_cost_line


def _groups(*events):
    return [[{"k": "process", "pid": 7, "t": 0.0}, *events]]


def _system(user, system):
    return {"columns": {"job_user_s": [user / 2, user / 2], "job_system_s": [system, None]}}


def test_no_section_for_a_run_that_measured_none_of_it():
    assert self_cost_section({"supervisor_cpu_s": 0.2}, _groups(), _system(4.0, 1.0)) is None


def test_the_section_adds_the_parts_and_takes_the_share_of_the_job():
    event = {"k": "self_cost", "t": 1.0, "threads_s": 0.05, "hooks_s": 0.10,
             "hooks": {"step": {"calls": 1000, "timed": 8, "timed_s": 0.00004}}}
    meta = {"supervisor_cpu_s": 0.2, "samplers_cpu_s": {"system": 0.05, "nvml": 0.01}}
    section = self_cost_section(meta, _groups(event), _system(4.0, 1.0))
    assert section["probes_cpu_s"] == pytest.approx(0.15) and section["samplers_cpu_s"] == pytest.approx(0.06)
    assert section["own_cpu_s"] == pytest.approx(0.35) and section["job_cpu_s"] == pytest.approx(5.0)
    assert section["share"] == pytest.approx(0.07)
    assert section["largest_part"] == "probes"                  # 0.15 against 0.14 and 0.06
    assert section["per_call_us"] == {"step": 5.0}


def test_the_line_names_the_largest_part_only_above_two_percent():
    quiet = {"overhead": {"own_cpu_s": 0.3, "share": 0.009, "largest_part": "samplers",
                          "parts_cpu_s": {"samplers": 0.2}}}
    assert self_cost_line(quiet) == "gpuprof's own cost: 0.30 s CPU, 0.9% of the job's"
    loud = {"overhead": dict(quiet["overhead"], share=0.05)}
    line = self_cost_line(loud)
    assert line.startswith("gpuprof's own cost: 0.30 s CPU, 5.0% of the job's; most of it the samplers (0.20 s)")
    assert "--interval" in line
    assert self_cost_line({}) is None                            # an old saved run: nothing


def test_the_probe_estimates_all_calls_from_the_timed_ones(monkeypatch):
    monkeypatch.setattr(self_cost, "timed", {"step": [0, 2, 0.00002], "batch": [0, 0, 0.0], "fetch": [500, 4, 0.0001]})
    monkeypatch.setattr(self_cost, "_counters", {"step": lambda: 1000})
    summary = self_cost.summary()
    assert summary["hooks"]["step"] == {"calls": 1000, "timed": 2, "timed_s": 0.00002}
    assert summary["hooks_s"] == pytest.approx(1000 * 10e-6 + 500 * 25e-6)
    assert "batch" not in summary["hooks"] and summary["threads_s"] >= 0


def test_packed_rows_read_back_with_missing_values_and_whole_numbers():
    rows = [(1.5, None, 3, 0.25), (2.5, float("nan"), 2 ** 40, float("inf"))]
    back = unpack(pack(rows, 4), 4)
    assert back == [[1.5, None, 3, 0.25], [2.5, None, 2 ** 40, None]]
    assert isinstance(back[0][2], int)
    with pytest.raises(ValueError):
        unpack("not base64!", 4)
    with pytest.raises(ValueError):
        unpack(pack(rows, 4), 3)
    assert rows_of({"cols": ["t"], "rows": [[1.0]]}) == [[1.0]]


def test_a_stream_writes_packed_rows_that_the_reader_expands(tmp_path):
    class Lines:
        def __init__(self):
            self.lines = []

        def emit_line(self, line):
            self.lines.append(line)

        def emit(self, event):
            self.lines.append(json.dumps(event))

    sink = Lines()
    stream = Stream("batch", ("w",), {"l": "1:1"}, full=10, sink=sink)
    stream.add(1.0, 0.5)
    stream.add(2.0, None)
    stream.flush()
    (line,) = sink.lines
    assert "packed" in json.loads(line) and "rows" not in json.loads(line)
    assert list(expand_rows(json.loads(line))) == [{"k": "batch", "l": "1:1", "t": 1.0, "w": 0.5},
                                                  {"k": "batch", "l": "1:1", "t": 2.0}]
    path = tmp_path / "events.jsonl"
    path.write_text(line + "\n" + '{"k":"batch","l":"1:1","cols":["t","w"],"packed":"@@"}\n')
    with pytest.raises(Exception, match="packed rows that do not unpack"):
        list(read_event_file(str(path)))
