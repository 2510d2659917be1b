"""The CPUs and memory a job may use, read from cgroup trees of both layouts (fixtures written the way
the kernel shows them) and from the affinity mask."""

import os

from gpuprof.capture.samplers import cgroups


def write(root, path, text):
    full = os.path.join(str(root), path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


V1_MOUNTS = ("30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
             "31 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n")
V2_MOUNTS = "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def v1_tree(root, quota="150000", period="100000", limit="2147483648", parent_quota="-1"):
    write(root, "/proc/self/mountinfo", V1_MOUNTS)
    write(root, "/proc/42/cgroup", "4:memory:/slurm/job7\n1:cpu:/slurm/job7\n0::/\n")
    write(root, "/sys/fs/cgroup/cpu/slurm/cpu.cfs_quota_us", parent_quota)
    write(root, "/sys/fs/cgroup/cpu/slurm/cpu.cfs_period_us", "100000")
    write(root, "/sys/fs/cgroup/cpu/slurm/job7/cpu.cfs_quota_us", quota)
    write(root, "/sys/fs/cgroup/cpu/slurm/job7/cpu.cfs_period_us", period)
    write(root, "/sys/fs/cgroup/cpu/slurm/job7/cpu.stat", "nr_periods 100\nnr_throttled 7\nthrottled_time 350000000\n")
    write(root, "/sys/fs/cgroup/memory/slurm/job7/memory.limit_in_bytes", limit)


def test_v1_quota_memory_limit_and_throttling(tmp_path):
    v1_tree(tmp_path)
    limits = cgroups.JobLimits(42, root=str(tmp_path), host_cpus=64)
    limits.observe()
    write(tmp_path, "/sys/fs/cgroup/cpu/slurm/job7/cpu.stat", "nr_periods 200\nnr_throttled 27\nthrottled_time 1350000000\n")
    limits.observe()
    got = limits.to_dict()
    assert got["quota_cpus"] == 1.5 and got["cpus"] == 1.5 and got["source"] == "the cgroup v1 CPU quota"
    assert got["memory_limit_bytes"] == 2 * 2**30 and got["host_cpus"] == 64
    assert got["throttled"] == {"periods": 20, "seconds": 1.0}


def test_a_parents_smaller_quota_counts_and_v1_no_limit_reads_as_none(tmp_path):
    v1_tree(tmp_path, quota="-1", parent_quota="50000", limit=str(2**63 - 4096))
    limits = cgroups.JobLimits(42, root=str(tmp_path), host_cpus=8)
    limits.observe()
    got = limits.to_dict()
    assert got["quota_cpus"] == 0.5 and got["memory_limit_bytes"] is None


def test_v2_cpu_max_and_memory_max(tmp_path):
    write(tmp_path, "/proc/self/mountinfo", V2_MOUNTS)
    write(tmp_path, "/proc/42/cgroup", "0::/kubepods/pod1/ctr\n")
    write(tmp_path, "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "200000 100000\n")
    write(tmp_path, "/sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "max\n")
    write(tmp_path, "/sys/fs/cgroup/kubepods/pod1/memory.max", "4294967296\n")
    write(tmp_path, "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.stat", "usage_usec 10\nnr_throttled 3\nthrottled_usec 500000\n")
    limits = cgroups.JobLimits(42, root=str(tmp_path), host_cpus=32)
    limits.observe()
    got = limits.to_dict()
    assert got["cpus"] == 2.0 and got["source"] == "the cgroup v2 CPU quota"
    assert got["memory_limit_bytes"] == 4 * 2**30 and got["throttled"] == {"periods": 0, "seconds": 0.0}


def test_inside_a_container_the_cgroup_is_the_mounts_root(tmp_path):
    write(tmp_path, "/proc/self/mountinfo", V2_MOUNTS)
    write(tmp_path, "/proc/42/cgroup", "0::/../../docker/abc\n")
    write(tmp_path, "/sys/fs/cgroup/cpu.max", "max 100000\n")
    limits = cgroups.JobLimits(42, root=str(tmp_path), host_cpus=4)
    limits.observe()
    got = limits.to_dict()
    assert got["cpus"] == 4 and got["source"] == "the host's CPU count" and got["quota_cpus"] is None


def test_a_process_gone_before_the_first_reading_leaves_the_host_count():
    limits = cgroups.JobLimits(2**22 + 12345, host_cpus=2)
    limits.observe()
    assert limits.to_dict()["cpus"] == 2


def test_the_affinity_mask_of_a_live_process():
    assert cgroups.affinity(os.getpid()) == len(os.sched_getaffinity(0))


def test_the_probe_knows_torchs_shared_memory_failures_from_others():
    from gpuprof.capture.probes.memory import _is_out_of_shared_memory
    assert _is_out_of_shared_memory(RuntimeError("Caught RuntimeError in DataLoader worker process 0.\nRuntimeError: "
                                                 "unable to allocate shared memory(shm) for file </torch_1_2_0>"))
    assert _is_out_of_shared_memory(RuntimeError("DataLoader worker (pid 12) is killed by signal: Bus error. It is "
                                                 "possible that dataloader's workers are out of shared memory."))
    assert not _is_out_of_shared_memory(RuntimeError("CUDA out of memory"))


def test_batches_in_flight_near_the_size_of_dev_shm_are_warned_of():
    from gpuprof.advise.shm import in_flight_bytes, shm_note
    loader = {"num_workers": 4, "prefetch_factor": 2, "batch": {"bytes": 4 * 2**20}, "where": "train.py:9"}
    assert in_flight_bytes(loader) == 32 * 2**20
    note = shm_note({"cpu_limit": {"shm_bytes": 64 * 2**20}}, [loader])
    assert "32 MiB of batches are in flight" in note and "/dev/shm holds 64 MiB" in note
    assert shm_note({"cpu_limit": {"shm_bytes": 8 * 2**30}}, [loader]) is None
    assert shm_note({"cpu_limit": {"shm_bytes": 64 * 2**20}}, [dict(loader, num_workers=0)]) is None
