"""Several run folders make one job's report only when the runs say they are one job: the same
program, each placed in a launcher's world of one size, no rank run twice.
`gpuprof report runA runB` on two unrelated runs is refused in one line, never "Slowest of 2 ranks"."""

import pytest

from gpuprof.judge.verdict.ranks import launcher_world
from gpuprof.record.reader import RecordError
from gpuprof.present.reporting.one_job import check_one_job


def record(script="train.py", host="h", **process):
    """A run record of `script` whose trainer carries `process`'s launcher facts (rank, world_size)."""
    head = {"k": "process", "pid": 10, "ppid": 1, "host": host, "t": 0.0, **process}
    return {"meta": {"kind": "script", "target": f"/work/{script}", "host": host},
            "processes": [[head, {"k": "step", "t": 1.0}, {"k": "step", "t": 2.0}]]}


def test_two_runs_of_different_programs_are_not_one_job():
    with pytest.raises(RecordError, match=r"^A and B are runs of different programs \(a\.py, b\.py\)"):
        check_one_job(["A", "B"], [record("a.py"), record("b.py")])


def test_two_runs_no_launcher_placed_in_a_world_are_not_one_job():
    with pytest.raises(RecordError, match=r"^A is no node of a distributed job .*`gpuprof report A`$"):
        check_one_job(["A", "B"], [record(), record()])


def test_two_jobs_that_both_ran_rank_0_are_not_one_job():
    with pytest.raises(RecordError, match=r"^A and B both ran rank 0: two jobs"):
        check_one_job(["A", "B"], [record(rank=0, world_size=2), record(rank=0, world_size=2)])


def test_worlds_of_different_sizes_are_not_one_job():
    with pytest.raises(RecordError, match=r"different sizes \(2, 4 ranks\)"):
        check_one_job(["A", "B"], [record(rank=0, world_size=2), record(rank=1, world_size=4)])


def test_the_nodes_of_one_launcher_world_are_one_job():
    check_one_job(["A", "B"], [record(host="node0", rank=0, world_size=2), record(host="node1", rank=1, world_size=2)])
    check_one_job(["A"], [record()])                        # one run folder is never judged


def test_torch_distributed_s_own_rank_places_a_process_spawned_without_a_launcher():
    spawned = record()
    spawned["processes"][0].insert(1, {"k": "rank", "rank": 1, "world_size": 2, "backend": "gloo"})
    assert launcher_world(spawned["processes"]) == {"world_sizes": {2}, "ranks": {1}}
    check_one_job(["A", "B"], [record(rank=0, world_size=2), spawned])


def test_a_world_of_one_is_no_distributed_job():
    assert launcher_world(record(rank=0, world_size=1)["processes"]) == {"world_sizes": set(), "ranks": set()}


def test_a_node_cut_short_is_judged_by_its_world_alone():
    """A node whose gpuprof was killed left no header naming its program: its rank and world decide."""
    killed = record("", host="node1", rank=1, world_size=2)
    killed["meta"] = {"format": "gpuprof.run/1", "status": "running", "pid": 1}
    check_one_job(["A", "B"], [record(host="node0", rank=0, world_size=2), killed])
