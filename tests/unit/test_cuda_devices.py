"""The job's CUDA devices: noted inside the process through a fake torch.cuda (UUIDs in NVML's
spelling, only the devices used, again only when the set changes), and merged across the job."""

import pytest

from gpuprof.judge.sections.devices import analyse_devices
from gpuprof.capture.probes import cuda_devices as probe

BARE = "8a1b9c2d-3e4f-5061-7283-94a5b6c7d8e9"


class CUuuid:
    """Like torch._C._CUuuid: prints 8-4-4-4-12 lower-case hex without a prefix."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    @property
    def bytes(self):
        return list(bytes.fromhex(self.text.replace("-", "")))


class FakeCuda:
    """torch.cuda with `count` devices: memory reserved where the program put some."""

    def __init__(self, count=4, current=0, reserved=(), initialized=True):
        self.count, self.current, self.reserved, self.initialized = count, current, set(reserved), initialized
        self.properties_asked = []

    def is_initialized(self):
        return self.initialized

    def current_device(self):
        return self.current

    def device_count(self):
        return self.count

    def memory_stats_as_nested_dict(self, index):
        held = (1 << 30) if index in self.reserved else 0
        return {"allocated_bytes": {"all": {"current": held // 2, "peak": held}},
                "reserved_bytes": {"all": {"current": held, "peak": held}}}

    def get_device_properties(self, index):
        self.properties_asked.append(index)
        return type("Props", (), {"name": f"NVIDIA H100 80GB HBM3", "uuid": CUuuid(f"0000000{index}" + BARE[8:])})()


@pytest.fixture
def emitted(monkeypatch):
    events = []
    monkeypatch.setattr(probe.runtime, "emit", events.append)
    monkeypatch.setattr(probe, "_state", {"torch": None, "cuda": None, "used": (), "noted": None})
    return events


def use(monkeypatch, fake):
    monkeypatch.setitem(probe._state, "torch", type("Torch", (), {"cuda": fake})())


@pytest.mark.parametrize("raw, mig, expected", [
    (CUuuid(BARE), False, "GPU-" + BARE),
    (CUuuid(BARE.upper()), False, "GPU-" + BARE),
    ("GPU-" + BARE.upper(), False, "GPU-" + BARE),
    (BARE.replace("-", ""), False, "GPU-" + BARE),
    (CUuuid(BARE), True, "MIG-" + BARE),
    (type("Raw", (), {"bytes": list(bytes.fromhex(BARE.replace("-", "")))})(), False, "GPU-" + BARE),
    ("not a uuid", False, None), (None, False, None),
])
def test_cuda_uuids_in_nvmls_spelling(raw, mig, expected):
    assert probe.nvml_uuid(raw, mig) == expected


def test_a_mig_instance_is_known_by_its_name_or_by_cuda_visible_devices():
    assert probe.is_mig("NVIDIA A100-SXM4-40GB MIG 1g.5gb", CUuuid(BARE), None)
    assert probe.is_mig("NVIDIA A100-SXM4-40GB", CUuuid(BARE), "MIG-" + BARE.upper())
    assert not probe.is_mig("NVIDIA A100-SXM4-40GB", CUuuid(BARE), "GPU-" + BARE)
    assert not probe.is_mig("NVIDIA H100 80GB HBM3", CUuuid(BARE), "0,1")


def test_nothing_is_noted_before_the_program_initialises_cuda(monkeypatch, emitted):
    fake = FakeCuda(initialized=False)
    use(monkeypatch, fake)
    probe.check(1.0)
    assert emitted == [] and probe.used() == () and fake.properties_asked == []


def test_the_devices_used_are_the_current_one_and_those_holding_memory(monkeypatch, emitted):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1,0,2")
    fake = FakeCuda(count=4, current=1, reserved={1, 3})
    use(monkeypatch, fake)
    probe.check(1.0)
    (event,) = emitted
    assert [d["cuda_index"] for d in event["devices"]] == [1, 3] and probe.used() == (1, 3)
    assert event["devices"][0]["uuid"] == "GPU-00000001" + BARE[8:]
    assert event["devices"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert event["visible"] == "3,1,0,2"
    assert sorted(set(fake.properties_asked)) == [1, 3]      # nothing asked of devices the program never used
    probe.check(2.0)
    assert len(emitted) == 1                                 # the same set: nothing more
    fake.reserved.add(2)
    probe.check(3.0)
    assert len(emitted) == 2 and [d["cuda_index"] for d in emitted[1]["devices"]] == [1, 2, 3]


def test_a_failing_read_never_reaches_the_program(monkeypatch, emitted):
    fake = FakeCuda()

    def broken(index):
        raise RuntimeError("driver gone")

    fake.memory_stats_as_nested_dict = broken
    use(monkeypatch, fake)
    probe.check(1.0)
    assert emitted == []


def _group(pid, rank, devices, memory=None, launcher_rank=None):
    events = [{"k": "process", "pid": pid, "ppid": 1, "t": 0.0, **({"rank": launcher_rank} if launcher_rank is not None else {})}]
    if rank is not None:
        events.append({"k": "rank", "rank": rank, "world_size": 2, "backend": "nccl"})
    events.append({"k": "cuda_devices", "t": 1.0, "devices": devices, "visible": None})
    if memory:
        events.append({"k": "device_memory", "t": 2.0, "devices": memory})
    return events


def test_the_job_devices_merge_processes_by_uuid_with_their_ranks_and_memory():
    a, b = "GPU-" + BARE, "GPU-11111111" + BARE[8:]
    groups = [
        _group(100, 0, [{"cuda_index": 0, "uuid": a, "name": "H100"}],
               memory=[{"cuda_index": 0, "peak_bytes": 5 << 30, "reserved_peak_bytes": 6 << 30}]),
        # rank 1 sees its GPU as cuda:0 too (CUDA_VISIBLE_DEVICES=1), and shares GPU a as cuda:1
        _group(101, 1, [{"cuda_index": 0, "uuid": b, "name": "H100"}, {"cuda_index": 1, "uuid": a, "name": "H100"}],
               memory=[{"cuda_index": 0, "peak_bytes": 7 << 30, "reserved_peak_bytes": 8 << 30},
                       {"cuda_index": 1, "peak_bytes": 1 << 30, "reserved_peak_bytes": 1 << 30}]),
        [{"k": "process", "pid": 102, "ppid": 100, "t": 0.5}],               # a DataLoader worker: no CUDA
    ]
    devices = analyse_devices(groups)
    by_uuid = {d["uuid"]: d for d in devices}
    assert set(by_uuid) == {a, b}
    assert by_uuid[a]["pids"] == [100, 101] and by_uuid[a]["ranks"] == [0, 1]
    assert by_uuid[a]["cuda_indices"] == [0, 1]
    assert by_uuid[a]["peak_bytes"] == (5 << 30) + (1 << 30)     # each process's own peak there, added
    assert by_uuid[b]["pids"] == [101] and by_uuid[b]["ranks"] == [1] and by_uuid[b]["cuda_index"] == 0
    assert by_uuid[b]["reserved_peak_bytes"] == 8 << 30


def test_a_process_without_a_rank_keeps_its_place_in_the_ranks_list():
    devices = analyse_devices([_group(100, None, [{"cuda_index": 0, "uuid": "GPU-" + BARE, "name": "H100"}]),
                               _group(99, None, [{"cuda_index": 0, "uuid": "GPU-" + BARE, "name": "H100"}],
                                      launcher_rank=3)])
    assert devices[0]["pids"] == [99, 100] and devices[0]["ranks"] == [3, None]
