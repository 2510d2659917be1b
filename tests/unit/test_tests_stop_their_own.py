"""Tests stop only the processes they started (by PID, or the session folder they made): a developer's
own jobs and clusters on the same machine survive the test suite."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Ways of stopping processes by name or by owner, never by what a test started. Split so that this
#: file does not match itself.
BY_NAME = re.compile(r"\bp" r"kill\b|\bkill" r"all\b|\"st" r"op\", \"--force\"|(?:RAY|\"ray\"), \"st" r"op\"")


def test_no_test_stops_processes_by_name_or_every_ray_cluster():
    found = []
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith((".py", ".sh")):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for number, line in enumerate(handle, 1):
                        if BY_NAME.search(line):
                            found.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    assert not found, found
