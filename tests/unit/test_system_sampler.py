from gpuprof.capture.samplers.procfs import MachineReading, ProcReading
from gpuprof.capture.samplers.system import SystemSampler


class FakeSource:
    """Stands in for /proc: each call to machine()/tree() returns the next scripted reading."""

    def __init__(self, machines, trees):
        self.machines = list(machines)
        self.trees = list(trees)

    def machine(self):
        return self.machines.pop(0)

    def tree(self):
        return self.trees.pop(0)


def machine(user, system, iowait, idle, read, busy_ms, io_some_us=0):
    return MachineReading(cpu={"user": user, "system": system, "iowait": iowait, "steal": 0.0, "idle": idle},
                          disk=(read, 0, {"vda": busy_ms}), pressure={"io_some": io_some_us})


def proc(pid, user, system, read_bytes=0, read_chars=0, start=1):
    return ProcReading(pid=pid, ppid=1, name="python", user_s=user, system_s=system, rss=1000 * pid,
                       read_bytes=read_bytes, read_chars=read_chars, start_ticks=start)


def test_tick_turns_cumulative_counters_into_per_interval_amounts(clock):
    source = FakeSource(
        machines=[machine(10, 5, 0, 85, 0, 0), machine(10.08, 5.02, 0.05, 85.05, 4_000_000, 50, 20_000)],
        trees=[[proc(10, 1.0, 0.1, 100, 200)], [proc(10, 1.09, 0.11, 1100, 5200), proc(11, 0.05, 0.0, 0, 0)]],
    )
    sampler = SystemSampler(source, clock)
    sampler.tick()
    clock.advance(0.1)
    sampler.tick()
    cols = sampler.store.to_dict()["columns"]
    assert len(cols["t"]) == 1
    assert abs(cols["job_user_s"][0] - (0.09 + 0.05)) < 1e-9       # a new worker counts from zero
    assert abs(cols["job_system_s"][0] - 0.01) < 1e-9
    assert cols["job_read_bytes"][0] == 1000 and cols["job_read_chars"][0] == 5000
    assert cols["job_procs"][0] == 2
    assert abs(cols["cpu_iowait"][0] - 0.05 / 0.2) < 1e-9
    assert abs(cols["disk_busy"][0] - 0.5) < 1e-9
    assert abs(cols["psi_io_some"][0] - 0.2) < 1e-9
    assert cols["disk_read_bytes"][0] == 4_000_000
    assert {p["pid"] for p in sampler.processes.values()} == {10, 11}


def test_a_reused_pid_is_a_new_process(clock):
    source = FakeSource(
        machines=[machine(1, 1, 0, 1, 0, 0)] * 2,
        trees=[[proc(10, 5.0, 0.0, start=1)], [proc(10, 0.2, 0.0, start=99)]],
    )
    sampler = SystemSampler(source, clock)
    sampler.tick()
    clock.advance(0.1)
    sampler.tick()
    assert abs(sampler.store.columns["job_user_s"][0] - 0.2) < 1e-9
    assert len(sampler.processes) == 2
