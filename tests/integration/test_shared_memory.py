"""DataLoader workers that run out of /dev/shm: a tmpfs of 2 MiB mounted over /dev/shm in a private
mount namespace (`unshare -m`, root only; skipped elsewhere), real workers, the program's own failure
and exit status, and a verdict that names shared memory with its fixes."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SMALL_SHM = 'mount -t tmpfs -o size=2m tmpfs /dev/shm && exec "$0" "$@"'


def private_small_shm_works() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", SMALL_SHM, "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not private_small_shm_works(), reason="needs root and unshare -m to mount a small /dev/shm")
def test_workers_out_of_shared_memory_get_a_verdict_that_names_it(tmp_path):
    program = os.path.join(PROGRAMS, "shm_workers.py")
    alone = subprocess.run(["unshare", "-m", "sh", "-c", SMALL_SHM, sys.executable, program], capture_output=True,
                           text=True, timeout=120)
    got = gpuprof("run", "--out", str(tmp_path / "run"), "--", "unshare", "-m", "sh", "-c", SMALL_SHM,
                  sys.executable, program, cwd=str(tmp_path), timeout=120)
    assert alone.returncode != 0 and got.returncode == alone.returncode
    assert "unable to allocate shared memory" in got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    assert report["verdict"]["bottleneck"] == "memory.shm", report["verdict"]
    assert report["system"]["cpu_limit"]["shm_bytes"] == 2 * 2**20
    assert "/dev/shm holds 2 MiB" in report["verdict"]["summary"]
    assert [a["id"] for a in report["advice"]] == ["shm-size", "sharing-strategy", "fewer-batches-in-flight"]
    assert "Out of shared memory" in " ".join(got.stderr.split())
