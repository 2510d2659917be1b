import compileall
import os

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
PROGRAMS = os.path.join(TESTS, "programs")


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = 100.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:
        """A wait that takes no time on this clock (the simulated NVML's PCIe read blocks on it)."""


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(autouse=True, scope="session")
def _no_inherited_terminal_width():
    """Text outputs wrap to COLUMNS (else 100 when piped): a width inherited from the shell that runs
    the tests would change every golden console report. Tests that need a width set their own."""
    saved = {key: os.environ.pop(key) for key in ("COLUMNS", "LINES") if key in os.environ}
    yield
    os.environ.update(saved)


INTEGRATION = os.path.join(TESTS, "integration")


def pytest_sessionstart(session):
    """Byte-compile the package once before the tests start its processes. Where
    PYTHONDONTWRITEBYTECODE is set (as on the CI machines) Python reads cached bytecode but never
    writes it, so every supervisor, job, DataLoader worker and rank would otherwise compile the
    package's ~400 modules again: about 0.3 s of CPU each, hundreds of times a suite."""
    try:
        compileall.compile_dir(os.path.join(ROOT, "gpuprof"), quiet=2)
    except OSError:                 # a read-only checkout: the processes compile as before
        pass


def pytest_ignore_collect(collection_path, config):
    """Under `-m "not slow"` every integration test would be deselected only after its module was
    imported (torch, nbclient, Stable-Baselines3 at import: seconds of the fast tier): not collected."""
    if config.getoption("markexpr", "").strip() == "not slow" and (str(collection_path) == INTEGRATION or
            str(collection_path).startswith(INTEGRATION + os.sep)):
        return True
    return None


def pytest_collection_modifyitems(items):
    """Every integration test runs real programs (seconds to minutes each): marked `slow`, so that
    `pytest -m "not slow" tests` is the under-a-minute tier of pure unit tests."""
    for item in items:
        if str(item.path).startswith(INTEGRATION + os.sep):
            item.add_marker(pytest.mark.slow)
