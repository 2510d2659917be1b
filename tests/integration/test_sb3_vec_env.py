"""Reinforcement learning on Stable-Baselines3, end to end: PPO on 4 envs made with make_vec_env (a
DummyVecEnv), each rendering a frame and downsizing it in an ObservationWrapper
(tests/programs/sb3_ppo_render.py). The vector env is recognised in SB3's terms, env stepping is
the verdict, and the fixes speak SB3: the program's own make_vec_env call with vec_env_cls=
SubprocVecEnv (after the script's own --vec-env option), never gymnasium's make_vec nor a loop's
`agent.actor(...)`. Beside a process spinning on one of the two cores the verdict stays the env and
its share stays within 15 points of the quiet run's, with one torch thread and with torch's two."""

import os
import signal
import subprocess
import sys

import pytest

from gpuprof.judge.verdict import bottlenecks
from tests.conftest import PROGRAMS
from tests.integration.helpers import default_signal_dispositions, gpuprof, load_json

pytest.importorskip("torch")
pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")
pytestmark = pytest.mark.torch

PROGRAM = os.path.join(PROGRAMS, "sb3_ppo_render.py")
#: Points of the training time env stepping's share may move beside a busy process.
SHARE_TOLERANCE = 0.15
#: Words of other libraries an SB3 program must never be given.
FOREIGN = ("make_vec(", "agent.actor", "gymnasium.vector.")


def run(folder, *args):
    """(report.json, the report as the terminal shows it) of one profiled run of the program."""
    got = gpuprof("run", "-q", "--out", str(folder / "run"), "--", sys.executable, PROGRAM, *args,
                  cwd=str(folder), timeout=420)
    assert got.returncode == 0, got.stderr
    assert "sb3_ppo_render: done" in got.stdout
    shown = gpuprof("report", str(folder / "run"), cwd=str(folder), timeout=120)
    assert shown.returncode == 0, shown.stderr
    return load_json(folder / "run" / "report.json"), shown.stdout + shown.stderr


class Spinner:
    """A child process that keeps one core busy until the test stops it by its PID (SIGTERM, its
    default disposition set in the child: a test started from a background job may inherit signals
    ignored)."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "busy.py"), "900"],
                                        stdout=subprocess.DEVNULL, preexec_fn=default_signal_dispositions)
        return self

    def __exit__(self, *exc):
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def quiet(tmp_path_factory):
    """One profiled run of the program as it is (one torch thread), read by several tests."""
    return run(tmp_path_factory.mktemp("sb3_quiet"))


def every_text(report) -> str:
    parts = [report["verdict"].get("summary") or ""] + list(report.get("notes") or [])
    for advice in report["advice"]:
        parts += [advice.get(key) or "" for key in ("title", "detail", "snippet", "why", "ranked_by")]
    return "\n".join(parts)


def test_the_sb3_vector_env_is_recognised_and_env_stepping_is_the_verdict(quiet):
    report, _ = quiet
    env = report["environment"]
    assert env["library"] == "stable-baselines3" and env["vector"] is True and env["num_envs"] == 4, env
    assert env["vector_cls"] == "DummyVecEnv" and env["async"] is False and env["wrappers"] == ["VecTransposeImage"]
    assert env["sub_env"] == "DrawnBalls" and "Downsize" in env["sub_wrappers"]
    assert env["algorithm"] == "PPO" and env["n_steps"] == 64
    assert env["maker"] == "DrawnBalls" and env["n_envs"] == 4 and env["wrapper_class"] == "Downsize"
    assert env["make_where"].endswith("sb3_ppo_render.py:92") and env["where"].endswith("sb3_ppo_render.py:95")
    # One call per vector step: 4096 timesteps of 4 envs, the first few before the measured window.
    assert 700 < env["calls"] <= 1024 and env["per_env_step_s"] == pytest.approx(env["per_call_s"] / 4, rel=0.01)
    verdict = report["verdict"]
    assert verdict["bottleneck"] == bottlenecks.INPUT_ENV.id, verdict["summary"]
    assert verdict["share"] > 0.5


def test_the_fixes_speak_sb3_and_the_top_env_fix_steps_the_envs_in_processes(quiet):
    report, shown = quiet
    text = every_text(report) + shown
    assert not [word for word in FOREIGN if word in text], text
    ids = [a["id"] for a in report["advice"]]
    assert "rollout-inference" not in ids and "rollout-buffers" not in ids and "async-vector-env" not in ids
    env_fixes = [a for a in report["advice"] if bottlenecks.INPUT_ENV.id in a["addresses"]]
    others = (report["system"].get("others") or {})
    cores_left = report["system"]["cpu_count"] - (others.get("other_cores") or 0.0 if others.get("notable") else 0.0)
    if cores_left >= 1.5:
        top = env_fixes[0]
        assert top["id"] == "subproc-vec-env", ids
        assert "vec_env_cls=SubprocVecEnv" in top["snippet"] and "n_envs=4" in top["snippet"]
        assert "wrapper_class=Downsize" in top["snippet"] and "make_vec_env(DrawnBalls" in top["snippet"]
        assert top["snippet"].startswith("python ") and "--vec-env subproc" in top["snippet"].splitlines()[0]
        assert top["where"].endswith("sb3_ppo_render.py:92") and "vec_env_cls=SubprocVecEnv" in shown
    else:
        # Other processes left the job about one core: the sub-envs could not step side by side.
        assert "subproc-vec-env" not in ids
    rewrite = next(a for a in env_fixes if a["id"] == "vectorised-env")
    assert "stable_baselines3.common.vec_env.VecEnv" in rewrite["snippet"]
    more = next(a for a in report["advice"] if a["id"] == "more-envs-per-call")
    assert "n_envs=8" in more["snippet"] and "n_steps=32" in more["snippet"]


def test_subproc_vec_env_is_recognised_as_stepping_in_processes(tmp_path):
    report, _ = run(tmp_path, "--vec-env", "subproc", "--timesteps", "2048")
    env = report["environment"]
    assert env["vector_cls"] == "SubprocVecEnv" and env["async"] is True and env["num_envs"] == 4, env
    assert env["processes"] >= 1 and report["verdict"]["bottleneck"] == bottlenecks.INPUT_ENV.id
    assert "subproc-vec-env" not in [a["id"] for a in report["advice"]]
    assert not [word for word in FOREIGN if word in every_text(report)]


@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="a spinner on one of two cores")
def test_beside_a_spinner_env_stepping_stays_the_verdict_and_its_share(quiet, tmp_path):
    quiet_report, _ = quiet
    with Spinner():
        report, shown = run(tmp_path)
    verdict = report["verdict"]
    assert verdict["bottleneck"] == bottlenecks.INPUT_ENV.id, verdict["summary"]
    assert abs(verdict["share"] - quiet_report["verdict"]["share"]) <= SHARE_TOLERANCE, \
        (verdict["share"], quiet_report["verdict"]["share"])
    assert abs(report["environment"]["share"] - quiet_report["environment"]["share"]) <= SHARE_TOLERANCE
    assert report["system"]["others"]["notable"] and "busy_machine" in verdict
    assert not [word for word in FOREIGN if word in every_text(report) + shown]


@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="a spinner on one of two cores")
def test_beside_a_spinner_torchs_two_threads_do_not_turn_the_env_into_a_minority(quiet, tmp_path):
    # torch's default intra-op threads fight the spinner: the policy's calls stretch many times over
    # while the env's single thread only slows a little. At each part's uncontended pace the env is
    # still the job's largest part.
    quiet_report, _ = quiet
    with Spinner():
        report, shown = run(tmp_path, "--torch-threads", "0", "--timesteps", "1024")
    verdict = report["verdict"]
    assert verdict["bottleneck"] == bottlenecks.INPUT_ENV.id, verdict["summary"]
    assert abs(verdict["share"] - quiet_report["verdict"]["share"]) <= SHARE_TOLERANCE, \
        (verdict["share"], quiet_report["verdict"]["share"], report["environment"]["share"])
    assert verdict["evidence"]["env_share_measured"] == pytest.approx(report["environment"]["share"], abs=0.02)
    ids = [a["id"] for a in report["advice"]]
    assert "rollout-inference" not in ids and not [word for word in FOREIGN if word in every_text(report) + shown]
