"""gpuprof attach's pure parts: py-spy's trace into stacks, stacks into the training thread's split,
the workers' reading and computing, who trains, and the sections the rules read."""

import pytest

from gpuprof.judge.sections.attached import analyse_attached, classify_training, classify_worker, headline, roles
from gpuprof.commands.attach.pyspy import parse_trace
from gpuprof.commands.attach.threads import grown
from gpuprof.errors import UsageProblem
from gpuprof.commands.workflows.attach import parse_duration

SITE = "/venv/lib/python3.11/site-packages"
STDLIB = "/usr/lib/python3.11"
TRAIN = "/job/train.py"
NEXT = [f"<module> ({TRAIN}:40)", f"_BaseDataLoaderIter.__next__ ({SITE}/torch/utils/data/dataloader.py:725)",
        f"_MultiProcessingDataLoaderIter._next_data ({SITE}/torch/utils/data/dataloader.py:1505)",
        f"Queue.get ({STDLIB}/multiprocessing/queues.py:113)"]
INLINE = [f"<module> ({TRAIN}:40)", f"_BaseDataLoaderIter.__next__ ({SITE}/torch/utils/data/dataloader.py:725)",
          f"_SingleProcessDataLoaderIter._next_data ({SITE}/torch/utils/data/dataloader.py:790)",
          f"_MapDatasetFetcher.fetch ({SITE}/torch/utils/data/_utils/fetch.py:52)",
          f"Images.__getitem__ ({TRAIN}:20)"]
BACKWARD = [f"<module> ({TRAIN}:43)", f"Tensor.backward ({SITE}/torch/_tensor.py:623)",
            f"backward ({SITE}/torch/autograd/__init__.py:395)"]
FORWARD = [f"<module> ({TRAIN}:41)", f"Module._wrapped_call_impl ({SITE}/torch/nn/modules/module.py:1778)",
           f"Module._call_impl ({SITE}/torch/nn/modules/module.py:1789)", f"Net.forward ({TRAIN}:12)"]
STEP = [f"<module> ({TRAIN}:44)", f"SGD.step ({SITE}/torch/optim/sgd.py:127)"]
EVAL = [f"<module> ({TRAIN}:50)", f"evaluate ({TRAIN}:30)", f"Module._call_impl ({SITE}/torch/nn/modules/module.py:1789)"]
WORKER_BASE = [f"<module> ({TRAIN}:39)", f"DataLoader.__iter__ ({SITE}/torch/utils/data/dataloader.py:505)",
               f"BaseProcess._bootstrap ({STDLIB}/multiprocessing/process.py:314)",
               f"_worker_loop ({SITE}/torch/utils/data/_utils/worker.py:349)"]
FETCH = [f"_MapDatasetFetcher.fetch ({SITE}/torch/utils/data/_utils/fetch.py:52)"]


def thread(tid, *stacks, name="MainThread"):
    return {"tid": tid, "name": name, "seconds": sum(n for _, n in stacks) / 1e6,
            "stacks": [{"frames": frames, "n": n} for frames, n in stacks]}


def process(pid, *threads, parents=()):
    return {"pid": pid, "parents": list(parents), "command": "python train.py", "threads": list(threads)}


def test_a_trace_becomes_each_threads_stacks_weighted_by_the_time_each_stood_for():
    head = [("B", 'process 10:"python train.py"', "", 0), ("B", "thread (10): MainThread", "", 0)]
    events = []
    for ph, name, filename, line in head:
        events.append({"ph": ph, "name": name, "args": {"filename": filename, "line": line}, "pid": 10, "tid": 1,
                       "ts": 0})
    def frame(ph, name, line, ts):
        events.append({"ph": ph, "name": name, "args": {"filename": TRAIN, "line": line}, "pid": 10, "tid": 1,
                       "ts": ts})
    frame("B", "<module>", 40, 0)
    frame("B", "load", 20, 0)
    frame("E", "load", 20, 300_000)           # 0.3 s in load
    frame("B", "step", 25, 300_000)
    frame("E", "step", 25, 400_000)           # 0.1 s in step
    frame("E", "<module>", 40, 400_000)
    parsed = parse_trace(events)
    assert [p["pid"] for p in parsed] == [10]
    (main,) = parsed[0]["threads"]
    assert main["tid"] == 10 and main["name"] == "MainThread"
    weights = {tuple(s["frames"]): s["n"] for s in main["stacks"]}
    assert weights[(f"<module> ({TRAIN}:40)", f"load ({TRAIN}:20)")] == 300_000
    assert weights[(f"<module> ({TRAIN}:40)", f"step ({TRAIN}:25)")] == 100_000
    assert main["seconds"] == pytest.approx(0.4)


def test_a_child_process_in_the_trace_names_its_parent():
    events = [{"ph": "B", "name": name, "args": {"filename": "", "line": 0}, "pid": 11, "tid": 2, "ts": 0}
              for name in ('process 10:"python train.py"', 'process 11:"python -c spawn_main()"', "thread (11): MainThread")]
    events += [{"ph": "B", "name": "_worker_loop", "args": {"filename": "/w.py", "line": 3}, "pid": 11, "tid": 2, "ts": 0},
               {"ph": "E", "name": "_worker_loop", "args": {"filename": "/w.py", "line": 3}, "pid": 11, "tid": 2,
                "ts": 50_000}]
    (child,) = parse_trace(events)
    assert child["pid"] == 11 and child["parents"] == [10] and child["command"] == "python -c spawn_main()"


def test_the_training_threads_time_splits_into_data_wait_forward_backward_optimizer_and_evaluation():
    figures = classify_training(thread(10, (NEXT, 500), (FORWARD, 100), (BACKWARD, 200), (STEP, 100), (EVAL, 100)))
    split = figures["split"]
    assert split["waiting_on_dataloader"] == 0.5 and split["forward"] == 0.1 and split["backward"] == 0.2
    assert split["optimizer"] == 0.1 and split["evaluation"] == 0.1 and split["making_batches"] == 0.0
    assert figures["loops"] == [(f"{TRAIN}:40", 500)]


def test_a_loader_without_workers_makes_its_batches_in_the_training_thread():
    figures = classify_training(thread(10, (INLINE, 800), (BACKWARD, 200)), cwd="/job")
    assert figures["split"]["making_batches"] == 0.8 and figures["split"]["waiting_on_dataloader"] == 0.0
    assert figures["loops"] == [("train.py:40", 800)]


def test_no_python_frame_at_all_is_left_out_of_the_split():
    figures = classify_training(thread(10, ([], 900), (BACKWARD, 100)))
    assert figures["split"]["backward"] == 1.0


def test_a_worker_reading_hdf5_is_told_from_one_computing_and_one_idle():
    reading = WORKER_BASE + FETCH + [f"H5Data.__getitem__ ({TRAIN}:60)", f"Dataset.__getitem__ ({SITE}/h5py/_hl/dataset.py:758)"]
    computing = WORKER_BASE + FETCH + [f"Images.__getitem__ ({TRAIN}:22)"]
    idle = WORKER_BASE + [f"Queue.get ({STDLIB}/multiprocessing/queues.py:113)"]
    figures = classify_worker(thread(20, (reading, 600), (computing, 300), (idle, 100)), cwd="/job")
    assert figures["split"] == {"reading": 0.6, "computing": 0.3, "idle": 0.1}
    assert figures["hot"][0] == {"at": "H5Data.__getitem__ (train.py:60)", "doing": "reading", "share": 0.6}
    assert figures["iterator_at"] == "train.py:39"          # a forked worker still shows its parent's frames


def test_a_launchers_agent_waiting_in_torch_distributed_is_not_a_trainer():
    agent = process(1, thread(1, ([f"main ({SITE}/torch/distributed/run.py:900)",
                                   f"_invoke_run ({SITE}/torch/distributed/elastic/agent/server/api.py:870)"], 1000)))
    rank = process(2, thread(2, (NEXT, 500), (BACKWARD, 500)), parents=[1])
    worker = process(3, thread(3, (WORKER_BASE + FETCH, 1000)), parents=[1, 2])
    found = roles({"processes": [agent, rank, worker]})
    assert [p["pid"] for p, _ in found["trainers"]] == [2]
    assert [p["pid"] for p in found["workers"]] == [3]


def test_the_straggler_speaks_for_the_job_and_among_ranks_alike_the_one_nearest_the_mean():
    def trainer(pid, data, collective):
        return ({"pid": pid}, {}, {"split": {"waiting_on_dataloader": data, "collective": collective}})
    slow = trainer(2, 0.6, 0.0)
    assert headline([trainer(1, 0.1, 0.5), slow])[0]["pid"] == 2
    alike = [trainer(1, 0.30, 0.0), trainer(2, 0.50, 0.0), trainer(3, 0.42, 0.0)]
    assert headline(alike)[0]["pid"] == 3


def sections_for(stacks, system=None):
    return analyse_attached(dict({"duration_s": 10.0, "pid": 10, "rate_hz": 50}, **stacks), system or {})


def test_workers_that_cannot_keep_up_give_the_input_sections_the_rules_read():
    trainer = process(10, thread(10, (NEXT, 700_000), (BACKWARD, 300_000)))
    workers = [process(pid, thread(pid, (WORKER_BASE + FETCH + [f"Images.__getitem__ ({TRAIN}:22)"], 1_000_000)),
                       parents=[10]) for pid in (11, 12)]
    system = {"processes": [{"pid": pid, "user_s": 19.0, "user_s_first": 10.0, "system_s": 1.5, "system_s_first": 1.0,
                             "read_bytes": 0, "read_chars": 0, "first_seen": 0.0, "last_seen": 10.0}
                            for pid in (11, 12)]}
    found = sections_for({"processes": [trainer] + workers}, system)
    steps, (loader,) = found["steps"], found["dataloaders"]
    assert steps["basis"] == "attached" and steps["data_wait_share"] == 0.7 and steps["data_wait_source"] == "dataloader"
    assert loader["where"] == f"{TRAIN}:40" and loader["num_workers"] == 2
    producer = loader["producer"]
    assert producer["wall_s"] == pytest.approx(20.0) and producer["cpu_s"] == pytest.approx(19.0)
    assert producer["system_cpu_s"] == pytest.approx(1.0) and producer["in_main_process"] is False
    assert found["attached"]["training"]["split"]["waiting_on_dataloader"] == 0.7


def test_a_batch_made_in_the_training_thread_takes_its_cpu_from_the_threads_own_figures():
    trainer = process(10, thread(10, (INLINE, 800_000), (BACKWARD, 200_000)))
    # 10 s window, 8 s making batches: the thread ran 6 s, 2 s of it in the model, so 4 of the 8 s.
    found = sections_for({"processes": [trainer],
                          "threads_cpu": {"10": {"pid": 10, "run_s": 6.0, "wait_s": 0.0, "user_s": 5.5, "system_s": 0.5}}})
    (loader,) = found["dataloaders"]
    assert loader["num_workers"] == 0 and loader["producer"]["in_main_process"] is True
    assert loader["producer"]["wall_s"] == pytest.approx(8.0)
    assert loader["producer"]["cpu_per_wall"] == pytest.approx(0.5)


def test_no_training_thread_gives_no_data_share():
    idle = process(10, thread(10, ([f"<module> ({TRAIN}:1)", f"sleep ({TRAIN}:2)"], 1_000_000)))
    assert sections_for({"processes": [idle]})["steps"]["data_wait_share"] is None


def test_thread_figures_count_from_the_first_reading_and_a_newborn_thread_from_zero():
    before = {5: {"pid": 1, "run_ns": 1_000_000_000, "wait_ns": 0, "user_s": 1.0, "system_s": 0.0}}
    after = {5: {"pid": 1, "run_ns": 3_000_000_000, "wait_ns": 500_000_000, "user_s": 2.5, "system_s": 0.5},
             6: {"pid": 1, "run_ns": 1_000_000_000, "wait_ns": 0, "user_s": 1.0, "system_s": 0.0}}
    figures = grown(before, after)
    assert figures["5"]["run_s"] == 2.0 and figures["5"]["wait_s"] == 0.5 and figures["5"]["user_s"] == 1.5
    assert figures["6"]["run_s"] == 1.0


@pytest.mark.parametrize("text, seconds", [("30s", 30.0), ("2m", 120.0), ("45", 45.0), ("1.5h", 5400.0),
                                           ("500ms", None), ("soon", None), ("0", None)])
def test_durations_are_read_as_people_write_them(text, seconds):
    if seconds is None:
        with pytest.raises(UsageProblem):
            parse_duration(text)
    else:
        assert parse_duration(text) == seconds


def test_a_forked_worker_sharing_its_parents_pthread_id_keeps_its_own_stacks():
    # py-spy keys threads by pthread id, which a forked child's main thread shares with its parent:
    # one stream alternates between the two processes, each sample closing the other's frames.
    events = []

    def sample(ts, pid, tid, frames, close):
        for name in close:
            events.append({"ph": "E", "name": name, "args": {}, "pid": pid, "tid": 7, "ts": ts})
        for name in [f'process {pid}:"python"', f"thread ({tid}): MainThread"] + frames:
            events.append({"ph": "B", "name": name, "args": {}, "pid": pid, "tid": 7, "ts": ts})

    parent = ["<module>", "backward"]
    child = ["_worker_loop", "fetch"]
    previous = []
    for tick in range(4):
        ts = tick * 20_000
        sample(ts, 10, 10, parent, previous)
        previous = list(reversed(['process 10:"python"', "thread (10): MainThread"] + parent))
        sample(ts + 100, 11, 11, child, previous)
        previous = list(reversed(['process 11:"python"', "thread (11): MainThread"] + child))
    by_pid = {p["pid"]: p for p in parse_trace(events)}
    assert by_pid[10]["threads"][0]["stacks"] == [{"frames": parent, "n": 60_000}]
    assert by_pid[11]["threads"][0]["stacks"] == [{"frames": child, "n": 60_000}]


def test_without_py_spy_attach_says_how_to_install_it(monkeypatch, tmp_path):
    from gpuprof.commands.attach import pyspy
    monkeypatch.setattr(pyspy.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageProblem) as raised:
        pyspy.find_pyspy()
    assert "pip install py-spy" in str(raised.value)
