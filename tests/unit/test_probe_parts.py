"""The probes' pure parts: bounded streams, selections, copy bookkeeping, the post-import hook."""

import json
import sys
import threading

import pytest

from gpuprof.record.events import EventWriter
from gpuprof.record.reader import expand_rows, read_event_file

from gpuprof.capture.probes.h5 import chunks_touched
from gpuprof.capture.probes.post_import import PostImportHook
from gpuprof.capture.probes.stream import Stream


class _Collect:
    """A stream sink that keeps each event as the file would hold it (decoded JSON)."""

    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(json.loads(json.dumps(event)))

    def emit_line(self, line):
        self.events.append(json.loads(line))


def _items(events):
    """Events as the reader hands them to the analysis: columnar rows become one item each."""
    return [item for event in events for item in (expand_rows(event) if "cols" in event else [event])]


def test_stream_keeps_the_first_items_then_sums_blocks():
    sink = _Collect()
    stream = Stream("batch", ("w",), {"l": "1:1"}, full=3, block=4, sink=sink)
    for i in range(12):
        stream.add(float(i), 1.0)
        if i in (1, 5):
            stream.drain()               # the writer's thread drains at any point
    stream.flush()
    items = _items(sink.events)
    assert [e.get("n", 1) for e in items] == [1, 1, 1, 4, 4, 1]
    assert sum(e["w"] for e in items) == 12.0                 # totals exact
    assert items[0] == {"k": "batch", "l": "1:1", "t": 0.0, "w": 1.0}
    assert items[3] == {"k": "batch", "l": "1:1", "n": 4, "t0": 3.0, "t": 6.0, "w": 4.0, "w_max": 1.0}


def test_stream_rows_written_to_a_file_read_back_as_items(tmp_path):
    writer = EventWriter(str(tmp_path), flush_interval=3600)
    stream = Stream("step", ("f", "fc"), full=10, sink=writer)      # NaN is written as null
    stream.add(1.0, None, None)
    stream.add(2.0, 0.5, float("nan"))
    stream.flush()
    writer.close()
    assert list(read_event_file(writer.path)) == [{"k": "step", "t": 1.0}, {"k": "step", "t": 2.0, "f": 0.5}]


def test_stream_writes_every_item_once_while_another_thread_drains():
    sink = _Collect()
    stream = Stream("fetch", ("wall",), full=10**9, sink=sink)
    done = threading.Event()

    def drain_until_done():
        while not done.is_set():
            stream.drain()

    drainer = threading.Thread(target=drain_until_done)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # hand the GIL over between almost every pair of bytecodes
    try:
        drainer.start()
        for i in range(100_000):
            stream.add(float(i), 1.0)
    finally:
        done.set()
        drainer.join()
        sys.setswitchinterval(interval)
    stream.flush()
    assert [item["t"] for item in _items(sink.events)] == [float(i) for i in range(100_000)]


@pytest.mark.parametrize("key, expected", [
    (5, 1 * 1),                              # one sample: one chunk along axis 0, one along axis 1
    (slice(0, 64), 1),
    (slice(60, 70), 2),
    (slice(0, 128, 2), 2),
    ([1, 2, 70, 200], 3),
    ((slice(None), slice(0, 10)), 4 * 1),
    ((Ellipsis, 3), 4),
])
def test_chunks_touched_by_a_selection(key, expected):
    assert chunks_touched(key, shape=(256, 32), chunks=(64, 32)) == expected


def test_post_import_hook_runs_after_the_module_executes(tmp_path, monkeypatch):
    (tmp_path / "watched_mod_xyz.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    hook = PostImportHook({"watched_mod_xyz": lambda m: seen.append(m.VALUE + 1)})
    hook.install()
    try:
        import watched_mod_xyz
        assert seen == [42]
        assert type(watched_mod_xyz.__spec__.loader).__name__ == "SourceFileLoader"  # real loader kept
        assert "exec_module" not in vars(watched_mod_xyz.__spec__.loader)
        assert hook not in sys.meta_path                                          # done: removed
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_xyz", None)


def test_post_import_hook_survives_a_find_spec_without_import(tmp_path, monkeypatch):
    import importlib.util
    (tmp_path / "watched_mod_spec.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    hook = PostImportHook({"watched_mod_spec": lambda m: seen.append(m.VALUE)})
    hook.install()
    try:
        assert importlib.util.find_spec("watched_mod_spec") is not None     # looks, does not import
        assert seen == []
        import watched_mod_spec  # noqa: F401
        assert seen == [1]
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_spec", None)


def test_post_import_hook_swallows_a_failing_callback(tmp_path, monkeypatch):
    (tmp_path / "watched_mod_abc.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hook = PostImportHook({"watched_mod_abc": lambda m: 1 / 0})
    hook.install()
    try:
        import watched_mod_abc
        assert watched_mod_abc.VALUE == 1
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_abc", None)
