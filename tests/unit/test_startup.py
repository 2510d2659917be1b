"""The start-up: what the start-up probe makes of a stack, how it stops at the first step, and how
the analysis turns its samples and the launch time into the report's `startup` section."""

import sys

import pytest

from gpuprof.judge.sections.startup import analyse_startup, is_notable, startup_section
from gpuprof.capture.probes import startup as probe
from gpuprof.record import kinds, startup_parts as parts


def frame_in(filename: str, source: str, call: str):
    """The innermost frame of `call` run in code compiled as `filename` (a library's or the user's)."""
    namespace = {"sys": sys}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[call]()


LIBRARY = "/usr/lib/python3/site-packages/datasets/arrow_dataset.py"
USER = "/home/me/train.py"


def test_a_users_function_named_for_its_data_is_the_dataset_part_at_its_line():
    frame = frame_in(USER, "def build_dataset():\n    x = 1\n    return sys._getframe()\n", "build_dataset")
    part, where = probe.part_of(frame)
    assert part == parts.DATASET
    assert where == "build_dataset (/home/me/train.py:3)"


def test_a_library_marker_inside_the_users_call_names_the_part_and_the_user_line_stays():
    library = {"sys": sys}
    exec(compile("def map_rows():\n    return sys._getframe()\n", LIBRARY, "exec"), library)
    user = {"sys": sys, "map_rows": library["map_rows"]}
    exec(compile("def main():\n    return map_rows()\n", USER, "exec"), user)
    part, where = probe.part_of(user["main"]())
    assert (part, where) == (parts.DATASET, "main (/home/me/train.py:2)")


def test_a_plain_user_function_is_your_code_and_library_module_code_is_an_import():
    frame = frame_in(USER, "def main():\n    return sys._getframe()\n", "main")
    assert probe.part_of(frame) == (parts.YOUR_CODE, "main (/home/me/train.py:2)")
    module = {"sys": sys}
    exec(compile("frame = sys._getframe()\n", "/usr/lib/python3/site-packages/transformers/__init__.py", "exec"),
         module)
    assert probe.part_of(module["frame"])[0] == parts.IMPORTS


def test_a_libraries_own_call_of_the_users_getitem_is_the_first_batches():
    user = {"sys": sys}
    exec(compile("def __getitem__(i):\n    return sys._getframe()\n", USER, "exec"), user)
    loader = {"get": user["__getitem__"]}
    exec(compile("def fetch():\n    return get(0)\n", "/x/site-packages/torch/utils/data/_utils/fetch.py", "exec"),
         loader)
    assert probe.part_of(loader["fetch"]())[0] == parts.FIRST_STEP


def startup_event(counts, t0=101.0, t=110.0, first_step=True, pid=7):
    return {"k": kinds.STARTUP_SAMPLES, "t": t, "t0": t0, "n": 100, "first_step": first_step, "counts": counts,
            "pid": pid}


COUNTS = {"dataset|build_dataset (train.py:17)": 4.0, "dataset|build_dataset (train.py:16)": 1.0,
          "imports|<module> (train.py:3)": 2.0, "first batches and step|main (train.py:40)": 2.0}


def test_the_section_runs_from_launch_to_the_first_step_and_names_the_busiest_function():
    section = analyse_startup([startup_event(COUNTS)], {"start_monotonic": 100.0, "duration_s": 20.0, "pid": 7})
    assert section["seconds"] == pytest.approx(10.0) and section["share"] == pytest.approx(0.5)
    assert section["notable"] and section["reached_first_step"]
    by_part = {p["part"]: p["seconds"] for p in section["parts"]}
    assert by_part == {parts.DATASET: 5.0, parts.IMPORTS: 2.0, parts.FIRST_STEP: 2.0, parts.BEFORE_TORCH: 1.0}
    assert section["parts"][0]["part"] == parts.DATASET
    # The function's lines are summed (5 s), its busiest line named.
    assert section["where"] == {"function": "build_dataset", "line": "train.py:17", "part": parts.DATASET,
                                "seconds": 5.0, "share": 0.5}


def test_the_section_is_the_stepping_processes_and_absent_without_samples():
    other = startup_event({"imports|<module> (worker.py:1)": 1.0}, pid=8)
    mine = startup_event(COUNTS, pid=7)
    meta = {"start_monotonic": 100.0, "duration_s": 20.0, "pid": 8}
    assert analyse_startup([other, mine], meta, stepping_pid=7)["where"]["function"] == "build_dataset"
    assert analyse_startup([], meta) is None
    assert startup_section([], meta, {"pid": 7}) == {}       # an older record reads as it always did
    assert analyse_startup([mine], {"duration_s": 20.0}) is None


def test_notable_from_a_fifth_of_the_run_and_five_seconds_or_thirty_seconds_and_a_tenth():
    assert is_notable(5.0, 0.2) and not is_notable(4.9, 0.5) and not is_notable(6.0, 0.19)
    assert is_notable(30.0, 0.1) and not is_notable(300.0, 0.09)
    assert not is_notable(100.0, None)


def test_the_sampler_stops_at_the_first_step_and_writes_one_event(monkeypatch):
    """Nothing of the start-up probe runs during the steps: the first step's hook ends its thread."""
    import threading
    import time
    from gpuprof.capture.probes import runtime, steps

    emitted, hooks = [], []
    monkeypatch.setattr(runtime, "emit", emitted.append)
    monkeypatch.setattr(runtime, "at_close", lambda func: None)
    monkeypatch.setattr(runtime, "at_fork_child", lambda func: None)
    monkeypatch.setattr(runtime, "at_first_step", hooks.append)
    monkeypatch.setattr(probe, "_state", {"thread": None, "stop": None})
    monkeypatch.setattr(probe, "INTERVAL", 0.01)
    probe._start()
    thread = probe._state["thread"]

    def load_data():
        time.sleep(0.3)

    load_data()
    assert thread.is_alive() and hooks == [probe._first_step]
    hooks[0]()                                     # the first step ends
    thread.join(timeout=5.0)
    assert not thread.is_alive()
    assert len(emitted) == 1 and emitted[0]["k"] == kinds.STARTUP_SAMPLES and emitted[0]["first_step"]
    dataset = sum(v for k, v in emitted[0]["counts"].items() if k.startswith(parts.DATASET + "|load_data ("))
    assert dataset >= 0.1, emitted[0]["counts"]
    assert threading.current_thread() is not thread


def test_a_launcher_that_never_stepped_is_no_start_up_of_a_job_whose_ranks_did():
    launcher = startup_event({"your code|main (launch.py:9)": 50.0}, t=160.0, first_step=False, pid=8)
    meta = {"start_monotonic": 100.0, "duration_s": 60.0, "pid": 8}
    assert analyse_startup([launcher], meta, stepping_pid=7) is None
    rank = startup_event(COUNTS, pid=9)
    assert analyse_startup([launcher, rank], meta, stepping_pid=7)["pid"] == 9
    # A job that never stepped: what its first process did until it ended.
    section = analyse_startup([launcher], meta)
    assert section["seconds"] == pytest.approx(60.0) and not section["reached_first_step"]
    # ...has no start-up share: none of the run was apart from training it never began
    assert section["share"] is None and not section["notable"]
