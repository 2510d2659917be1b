"""Ray workers of a joined cluster: gpuprof's bootstrap merged into the job's runtime environment
(the user's variables kept), and the reason a joined cluster's run has no step to judge."""

import json

from gpuprof.judge.sections.ray_reach import why_no_step
from gpuprof.capture.probes.ray_cluster import with_bootstrap
from gpuprof.record.schema import BOOTSTRAP_ENV

SETTINGS = json.dumps({"run_dir": "/runs/x", "root": "/opt/gpuprof"})
ENVIRON = {BOOTSTRAP_ENV: SETTINGS, "PYTHONPATH": "/opt/gpuprof/gpuprof/capture/launch/bootstrap:/mine"}


def test_the_bootstrap_joins_the_jobs_runtime_environment_and_the_users_variables_win():
    env = with_bootstrap({"pip": ["x"], "env_vars": {"PYTHONPATH": "/theirs", "OMP_NUM_THREADS": "1",
                                                    BOOTSTRAP_ENV: "user's"}}, ENVIRON)
    assert env["pip"] == ["x"] and env["env_vars"]["OMP_NUM_THREADS"] == "1"
    assert env["env_vars"]["PYTHONPATH"] == "/opt/gpuprof/gpuprof/capture/launch/bootstrap:/theirs"
    assert env["env_vars"][BOOTSTRAP_ENV] == "user's"
    fresh = with_bootstrap(None, ENVIRON)["env_vars"]
    assert fresh == {BOOTSTRAP_ENV: SETTINGS, "PYTHONPATH": "/opt/gpuprof/gpuprof/capture/launch/bootstrap:${PYTHONPATH}"}
    assert with_bootstrap(None, {}) is None                      # not under gpuprof: nothing changes


def test_a_joined_cluster_without_steps_says_why_and_how_to_run():
    reached = [{"k": "ray_cluster", "address": "auto", "reached": True,
                "nodes": [{"host": "a", "alive": True}, {"host": "b", "alive": True}]}]
    assert "joined the Ray cluster at auto (2 nodes)" in why_no_step(reached)
    assert "a folder every node of the cluster can write" in why_no_step(reached)
    refused = [{"k": "ray_cluster", "address": "10.0.0.1:6379", "reached": False, "why": "its runtime environment "
                "could not be extended (TypeError)"}]
    assert "could not reach: its runtime environment could not be extended" in why_no_step(refused)
    assert why_no_step([{"k": "ray_cluster", "address": None, "reached": True}]) is None   # a cluster it started
    assert why_no_step([]) is None
