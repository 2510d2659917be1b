"""Ray as production runs it: a job that joins a cluster already running, whose training workers the
cluster's raylets start (not gpuprof's child). gpuprof reaches them through the job's Ray runtime
environment: on a `ray start --head` cluster, and on Ray's own multi-node test cluster (two raylets
on this machine); the program's output and exit status are those of plain python."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, load_json, plain_beside_gpuprof

JOB = os.path.join(PROGRAMS, "ray_joined_cluster.py")
TEST_CLUSTER = os.path.join(PROGRAMS, "ray_test_cluster.py")
RAY = os.path.join(os.path.dirname(sys.executable), "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_env(address: str) -> dict:
    """This interpreter's environment for Ray: its own python first on PATH, the cluster's address."""
    env = env_with_source({"RAY_ADDRESS": address, "RAY_USAGE_STATS_ENABLED": "0"})
    return {k: v for k, v in env.items() if not k.startswith("GPUPROF_")}


def _profiled_and_plain(tmp_path, address):
    """The profiled job and the plain one side by side on the cluster (two jobs of its own; the tests
    compare what they print and judge no timing)."""
    expected, got = plain_beside_gpuprof([JOB], ["run", "-q", "--out", str(tmp_path / "run"), JOB],
                                         cwd=str(tmp_path), env=_ray_env(address), timeout=300)
    return got, expected, load_json(tmp_path / "run" / "report.json")


def _assert_workers_reached(got, expected, report):
    assert got.returncode == expected.returncode == 0, got.stderr
    assert [line for line in got.stdout.splitlines() if line.startswith("losses")] == \
        [line for line in expected.stdout.splitlines() if line.startswith("losses")]
    assert report["verdict"]["bottleneck"], report["verdict"]["summary"]       # not "no training step"
    assert report["steps"]["count"] > 0
    assert len(report["ranks"]) == 2                                             # both workers, each with its row


@pytest.fixture
def head_cluster():
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")                            # short: Ray's socket paths
    env = _ray_env("")
    started = subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                              f"--temp-dir={temp}", "--disable-usage-stats"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_cluster_under(temp)


def _stop_cluster_under(temp: str) -> None:
    """Stops the processes of the cluster this test started, and only those: every process whose
    command line names its temp folder, with their children (Ray's agents rename themselves), TERM then KILL. Ray's
    own stop command would stop every Ray cluster of the user on this machine."""
    import psutil
    me = os.getpid()
    roots = [p for p in psutil.process_iter(["cmdline"])
             if p.pid != me and any(temp in arg for arg in (p.info["cmdline"] or []))]
    procs = {p.pid: p for p in roots}
    for root in roots:
        try:
            procs.update((child.pid, child) for child in root.children(recursive=True))
        except psutil.Error:
            pass
    for proc in procs.values():
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(list(procs.values()), timeout=3)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    shutil.rmtree(temp, ignore_errors=True)


def test_a_job_joining_a_ray_start_cluster_is_seen_in_its_workers(tmp_path, head_cluster):
    _assert_workers_reached(*_profiled_and_plain(tmp_path, head_cluster))


def test_a_job_on_a_two_raylet_cluster_is_seen_on_both_nodes(tmp_path):
    cluster = subprocess.Popen([sys.executable, TEST_CLUSTER, "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=_ray_env(""))
    try:
        address = cluster.stdout.readline().strip()
        assert address, "the test cluster did not start"
        _assert_workers_reached(*_profiled_and_plain(tmp_path, address))
    finally:
        cluster.stdin.close()
        try:
            cluster.wait(timeout=120)
        except subprocess.TimeoutExpired:
            cluster.kill()
