"""gpuprof ends as plain python would have: no process of the job left behind after a scheduler's
TERM, TERM, KILL; the job's status whatever happened to the report; death by the job's signal."""

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import default_signal_dispositions, env_with_source, load_json

pytestmark = pytest.mark.signals

LOADER = os.path.join(PROGRAMS, "loader_forever.py")
KILL_SELF = os.path.join(PROGRAMS, "kill_self.py")
FILL_DISK = os.path.join(PROGRAMS, "fill_disk.py")
#: Seconds torch's DataLoader worker waits between checks that its parent lives (MP_STATUS_CHECK_INTERVAL),
#: the bound plain python's orphaned workers keep, with a generous margin for a loaded machine.
WATCHDOG_BOUND_S = 5.0 + 10.0


def _job_processes(token: str) -> list:
    """Live (not zombie) processes whose command line carries `token`: the job and its workers."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def _start_loader(tmp_path, token: str):
    """gpuprof on loader_forever.py (2 workers); the token is the script's argument, not gpuprof's."""
    return subprocess.Popen([sys.executable, "-m", "gpuprof", "run", "-q", "--out", str(tmp_path / token),
                             LOADER, token], cwd=tmp_path, env=env_with_source(), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, preexec_fn=default_signal_dispositions)


def _wait_ready(proc, timeout: float = 180.0) -> None:
    """The job's "ready" line; a job that never says it fails the test instead of hanging it."""
    if not select.select([proc.stdout], [], [], timeout)[0]:
        proc.send_signal(signal.SIGTERM)
        pytest.fail(f"the job under gpuprof (pid {proc.pid}) said nothing in {timeout:.0f} s")
    assert proc.stdout.readline() == "ready\n"


def _send(proc, pattern) -> None:
    """TERM, TERM, KILL with the pattern's pauses before each; stops once gpuprof has gone."""
    for pause, sig in zip(pattern, (signal.SIGTERM, signal.SIGTERM, signal.SIGKILL)):
        time.sleep(pause)
        if proc.poll() is not None:
            return
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return


def _gone_within(token: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _job_processes(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _waves() -> list:
    """The patterns to run, in waves of up to ten runs side by side: each pattern once by default,
    GPUPROF_TEST_REPEATS times when set (4 gives the full twenty runs, in two waves of ten)."""
    repeats = max(1, int(os.environ.get("GPUPROF_TEST_REPEATS", "1")))
    runs = PATTERNS * repeats
    return [runs[start:start + 10] for start in range(0, len(runs), 10)]


#: Pauses before the first TERM, the second TERM and the KILL: a burst, the second TERM while the job
#: dies, while gpuprof writes the report, after it; a KILL soon after one TERM.
PATTERNS = [(0, 0, 0), (0, 0.05, 0.1), (0, 0.3, 0.3), (0, 1.0, 1.0), (0.2, 0.0, 0.15)]


def test_term_term_kill_leaves_no_process_of_the_job(tmp_path):
    """Each of the five patterns, side by side (GPUPROF_TEST_REPEATS=4: four runs of each, in two
    waves of ten, as docs/reliability.md says). When gpuprof ended on its own, nothing
    of the job is left the moment it has gone; when the KILL took gpuprof itself (which plain
    python could not survive either), the workers go within torch's own bound, never reparented
    and forgotten."""
    killed = []
    for wave in _waves():
        runs = []
        for pattern in wave:
            token = "job" + uuid.uuid4().hex[:10]
            runs.append((pattern, token, _start_loader(tmp_path, token)))
        for pattern, token, proc in runs:
            _wait_ready(proc)
        senders = [threading.Thread(target=_send, args=(proc, pattern)) for pattern, token, proc in runs]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        for pattern, token, proc in runs:
            proc.wait(timeout=60)
            proc.stdout.close()
            left = _job_processes(token)
            if proc.returncode == -signal.SIGKILL:
                killed.append((pattern, token))
            else:
                assert left == [], (pattern, proc.returncode, left)
    for pattern, token in killed:
        assert _gone_within(token, WATCHDOG_BOUND_S), (pattern, _job_processes(token))


def _on_a_tiny_full_disk(folder, *command):
    """`command` in a mount namespace of its own where `folder` is a 512 KiB tmpfs (an unprivileged
    user namespace: no root needed, nothing left mounted afterwards)."""
    os.makedirs(folder, exist_ok=True)
    mount = 'mount -t tmpfs -o size=512k tmpfs "$0" && exec "$@"'
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount, str(folder), *command]


def _tiny_disks_available(tmp_path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(_on_a_tiny_full_disk(tmp_path / "probe", "true"), capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.parametrize("strict, status", [(False, 0), (True, 2)])
def test_a_full_disk_costs_the_report_not_the_jobs_status(tmp_path, strict, status):
    """The job fills the disk that holds the run folder and exits 0, as it does under plain python;
    gpuprof says in one line what it could not write, where and why, and keeps status 0 unless
    --strict."""
    if not _tiny_disks_available(tmp_path):
        pytest.skip("no user namespaces here to mount a tiny filesystem in")
    disk = tmp_path / "disk"
    expected = subprocess.run(_on_a_tiny_full_disk(disk, sys.executable, FILL_DISK, str(disk)),
                              capture_output=True, text=True, timeout=60)
    run_dir = disk / "run"
    options = ["--strict"] if strict else []
    got = subprocess.run(_on_a_tiny_full_disk(disk, sys.executable, "-m", "gpuprof", "run", "-q", *options,
                                              "--out", str(run_dir), FILL_DISK, str(run_dir)),
                         capture_output=True, text=True, timeout=120, env=env_with_source())
    assert expected.returncode == 0 and got.stdout == expected.stdout == "disk full\n"
    assert got.returncode == status, got.stderr
    lines = got.stderr.splitlines()
    assert len(lines) == 1, got.stderr
    assert lines[0].startswith("gpuprof: error: could not write ") and "report.json" in lines[0]
    assert f"in {run_dir}: No space left on device" in lines[0]


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGKILL", "SIGTERM"])
def test_a_job_that_dies_of_a_signal_makes_gpuprof_die_of_it_after_the_report(tmp_path, name):
    sig = getattr(signal, name)
    expected = subprocess.run([sys.executable, KILL_SELF, name], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, preexec_fn=default_signal_dispositions)
    got = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", str(tmp_path / "run"), KILL_SELF,
                          name], cwd=tmp_path, env=env_with_source(), capture_output=True, text=True, timeout=120,
                         preexec_fn=default_signal_dispositions)
    assert expected.returncode == got.returncode == -sig, got.stderr
    assert got.stdout == expected.stdout == "about to die\n"
    report = load_json(tmp_path / "run" / "report.json")
    assert report["signal"] == name and report["exit_code"] == 128 + sig
    assert not list(tmp_path.glob("core*"))


class _Outcome:
    def __init__(self, exit_status, died_of):
        self.exit_status, self.died_of = exit_status, died_of


def test_the_status_is_the_jobs_and_only_a_real_death_is_re_raised():
    from gpuprof.commands.workflows.run import job_status
    steps_stop = job_status({"exit_code": 0}, _Outcome(130, 2))          # --steps ended in a SIGINT: planned
    assert steps_stop == 0 and steps_stop.died_of is None
    no_record = job_status({"exit_code": None}, _Outcome(0, None))       # run.json lost on a full disk
    assert no_record == 0 and isinstance(no_record, int)
    crashed = job_status(None, _Outcome(139, 11))
    assert crashed == 139 and crashed.died_of == signal.SIGSEGV


def _start_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[19])


def test_leftovers_in_the_jobs_group_are_ended_and_a_daemon_is_left_alone():
    from gpuprof.capture.launch.job_tree import end_leftovers
    worker = subprocess.Popen(["sleep", "60"], process_group=0)
    helper = subprocess.Popen(["sleep", "60"], process_group=0)          # a group of its own, same session
    daemon = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        tracked = [(p.pid, _start_ticks(p.pid)) for p in (helper, daemon)] + [(worker.pid, 0)]
        ended = end_leftovers(worker.pid, tracked)
        assert sorted(ended) == sorted([worker.pid, helper.pid])
        assert worker.wait(timeout=30) == helper.wait(timeout=30) == -signal.SIGKILL
        assert daemon.poll() is None
    finally:
        for proc in (worker, helper, daemon):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
