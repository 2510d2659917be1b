"""The machine around the job: does this look like a container, can py-spy read other processes,
and how many cores, how much memory and /dev/shm a job started here gets. Each reader takes `root`
(the file system root) so tests read fixture trees."""

import os

CONTAINER_MARKS = ("docker", "kubepods", "containerd", "libpod", "podman", "lxc", "crio")


def container(root: str = "/", environ=None) -> list:
    """The signs that this process runs in a container (empty when none): the files Docker and Podman
    leave, a container runtime's name in the cgroup path, Kubernetes' environment."""
    environ = os.environ if environ is None else environ
    signs = [f"/{name} exists" for name in (".dockerenv", "run/.containerenv")
             if os.path.exists(os.path.join(root, name))]
    cgroup = _read(os.path.join(root, "proc/self/cgroup")) or ""
    marks = sorted({mark for mark in CONTAINER_MARKS if mark in cgroup})
    if marks:
        signs.append(f"the cgroup path names {', '.join(marks)}")
    if environ.get("KUBERNETES_SERVICE_HOST"):
        signs.append("KUBERNETES_SERVICE_HOST is set")
    return signs


def pyspy() -> dict:
    """{"path": py-spy's executable or None, "ptrace_scope": Yama's setting or None, "root": bool}."""
    from gpuprof.commands.attach.pyspy import find_pyspy
    from gpuprof.commands.attach.target import ptrace_scope
    from gpuprof.errors import UsageProblem
    try:
        path = find_pyspy()
    except UsageProblem:
        path = None
    return {"path": path, "ptrace_scope": ptrace_scope(), "root": os.geteuid() == 0}


def limits(pid: int = None, root: str = "/") -> dict:
    """What a job started from this process may use, read as `gpuprof run` reads it for the job:
    {"cpus", "source", "host_cpus", "memory_limit_bytes", "shm_bytes", "shm_free_bytes", ...}."""
    from gpuprof.capture.samplers.cgroups import JobLimits
    reader = JobLimits(pid or os.getpid(), root=root)
    reader.observe()
    out = reader.to_dict()
    out["shm_free_bytes"] = out.pop("shm_free_min_bytes", None)
    return out


def _read(path: str):
    try:
        with open(path, "r", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
