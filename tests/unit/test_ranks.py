"""The rank rules on hand-made figures: who is a trainer, who straggles, who waits; where the run
folders of a multi-node job go and how they are found again."""

import json
import os

import pytest

from gpuprof.judge.verdict import ranks
from gpuprof.judge.verdict.bottlenecks import comm
from gpuprof.capture.launch.rundir import create_run_dir, spans_nodes
from gpuprof.record.reader import RecordError
from gpuprof.present.reporting.job import run_folders


def row(rank, step, wait=0.0, backward=0.3, collective=0.0, verdict="compute", cpu=0.0):
    return {"rank": rank, "pid": 100 + rank, "host": "h", "mean_step_s": step, "data_wait_share": wait,
            "shares": {"backward": backward, "collective": collective, "forward": 0.2}, "producers_cpu_s": cpu,
            "verdict": {"bottleneck": verdict, "share": 0.9}}


def test_in_ddp_the_rank_the_others_wait_for_is_the_straggler():
    # Equal step times (DDP), but rank 0 spends most of its step in backward, waiting in the all-reduce.
    rows = [row(0, 0.045, wait=0.01, backward=0.93), row(1, 0.045, wait=0.9, backward=0.05, verdict="input.latency")]
    picture = ranks.judge(rows)
    assert picture["straggler"]["rank"] == 1 and picture["headline_rank"] == 1
    assert rows[0]["waiting_share"] == pytest.approx(0.88)
    assert rows[1]["own_step_s"] == pytest.approx(0.045)
    assert picture["speedup_if_median"] == pytest.approx(0.045 / (0.045 * 0.12), rel=1e-3)
    assert picture["straggler"]["others_waiting_share"] == pytest.approx(0.88)


def test_ranks_that_differ_a_little_name_no_straggler():
    rows = [row(0, 0.0235, backward=0.75), row(1, 0.0235, backward=0.61)]
    picture = ranks.judge(rows)
    assert picture["straggler"] is None and picture["same_bottleneck"] == "compute"


def test_without_collectives_a_longer_step_names_the_straggler():
    rows = [row(0, 0.010), row(1, 0.010), row(2, 0.030, verdict="input.cpu"), row(3, 0.011)]
    picture = ranks.judge(rows)
    assert picture["straggler"]["rank"] == 2
    assert picture["speedup_if_median"] == pytest.approx(3.0)


def test_the_median_rank_of_two_is_the_other_rank():
    assert ranks.median_rank([1.0, 10.0]) == 1.0
    assert ranks.median_rank([3.0, 1.0, 2.0]) == 2.0


def test_a_waiting_rank_gets_a_comm_verdict_naming_the_straggler():
    rows = [row(0, 0.045, backward=0.93), row(1, 0.045, wait=0.9, backward=0.05, verdict="input.latency")]
    picture = ranks.judge(rows)
    verdict = comm.waiting_verdict(rows[0]["waiting_share"], picture["straggler"])
    assert verdict["bottleneck"] == "comm" and "rank 1" in verdict["reason"]


def _process(pid, ppid, host="h", **extra):
    return dict({"k": "process", "pid": pid, "ppid": ppid, "host": host, "t": float(pid)}, **extra)


def test_trainers_are_stepping_processes_and_own_their_workers():
    groups = [
        [_process(10, 1), {"k": "step", "t": 1.0}],                                       # launcher child, env rank 1
        [_process(11, 10), {"k": "fetch", "w": 0, "t": 1.0}],                            # its worker
        [_process(20, 1), {"k": "rank", "rank": 0, "world_size": 2, "backend": "gloo"}, {"k": "step", "t": 1.0}],
        [_process(1, 0)],                                                                  # the launcher
    ]
    groups[0][0]["rank"] = 1
    found = ranks.trainers(groups)
    assert [(t["pid"], t["rank"], t["rank_from"]) for t in found] == [(20, 0, "torch.distributed"),
                                                                       (10, 1, "launcher")]
    assert found[1]["group_indices"] == [0, 1]


def test_trainers_without_any_rank_are_numbered_by_start():
    groups = [[_process(30, 1), {"k": "bstep", "t": 1.0}], [_process(20, 1), {"k": "step", "t": 1.0}]]
    assert [(t["pid"], t["rank"], t["rank_from"]) for t in ranks.trainers(groups)] == [(20, 0, "start order"),
                                                                                       (30, 1, "start order")]


@pytest.mark.parametrize("argv, env, expected", [
    (["python", "train.py"], {}, False),
    (["python", "train.py"], {"SLURM_NNODES": "4"}, True),
    (["python", "train.py"], {"SLURM_JOB_NUM_NODES": "1"}, False),
    (["torchrun", "--nnodes", "2", "train.py"], {}, True),
    (["torchrun", "--nnodes=1", "train.py"], {}, False),
    (["torchrun", "--nnodes=1:4", "train.py"], {}, True),
])
def test_a_run_knows_when_it_is_one_node_of_several(argv, env, expected):
    assert spans_nodes(argv, env) is expected


def test_nodes_write_their_own_folders_into_one_shared_folder(tmp_path, monkeypatch):
    shared = str(tmp_path / "shared")
    made = []
    for host in ("node-a", "node-b"):
        monkeypatch.setenv("GPUPROF_HOST", host)
        made.append(create_run_dir(shared, "train", per_node=True))
    assert not os.path.exists(os.path.join(shared, "run.json"))
    assert [os.path.basename(p).split("-2")[0] for p in made] == ["train-node-a", "train-node-b"]
    for path in made:
        with open(os.path.join(path, "run.json"), "w") as handle:
            json.dump({"format": "gpuprof.run/1"}, handle)
    assert run_folders([shared]) == sorted(made)
    assert run_folders([made[1], made[0], made[1]]) == [made[1], made[0]]


def test_a_folder_without_runs_is_refused(tmp_path):
    with pytest.raises(RecordError, match="not a gpuprof run folder"):
        run_folders([str(tmp_path)])
    with pytest.raises(RecordError, match="no such run folder or report JSON"):
        run_folders([str(tmp_path / "missing")])
