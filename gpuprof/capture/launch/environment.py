"""The child's environment: the user's own, plus the bootstrap on PYTHONPATH and one settings variable."""

import json
import os

from gpuprof.package import PACKAGE_ROOT
from gpuprof.record.schema import BOOTSTRAP_ENV

BOOTSTRAP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap")


def child_environment(base: dict, settings: dict) -> dict:
    """A copy of `base` with the bootstrap first on PYTHONPATH and the settings in GPUPROF_BOOTSTRAP."""
    env = dict(base)
    existing = env.get("PYTHONPATH", "")
    # Every entry the user had stays, in order, empty ones too (an empty entry puts the cwd on
    # sys.path); an empty PYTHONPATH adds nothing, as for plain python. The bootstrap takes its own
    # folder back off sys.path.
    env["PYTHONPATH"] = BOOTSTRAP_DIR + (os.pathsep + existing if existing else "")
    env[BOOTSTRAP_ENV] = json.dumps(dict(settings, root=PACKAGE_ROOT), separators=(",", ":"))
    return env
