"""No tracked file carries a real machine's absolute path: a captured log, a saved run or a golden
file written on a developer's machine must have its paths replaced by the placeholders the tests
document (tests/golden/outputs.py's RUN_DIR under /home/user, /home/me in unit tests, /tmp/x)."""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Home folders that stand for "some user" in docs and tests.
PLACEHOLDER_USERS = {"user", "me", "you", "name", "username", "USER", "<user>", "alice", "bob"}

#: Paths that only a real machine produces. Each pattern is split by a character class so that
#: this file does not match itself.
MACHINE_PATHS = (
    re.compile(r"/(?:home|Users)/([A-Za-z0-9_.<>-]+)/"),                    # a home folder: user checked below
    re.compile(r"(?<![\w.~-])/wor[k]/[A-Za-z0-9_.-]+"),                      # a scratch checkout
    re.compile(r"(?<![\w.~-])/roo[t]/\.[A-Za-z]"),                           # root's dot folders (.cache, .local)
    re.compile(r"(?<![\w.~-])/tm[p]/(?:pytest-of-|tmp[a-z0-9_]{6,}|bash_jobs|[A-Za-z_-]*\d{3,})"),  # generated
)


def tracked_files():
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    return [name for name in listed.stdout.decode("utf-8", "replace").split("\0") if name]


def machine_paths(text: str) -> list:
    """The absolute paths in `text` that look like a real machine's."""
    found = []
    for pattern in MACHINE_PATHS:
        for match in pattern.finditer(text):
            if match.groups() and match.group(1) in PLACEHOLDER_USERS:
                continue
            found.append(match.group(0))
    return found


def test_the_patterns_tell_a_real_path_from_a_placeholder():
    stray = ("File \"/wor" "k/main/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py\"\n"
             "/home/" "jdoe/proj/train.py:12\n/Users/" "kim/data\n/tm" "p/pytest-of-root/pytest-3/x\n"
             "/tm" "p/tmpab12cd_9/run\n/roo" "t/.local/state/gpuprof/runs/busy")
    assert len(machine_paths(stray)) == 6
    placeholders = ("/home/user/runs/RUN /home/me/train.py /tmp/x /tmp/kept/02-bad /tmp/ipykernel_PID/NNN.py "
                    "~/.local/state/gpuprof/runs /work/ alone")
    assert machine_paths(placeholders) == []


def test_no_tracked_file_holds_a_machine_s_absolute_path():
    files = tracked_files()
    if files is None:
        pytest.skip("not in a git checkout")
    offenders = []
    for name in files:
        path = os.path.join(ROOT, name)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:          # listed but removed in the working tree
            continue
        if b"\0" in data[:8192]:
            continue             # binary
        paths = machine_paths(data.decode("utf-8", "replace"))
        if paths:
            offenders.append(f"{name}: {', '.join(sorted(set(paths))[:3])}")
    assert not offenders, "absolute paths of a real machine in tracked files:\n" + "\n".join(offenders)
