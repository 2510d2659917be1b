"""Signals: forwarded once, statuses preserved, a report whatever happened."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import default_signal_dispositions, env_with_source, load_json

pytestmark = pytest.mark.signals
WAIT = os.path.join(PROGRAMS, "wait_for_signal.py")


def start(tmp_path, *args):
    proc = subprocess.Popen([sys.executable, "-m", "gpuprof", "run", "--out", str(tmp_path / "run"), *args],
                            cwd=tmp_path, env=env_with_source(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signal_dispositions)
    assert proc.stdout.readline() == "ready\n"       # wait for the child, never sleep-and-hope
    return proc


def child_pid(tmp_path):
    return load_json(tmp_path / "run" / "run.json").get("pid")


def test_sigterm_to_gpuprof_reaches_the_child_and_gpuprof_dies_of_it_after_a_report(tmp_path):
    proc = start(tmp_path, WAIT)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM
    report = load_json(tmp_path / "run" / "report.json")
    assert report["exit_code"] == 143 and report["signal"] == "SIGTERM" and report["interrupted"]
    pid = load_json(tmp_path / "run" / "run.json")["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_handler_that_saves_a_checkpoint_finishes_once(tmp_path):
    proc = start(tmp_path, WAIT, "checkpoint")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5
    assert out.count("saving checkpoint") == 1 and "checkpoint saved" in out
    run = load_json(tmp_path / "run" / "run.json")
    assert [s["forwarded"] for s in run["signals"]] == [True]


def test_sigint_sent_to_gpuprof_alone_is_forwarded_once(tmp_path):
    proc = start(tmp_path, WAIT, "checkpoint")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5 and out.count("saving checkpoint on SIGINT") == 1


def test_child_killed_by_sigkill_kills_gpuprof_too_after_a_partial_report(tmp_path):
    code = "import os, signal; print('dying', flush=True); os.kill(os.getpid(), signal.SIGKILL)"
    script = tmp_path / "die.py"
    script.write_text(code)
    got = subprocess.run([sys.executable, "-m", "gpuprof", "run", "--out", str(tmp_path / "run"), str(script)],
                         cwd=tmp_path, env=env_with_source(), capture_output=True, text=True, timeout=60)
    assert got.returncode == -signal.SIGKILL
    report = load_json(tmp_path / "run" / "report.json")
    assert report["signal"] == "SIGKILL" and "out-of-memory" in report["outcome"]
    assert "out-of-memory" in got.stderr


PROBE = os.path.join(PROGRAMS, "signal_probe.py")


def launch(tmp_path, mode, **popen):
    """gpuprof on signal_probe.py, returned once the job has said its first line."""
    popen.setdefault("preexec_fn", default_signal_dispositions)
    proc = subprocess.Popen([sys.executable, "-m", "gpuprof", "run", "-q", "--out", str(tmp_path / "run"), PROBE, mode],
                            cwd=tmp_path, env=env_with_source(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)
    first = proc.stdout.readline()
    return proc, first


def _ignore_hangup_and_interrupts():
    default_signal_dispositions()
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)


def test_signals_ignored_at_start_stay_ignored_and_are_not_forwarded(tmp_path):
    """nohup and background jobs: a hangup must not kill the job under gpuprof either."""
    expected = subprocess.run([sys.executable, PROBE, "ignored"], capture_output=True, text=True, timeout=60,
                              preexec_fn=_ignore_hangup_and_interrupts)
    proc, first = launch(tmp_path, "ignored", preexec_fn=_ignore_hangup_and_interrupts)
    assert first == expected.stdout.splitlines(keepends=True)[0] == "ignored: SIGHUP SIGINT SIGQUIT\n"
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGHUP)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.endswith("finished\n"), err
    assert load_json(tmp_path / "run" / "run.json")["signals"] == []


def test_a_signal_sent_to_the_whole_group_reaches_the_job_once(tmp_path):
    """`kill -TERM -- -PGID`: a checkpoint handler that aborts on a second SIGTERM finishes its checkpoint."""
    proc, first = launch(tmp_path, "twice", start_new_session=True)
    assert first == "ready\n"
    os.killpg(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, out + err
    assert out.count("saving checkpoint") == 1 and "abort" not in out


def test_timeout_signals_pid_and_group_and_the_job_sees_one(tmp_path):
    """coreutils timeout sends the signal to gpuprof and then to its process group."""
    got = subprocess.run(["timeout", "--preserve-status", "4", sys.executable, "-m", "gpuprof", "run", "-q",
                          "--out", str(tmp_path / "run"), PROBE, "twice"],
                         cwd=tmp_path, env=env_with_source(), capture_output=True, text=True, timeout=120)
    assert got.stdout.startswith("ready\n"), got.stderr
    assert got.returncode == 5 and got.stdout.count("saving checkpoint") == 1 and "abort" not in got.stdout


def test_every_forwardable_signal_reaches_the_job_and_gpuprof_survives(tmp_path):
    proc, first = launch(tmp_path, "forward")
    assert first == "ready\n"
    names = ["SIGUSR1", "SIGUSR2", "SIGALRM", "SIGWINCH"]
    for name in names:
        proc.send_signal(getattr(signal, name))
        assert proc.stdout.readline() == f"got {name}\n"      # one each, in order, gpuprof alive
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == "bye\n", err
    signals = load_json(tmp_path / "run" / "run.json")["signals"]
    assert [s["signal"] for s in signals] == names + ["SIGTERM"] and all(s["forwarded"] for s in signals)


def _state(pid):
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0]


def _wait_for_state(pids, wanted, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(_state(pid) == wanted for pid in pids):
            return True
        time.sleep(0.02)
    return False


def test_a_stop_stops_the_job_and_gpuprof_and_a_continue_resumes_both(tmp_path):
    """Ctrl-Z as a shell user expects: the whole job stops, then `fg` continues it."""
    proc, first = launch(tmp_path, "forward")
    assert first == "ready\n"
    child = child_pid(tmp_path)
    proc.send_signal(signal.SIGTSTP)
    assert _wait_for_state([child, proc.pid], "T")
    proc.send_signal(signal.SIGCONT)
    assert proc.stdout.readline() == "got SIGCONT\n"
    assert _state(proc.pid) != "T" and _state(child) != "T"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == "bye\n", err


def test_signals_while_the_job_exits_never_cost_the_report(tmp_path):
    proc, first = launch(tmp_path, "late")
    assert first == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "saving checkpoint\n"
    assert proc.stdout.readline() == "checkpoint saved\n"
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:     # a burst while gpuprof writes the report
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            break
        time.sleep(0.002)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    assert load_json(tmp_path / "run" / "report.json")["exit_code"] == 5
