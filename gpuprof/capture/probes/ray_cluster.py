"""Ray workers the job did not start itself: reached through Ray's own runtime environment.

A script that joins a running cluster (`ray start --head`, then `ray.init(address="auto")` or
RAY_ADDRESS set — how Ray runs in production) has its training workers started by the cluster's
raylets, not by the profiled process, so they never inherit gpuprof's environment. Ray's documented
way to give a job's workers an environment is the job's runtime environment: `ray.init` here merges
gpuprof's bootstrap into its `env_vars` (PYTHONPATH first, the settings variable), so every worker
Ray starts for this job — on any node — runs the same probes and writes beside the job's other
records. The user's own runtime environment is kept: their variables win over ours, their PYTHONPATH
follows the bootstrap. A note of the cluster (its address, nodes, whether the environment could be
set) lets the report say why it saw no worker when it could not reach them."""

import json
import os
import sys

from . import runtime
from ...record import kinds
from ...record.schema import BOOTSTRAP_ENV

_state = {"noted": False}


def install(ray) -> None:
    """Wrap `ray.init` (the package's name and the module it comes from, which Ray's libraries call)."""
    worker = sys.modules.get("ray._private.worker")
    original = getattr(ray, "init", None)
    if original is None or getattr(original, "__gpuprof__", False):
        return
    wrapped = _wrap(original)
    ray.init = wrapped
    if worker is not None and getattr(worker, "init", None) is original:
        worker.init = wrapped


def _wrap(original):
    def init(*args, **kwargs):
        address = kwargs.get("address", args[0] if args else None) or os.environ.get("RAY_ADDRESS")
        reached, why = True, None
        try:
            kwargs["runtime_env"] = with_bootstrap(kwargs.get("runtime_env"), os.environ)
        except Exception as exc:      # a runtime environment gpuprof cannot extend: the job goes on unchanged
            reached, why = False, f"its runtime environment could not be extended ({type(exc).__name__})"
        context = original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        _note(address, reached, why)
        return context

    init.__wrapped__ = original
    init.__gpuprof__ = True
    return init


def with_bootstrap(runtime_env, environ: dict):
    """The job's runtime environment with gpuprof's bootstrap variables added to `env_vars`: a dict
    stays a dict, Ray's RuntimeEnv stays one (it is a dict too); None becomes a dict."""
    settings = environ.get(BOOTSTRAP_ENV)
    if not settings:
        return runtime_env
    root = json.loads(settings).get("root")
    env = runtime_env if runtime_env is not None else {}
    theirs = dict(env.get("env_vars") or {})
    ours = {BOOTSTRAP_ENV: settings}
    if root:
        # Ray expands ${VAR} in env_vars from the worker's own environment: the raylet's PYTHONPATH
        # follows the bootstrap, as the user's follows it in the job's own processes.
        user_path = theirs.get("PYTHONPATH") or "${PYTHONPATH}"
        ours["PYTHONPATH"] = os.path.join(root, "gpuprof", "capture", "launch", "bootstrap") + os.pathsep + user_path
    merged = dict(ours, **{k: v for k, v in theirs.items() if k != "PYTHONPATH"})
    env["env_vars"] = merged
    return env


def _note(address, reached: bool, why) -> None:
    """Note the cluster once: its address (None for one this script started), its nodes, and whether
    the workers could be given the bootstrap."""
    if _state["noted"]:
        return
    _state["noted"] = True
    nodes = None
    try:
        import ray
        nodes = [{"host": n.get("NodeManagerHostname"), "address": n.get("NodeManagerAddress"),
                  "alive": bool(n.get("Alive"))} for n in ray.nodes()]
    except Exception:
        pass
    runtime.emit({"k": kinds.RAY_CLUSTER, "address": str(address) if address else None, "reached": reached,
                  "why": why, "nodes": nodes})
