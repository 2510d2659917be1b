"""The probes load inside the user's job under a private package name, never as `gpuprof`: the
bootstrap's loader must find the probes' entry where the package keeps it, and nothing it loads may
import gpuprof by its public name (that would bind the job to whichever `gpuprof` is first on its
path, the program's own module of that name included)."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

START = os.path.join(ROOT, "gpuprof", "capture", "launch", "bootstrap", "_gpuprof_start.py")

CHILD = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("_gpuprof_start_under_test", sys.argv[1])
start = importlib.util.module_from_spec(spec)
spec.loader.exec_module(start)
boot = start._load_boot(sys.argv[2], False)
import os
probes = os.path.join(sys.argv[2], "capture", "probes")
for name in sorted(n[:-3] for n in os.listdir(probes) if n.endswith(".py") and n != "__init__.py"):
    importlib.import_module("_gpuprof_job.capture.probes." + name)
print(json.dumps({"boot": boot.__name__, "starts": callable(getattr(boot, "start", None)),
                  "torch": "torch" in sys.modules, "public": sorted(name for name in sys.modules if name == "gpuprof" or name.startswith("gpuprof."))}))
"""


def test_the_bootstrap_loads_the_probes_entry_and_every_probe_under_the_private_name_alone():
    done = subprocess.run([sys.executable, "-c", CHILD, START, os.path.join(ROOT, "gpuprof")], cwd=os.path.dirname(START),
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=""))
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["boot"] == "_gpuprof_job.capture.probes.boot" and got["starts"]
    assert got["public"] == [], f"loading the probes imported gpuprof by its public name: {got['public']}"
    assert not got["torch"], "a probe imported torch before the program did"
