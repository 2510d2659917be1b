"""The /proc source against the real /proc: the tree is found afresh, kept files read fresh values,
and a process that left the tree leaves no descriptor behind."""

import os
import subprocess
import sys
import time

import pytest

from gpuprof.capture.samplers.procfs import ProcfsSource

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")

TREE = ("import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "sys.stdin.readline()\n"
        "child.kill(); child.wait()\n"
        "print('gone', flush=True)\n"
        "sys.stdin.readline()\n")


def test_tree_follows_a_grandchild_until_it_ends_and_closes_its_files():
    parent = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(parent.stdout.readline())
        source = ProcfsSource(os.getpid())
        for _ in range(3):              # the full scan, then walks over kept children files
            pids = {r.pid for r in source.tree()}
            assert {os.getpid(), parent.pid, grandchild} <= pids
        assert any(f"/{grandchild}/" in path for path in source._files._fds)
        parent.stdin.write("\n")
        parent.stdin.flush()
        assert parent.stdout.readline().strip() == "gone"
        for _ in range(2):
            pids = {r.pid for r in source.tree()}
        assert grandchild not in pids and parent.pid in pids
        assert not any(f"/{grandchild}/" in path for path in source._files._fds)
        source.close()
        assert not source._files._fds
    finally:
        parent.kill()
        parent.wait()


def test_kept_files_read_fresh_values():
    source = ProcfsSource(os.getpid())
    before = source._read_process(os.getpid()).user_s + source._read_process(os.getpid()).system_s
    end = time.process_time() + 0.15
    while time.process_time() < end:
        pass
    after = source._read_process(os.getpid())
    assert after.user_s + after.system_s >= before + 0.1
    first, second = source.machine().cpu, None
    time.sleep(0.05)
    second = source.machine().cpu
    assert sum(second.values()) > sum(first.values())
    source.close()


def test_open_files_read_whole_files_larger_than_one_read_and_see_rewrites(tmp_path):
    from gpuprof.capture.samplers.procfs import OpenFiles

    path = tmp_path / "stat"
    path.write_text("cpu " + "1 " * 100_000 + "\n")
    files = OpenFiles()
    assert files.read(str(path)) == path.read_text()
    path.write_text("cpu 2\n")                      # rewritten in place: the kept descriptor sees it
    assert files.read(str(path)) == "cpu 2\n"
    files.close()
