"""Facts about gpuprof's own installation that several layers need: its version (written into
every run's header and report) and the folder that holds the package (put on a child's path so
the job's processes import the same gpuprof). Kept apart from the package's `__init__`, which
serves `%load_ext gpuprof`, so that no module has to import the package root."""

import os

__version__ = "0.1.0"

#: The folder that holds the `gpuprof` package.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
