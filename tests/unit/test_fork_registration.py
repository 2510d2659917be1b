"""A forked child's event file: nothing at the fork itself, opened at the child's first need, with
the registration noted at the fork (fake clock: `tick` takes the time the probes read)."""

import glob
import json
import os

import pytest

from gpuprof.capture.probes import runtime
from gpuprof.record import kinds


@pytest.fixture
def forked(tmp_path, monkeypatch):
    """the runtime's state as a forked child of a started process finds it, the fork hook already run."""
    monkeypatch.setattr(runtime, "_state", {"writer": None, "forked": None,
                                         "settings": {"events_dir": str(tmp_path), "flush_s": 1.0}})
    monkeypatch.setattr(runtime, "_fork_resets", [])
    monkeypatch.setattr(runtime, "_drains", [])
    runtime._after_fork_in_child()
    return tmp_path


def registrations(folder) -> list:
    found = []
    for path in glob.glob(os.path.join(folder, "*.jsonl")):
        with open(path) as handle:
            found.append(json.loads(handle.readline()))
    return found


def test_the_fork_itself_writes_nothing_and_the_first_flush_registers_it(forked):
    noted = runtime._state["forked"]["t"]
    assert registrations(forked) == []
    runtime.flush()
    (event,) = registrations(forked)
    assert event["k"] == kinds.PROCESS and event["origin"] == "fork" and event["t"] == noted
    assert event["pid"] == os.getpid() and runtime._state["forked"] is None


def test_a_child_that_writes_nothing_registers_at_its_first_flush_interval(forked):
    noted = runtime._state["forked"]["t"]
    runtime.tick(noted + 0.5)
    assert registrations(forked) == []
    runtime.tick(noted + 1.0)
    assert [event["origin"] for event in registrations(forked)] == ["fork"]


def test_closing_registers_a_child_that_never_wrote(forked):
    runtime._close_current()
    assert [event["origin"] for event in registrations(forked)] == ["fork"]
    runtime._close_current()
    assert len(registrations(forked)) == 1


def test_a_process_without_an_event_folder_notes_no_registration(monkeypatch):
    monkeypatch.setattr(runtime, "_state", {"writer": None, "forked": None, "settings": dict(runtime.BETWEEN_CELLS)})
    monkeypatch.setattr(runtime, "_fork_resets", [])
    runtime._after_fork_in_child()
    assert runtime._state["forked"] is None and runtime.writer() is None
