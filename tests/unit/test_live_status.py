import io

from gpuprof.cli.live import LiveStatus
from gpuprof.samplers.columns import ColumnStore
from gpuprof.samplers.nvml import GPU_COLUMNS
from gpuprof.samplers.system import SYSTEM_COLUMNS


class Sampler:
    def __init__(self, kinds, row):
        self.store = ColumnStore(kinds)
        self.store.append(row)


class Gpus:
    available = True

    def __init__(self):
        self.stores = [Sampler(GPU_COLUMNS, {"t": 1.0, "util_gpu": 0.87}).store]


def test_one_line_with_elapsed_cpu_disk_and_gpu(clock):
    stream = io.StringIO()
    live = LiveStatus(stream, clock=clock)
    system = Sampler(SYSTEM_COLUMNS, {"t": 1.0, "dt": 0.1, "job_user_s": 0.15, "job_system_s": 0.05,
                                      "disk_read_bytes": 2_000_000})
    clock.advance(12.3)
    live(system, Gpus())
    line = stream.getvalue()
    assert line.startswith("\r\x1b[2K") and "\n" not in line
    assert "12.3s" in line and "CPU  2.0 cores" in line and "disk   20.0 MB/s" in line and "GPU  87%" in line
    live.clear()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_nothing_is_written_before_the_first_sample(clock):
    stream = io.StringIO()
    live = LiveStatus(stream, clock=clock)
    empty = Sampler(SYSTEM_COLUMNS, {})
    empty.store = ColumnStore(SYSTEM_COLUMNS)
    live(empty, None)
    live.clear()
    assert stream.getvalue() == ""
