"""The name of this machine as every part of a run records it (event files, run.json, folder names).

GPUPROF_HOST overrides it: containers on several nodes often share one host name, and tests stand
for two nodes on one machine this way."""

import os
import re

HOST_ENV = "GPUPROF_HOST"


def host_name() -> str:
    name = os.environ.get(HOST_ENV) or os.uname().nodename.split(".")[0] or "host"
    # It goes into file names: keep it to safe characters.
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "host"
