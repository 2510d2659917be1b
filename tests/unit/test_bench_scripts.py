"""Every bench script a reader runs by hand answers --help with its usage and refuses a name it does
not know with exit 2, before it measures anything (docs/benchmarks.md tells readers to run them)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCH = os.path.join(ROOT, "bench")


def _scripts() -> list:
    """The bench's entry points: the files that run something when started as a script."""
    found = []
    for name in sorted(os.listdir(BENCH)):
        if name.endswith(".py"):
            with open(os.path.join(BENCH, name)) as handle:
                if '\nif __name__ == "__main__":' in handle.read():
                    found.append(name)
    return found


def test_the_bench_has_entry_points():
    assert {"accuracy.py", "corpus_truth.py", "edited_truth.py", "rollout_truth.py", "overhead.py"} <= set(_scripts())


@pytest.mark.slow  # a fresh interpreter per script, some importing torch: the slow tier
def test_every_bench_script_answers_help():
    started = {name: subprocess.Popen([sys.executable, os.path.join(BENCH, name), "--help"], cwd=BENCH,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name in _scripts()}
    for name, process in started.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and out.startswith("usage:"), (name, err[-500:])


@pytest.mark.slow  # fresh interpreters: the slow tier
@pytest.mark.parametrize("argv", [["accuracy.py", "no-such-example.py"], ["accuracy.py", "--corpus", "no_such_program"],
                                  ["corpus_truth.py", "no_such_program"], ["edited_truth.py", "no_such_case"]])
def test_an_unknown_name_is_refused_before_anything_runs(argv):
    done = subprocess.run([sys.executable, os.path.join(BENCH, argv[0])] + argv[1:], cwd=BENCH,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and argv[-1] in done.stderr.splitlines()[-1] and not done.stdout
