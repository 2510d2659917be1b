"""The CPUs and memory a job may use: its affinity mask and its cgroup's CPU quota and memory limit.

A Slurm job sees every core of its node but may run on 8 (its cpuset, the affinity mask); a
Kubernetes pod may use 2 cores' worth of time (its cgroup's CPU quota) on a 64-core host. gpuprof's
worker counts and CPU bounds are in "cores the job may use", so they are read here, for the job's
own process and cgroup, with where each figure came from. cgroup v2 (`cpu.max`, `memory.max`,
`cpu.stat` throttled_usec) and v1 (`cpu.cfs_quota_us`/`cpu.cfs_period_us`, `memory.limit_in_bytes`,
`cpu.stat` throttled_time) are both read; a quota anywhere up the job's cgroup path counts.

Everything takes `root` (the file system root, "/" for real) so tests read fixture trees of both
layouts."""

import os

NO_MEMORY_LIMIT = 1 << 60      # v1 writes a huge number for "no limit"


def _read(root: str, path: str):
    try:
        with open(os.path.join(root, path.lstrip("/")), "r", encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def parse_cgroup_paths(text: str) -> dict:
    """/proc/PID/cgroup -> {controller: path}; the v2 unified hierarchy under the key ''."""
    out = {}
    for line in (text or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            out[controller.replace("name=", "")] = path
    return out


def parse_mounts(text: str) -> list:
    """/proc/self/mountinfo -> [(mount point, root inside the file system, fs type, super options)]."""
    out = []
    for line in (text or "").splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        out.append((fields[4], fields[3], tail[0], tail[2].split(",")))
    return out


def controller_dir(controller: str, paths: dict, mounts: list, root: str = "/"):
    """(the directory of the job's cgroup for `controller`, its mount point, 'v1'/'v2'), or None."""
    for mount_point, mount_root, fstype, options in mounts:
        if fstype == "cgroup" and controller in options and controller in paths:
            version, path = "v1", paths[controller]
        elif fstype == "cgroup2" and "" in paths and not any(
                f == "cgroup" and controller in o for _, _, f, o in mounts):
            version, path = "v2", paths[""]
        else:
            continue
        relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else path.lstrip("/")
        candidate = os.path.normpath(os.path.join(mount_point, "" if relative == "." else relative))
        if not os.path.isdir(os.path.join(root, candidate.lstrip("/"))):
            candidate = mount_point       # inside a container the job's cgroup is the mount's root
        return candidate, mount_point, version
    return None


def _up_to(directory: str, mount_point: str):
    """The directory and its parents up to the mount point."""
    while True:
        yield directory
        if directory == mount_point or len(directory) <= len(mount_point):
            return
        directory = os.path.dirname(directory)


def _smallest_up_the_path(found, value_at):
    """The smallest of value_at(directory, version) over the job's cgroup and its parents up to the
    mount (a parent's limit binds its children too), or None where none has one."""
    if found is None:
        return None
    directory, mount_point, version = found
    values = [v for v in (value_at(place, version) for place in _up_to(directory, mount_point)) if v is not None]
    return min(values) if values else None


def cpu_quota(found, root: str = "/"):
    """The smallest CPU quota up the job's cgroup path, in cores, or None where there is none."""
    def quota_at(place, version):
        if version == "v2":
            parts = (_read(root, os.path.join(place, "cpu.max")) or "").split()
            return int(parts[0]) / int(parts[1]) if len(parts) == 2 and parts[0] != "max" else None
        quota, period = _read(root, os.path.join(place, "cpu.cfs_quota_us")), \
            _read(root, os.path.join(place, "cpu.cfs_period_us"))
        try:
            return int(quota) / int(period) if int(quota) > 0 and int(period) > 0 else None
        except (TypeError, ValueError):
            return None

    return _smallest_up_the_path(found, quota_at)


def throttling(found, root: str = "/"):
    """(periods throttled, seconds throttled) of the job's cgroup so far, or None."""
    if found is None:
        return None
    directory, _, version = found
    stats = {}
    for line in (_read(root, os.path.join(directory, "cpu.stat")) or "").splitlines():
        name, _, value = line.partition(" ")
        try:
            stats[name] = int(value)
        except ValueError:
            pass
    if "nr_throttled" not in stats:
        return None
    seconds = stats.get("throttled_usec", 0) / 1e6 if version == "v2" else stats.get("throttled_time", 0) / 1e9
    return stats["nr_throttled"], seconds


def memory_limit(found, root: str = "/"):
    """The smallest memory limit up the job's cgroup path, in bytes, or None."""
    def limit_at(place, version):
        text = (_read(root, os.path.join(place, "memory.max" if version == "v2" else "memory.limit_in_bytes"))
                or "").strip()
        return int(text) if text.isdigit() and int(text) < NO_MEMORY_LIMIT else None

    return _smallest_up_the_path(found, limit_at)


def affinity(pid: int):
    try:
        return len(os.sched_getaffinity(pid))
    except (AttributeError, OSError):
        return None


class JobLimits:
    """What the job's root process may use, read when asked (the sampler asks at its first ticks and
    at the end), with the throttling of its CPU cgroup between the first and the last reading."""

    def __init__(self, pid: int, root: str = "/", host_cpus: int = None):
        self.pid = pid
        self.root = root
        self.host_cpus = host_cpus or os.cpu_count() or 1
        self.state = None
        self.throttled_first = None
        self.throttled_last = None
        self.throttled_dir = None
        self.cpu_dir = None

    def observe(self) -> None:
        text = _read(self.root, f"/proc/{self.pid}/cgroup")
        if text is None:
            return                         # the process is gone: keep the last reading
        paths = parse_cgroup_paths(text)
        mounts = parse_mounts(_read(self.root, "/proc/self/mountinfo"))
        cpu = controller_dir("cpu", paths, mounts, self.root)
        memory = controller_dir("memory", paths, mounts, self.root)
        pinned = affinity(self.pid) if self.root == "/" else None
        quota = cpu_quota(cpu, self.root)
        self.state = {"host_cpus": self.host_cpus, "affinity_cpus": pinned,
                      "quota_cpus": round(quota, 3) if quota is not None else None,
                      "memory_limit_bytes": memory_limit(memory, self.root),
                      "cgroup": {"version": cpu[2], "cpu": cpu[0]} if cpu else None}
        self.cpu_dir = cpu
        total, _ = self._shm()
        if total:
            self.state["shm_bytes"] = total
        self.sample()

    def _shm(self):
        """(size, free bytes) of /dev/shm as the job sees it (its own mount namespace, through
        /proc/PID/root: a container's or `unshare -m`'s tmpfs), or (None, None)."""
        try:
            stat = os.statvfs(os.path.join(self.root, f"proc/{self.pid}/root/dev/shm"))
        except OSError:
            return None, None
        return stat.f_blocks * stat.f_frsize, stat.f_bavail * stat.f_frsize

    def sample(self) -> None:
        """Read the job's CPU cgroup throttling and /dev/shm's free space (the sampler calls it every tick)."""
        if self.state is not None:
            _, free = self._shm()
            if free is not None:
                self.state["shm_free_min_bytes"] = min(free, self.state.get("shm_free_min_bytes", free))
        cpu = self.cpu_dir
        throttled = throttling(cpu, self.root)
        if throttled is not None:
            if self.throttled_first is None or self.throttled_dir != cpu[0]:
                # The first reading of this cgroup (a launcher may move the job into it after the start).
                self.throttled_first, self.throttled_dir = throttled, cpu[0]
            self.throttled_last = throttled

    def to_dict(self) -> dict:
        """{cpus: the cores the job may use, source, host_cpus, affinity_cpus, quota_cpus,
        memory_limit_bytes, throttled: {periods, seconds} over the run}."""
        state = dict(self.state or {"host_cpus": self.host_cpus, "affinity_cpus": None, "quota_cpus": None,
                                    "memory_limit_bytes": None, "cgroup": None})
        choices = [(self.host_cpus, "the host's CPU count")]
        if state["affinity_cpus"]:
            choices.append((state["affinity_cpus"], "the affinity mask (sched_getaffinity)"))
        if state["quota_cpus"]:
            version = (state.get("cgroup") or {}).get("version")
            choices.append((state["quota_cpus"], f"the cgroup {version} CPU quota"))
        cpus, source = min(choices, key=lambda c: c[0])
        state.update(cpus=cpus, source=source)
        if self.throttled_first is not None and self.throttled_last is not None:
            state["throttled"] = {"periods": self.throttled_last[0] - self.throttled_first[0],
                                  "seconds": round(self.throttled_last[1] - self.throttled_first[1], 3)}
        return state
