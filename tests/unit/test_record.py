import json
import os

import pytest

from gpuprof.errors import UsageProblem
from gpuprof.capture.launch.rundir import create_run_dir
from gpuprof.record.events import EventWriter
from gpuprof.record.reader import MalformedRecord, RecordError, load_run, read_event_file


def test_event_writer_buffers_then_flushes_whole_lines(tmp_path):
    writer = EventWriter(str(tmp_path), flush_interval=3600, max_buffer=3)
    writer.emit({"k": "a", "t": 1.0, "i": 1})
    writer.emit({"k": "a", "t": 2.0, "i": 2})
    assert open(writer.path).read() == ""          # buffered
    writer.emit({"k": "a", "t": 3.0, "i": 3})                 # buffer full -> one write
    assert [e["i"] for e in read_event_file(writer.path)] == [1, 2, 3]
    writer.emit({"k": "a", "t": 4.0, "i": 4})
    writer.close()
    assert [e["i"] for e in read_event_file(writer.path)] == [1, 2, 3, 4]
    writer.emit({"k": "late", "t": 5.0})                      # after close: dropped, no error
    assert len(list(read_event_file(writer.path))) == 4


def test_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"k":"process","pid":1,"t":1.0}\n{"k":"batch","wa')
    assert list(read_event_file(str(path))) == [{"k": "process", "pid": 1, "t": 1.0}]


def test_file_names_differ_for_the_same_pid(tmp_path):
    names = {os.path.basename(EventWriter(str(tmp_path)).path) for _ in range(20)}
    assert len(names) == 20


def test_out_dir_is_used_when_free_and_never_overwritten(tmp_path):
    out = str(tmp_path / "runs")
    first = create_run_dir(out, "train")
    assert first == out
    second = create_run_dir(out, "train")
    assert os.path.dirname(second) == out and os.path.basename(second).startswith("train-")
    assert os.path.isdir(os.path.join(second, "events"))


def test_unwritable_out_is_a_usage_problem(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageProblem, match="cannot"):
        create_run_dir(str(blocker / "sub"), "train")


def test_loading_something_that_is_not_a_run(tmp_path):
    with pytest.raises(RecordError, match="missing"):
        load_run(str(tmp_path))
    (tmp_path / "run.json").write_text(json.dumps({"format": "other/9"}))
    with pytest.raises(RecordError, match="format"):
        load_run(str(tmp_path))


@pytest.mark.parametrize("lines, why", [
    (['{"k":"step"}'], "no time"),
    (['{"t":1.0}'], "no kind"),
    (['{"k":"batch","t":"soon"}'], "no time"),
    (['{"k":"batch","t":1.0,"w":"slow"}'], "w is not a number"),
    (['{"k":"step","cols":["t","f"],"rows":[[1.0,"x"]]}'], "not a number"),
    (['{"k":"step","cols":["t","f"],"rows":[[1.0]]}'], "a row without a time"),
    (["[" * 100000 + "]" * 100000, '{"k":"step","t":1.0}'], "not JSON"),
    (['not json at all', '{"k":"step","t":1.0}'], "not JSON"),
])
def test_malformed_events_are_refused_with_their_place(tmp_path, lines, why):
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MalformedRecord, match=why) as caught:
        list(read_event_file(str(path)))
    assert str(path) + ":" in str(caught.value)


def test_a_huge_stream_is_read_into_bounded_memory_with_exact_totals():
    from gpuprof.record.bounded import FULL, MAX_BLOCKS, BoundedEvents
    bounded = BoundedEvents()
    bounded.add({"k": "process", "pid": 1, "t": 0.0})
    n = 200_000
    for i in range(n):
        bounded.add({"k": "batch", "l": "1:1", "t": float(i), "w": 0.5})
    events = bounded.events()
    batches = [e for e in events if e["k"] == "batch"]
    assert events[0]["k"] == "process"
    assert len(batches) <= FULL + MAX_BLOCKS + 1
    assert sum(e.get("n", 1) for e in batches) == n
    assert sum(e["w"] for e in batches) == pytest.approx(0.5 * n)
    assert max(e["t"] for e in batches) == n - 1
