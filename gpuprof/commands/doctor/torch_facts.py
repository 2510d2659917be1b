"""What torch says in the interpreter a job will run in, asked in a child process so gpuprof never
imports torch itself and a hanging driver costs a timeout, not the command.

With `hold`, a child whose torch has CUDA also creates a CUDA context (one tiny tensor) and keeps it
until told to end: while it lives, NVML's process list can be compared with its PID."""

import json
import os
import select
import subprocess
import time

TIMEOUT_S = 20.0

CHILD = r"""
import json, os, sys
out = {"pid": os.getpid(), "python": sys.executable}
try:
    import torch
except BaseException as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out), flush=True)
    raise SystemExit(0)
out.update(version=torch.__version__, cuda=getattr(torch.version, "cuda", None))
try:
    out["available"] = bool(torch.cuda.is_available())
    out["count"] = torch.cuda.device_count() if out["available"] else 0
    out["devices"] = []
    for i in range(out["count"]):
        p = torch.cuda.get_device_properties(i)
        out["devices"].append({"cuda_index": i, "name": p.name, "uuid": str(getattr(p, "uuid", "") or ""),
                               "memory_bytes": int(p.total_memory)})
    if "hold" in sys.argv[1:] and out["count"]:
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        out["holding"] = True
except BaseException as exc:
    out["cuda_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out), flush=True)
if out.get("holding"):
    sys.stdin.read()
"""


class TorchChild:
    """One child asking torch. `facts` is its answer: {"pid", "python", "version", "cuda", "available",
    "count", "devices", "holding", "error", "cuda_error"}, or {"python", "error"} when it could not
    answer. Use as a context manager: the child ends on exit."""

    def __init__(self, python: str, hold: bool = False, timeout_s: float = TIMEOUT_S):
        self.python = python
        self.hold = hold
        self.timeout_s = timeout_s
        self.child = None
        self.facts = None

    def __enter__(self):
        try:
            self.child = subprocess.Popen([self.python, "-c", CHILD] + (["hold"] if self.hold else []),
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.facts = {"python": self.python, "error": f"cannot start it ({exc.strerror or exc})"}
            return self
        line, ended = _read_line(self.child.stdout, self.timeout_s)
        try:
            self.facts = dict(json.loads(line), python=self.python) if line else None
        except ValueError:
            self.facts = None
        if self.facts is None:
            self.facts = {"python": self.python, "error": f"no answer within {self.timeout_s:g} s"}
            if ended:
                self.facts["error"] = f"it ended with status {self.child.wait()} before answering"
        return self

    def __exit__(self, *exc_info):
        if self.child is None:
            return False
        try:
            self.child.stdin.close()
        except OSError:
            pass
        try:
            self.child.wait(timeout=5 if "pid" in (self.facts or {}) else 0)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()
        self.child.stdout.close()
        return False


def _read_line(stream, timeout_s: float) -> tuple:
    """(the child's answer: its first line that starts with '{"pid"', as a sitecustomize may print
    before it, or None; whether its output ended without one)."""
    deadline = time.monotonic() + timeout_s
    data = b""
    while True:
        for line in data.split(b"\n")[:-1]:
            if line.startswith(b'{"pid"'):
                return line.decode("utf-8", "replace"), False
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return None, False
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            return None, True
        data += chunk
