import io
import json

from gpuprof.commands.workflows.live import JobFigures, LiveStatus
from gpuprof.capture.samplers.columns import ColumnStore
from gpuprof.capture.samplers.nvml import GPU_COLUMNS
from gpuprof.capture.samplers.system import SYSTEM_COLUMNS


class Sampler:
    def __init__(self, kinds, row):
        self.store = ColumnStore(kinds)
        self.store.append(row)


class Gpus:
    available = True

    def __init__(self):
        self.stores = [Sampler(GPU_COLUMNS, {"t": 1.0, "util_gpu": 0.87}).store]


class Terminal(io.StringIO):
    """A fake terminal of a given size (os.get_terminal_size reads it through fileno)."""

    def __init__(self, rows=24, columns=80):
        super().__init__()
        self.size = (rows, columns)


def live_on(terminal, clock, events_dir=None, cpu_count=2):
    live = LiveStatus(terminal, events_dir=events_dir, cpu_count=cpu_count, clock=clock)
    live._size = lambda: terminal.size
    return live


def write_events(folder, steps, waits):
    (folder / "h-1-ab.jsonl").write_text(
        json.dumps({"k": "process", "pid": 1, "t": 0.0}) + "\n"
        + json.dumps({"k": "step", "cols": ["t", "f", "fc"], "rows": [[t, None, None] for t in steps]}) + "\n"
        + json.dumps({"k": "batch", "l": "1:1", "cols": ["t", "w"], "rows": waits}) + "\n")


def test_the_line_sits_below_a_scroll_region_and_says_steps_wait_cpu_gpu(tmp_path, clock):
    write_events(tmp_path, [10.0 + 0.1 * i for i in range(21)], [[10.0 + 0.1 * i, 0.06] for i in range(21)])
    terminal = Terminal(rows=30)
    live = live_on(terminal, clock, events_dir=str(tmp_path))
    system = Sampler(SYSTEM_COLUMNS, {"t": 1.0, "dt": 0.1, "job_user_s": 0.3, "job_system_s": 0.05})
    clock.advance(12.3)
    live(system, Gpus())
    out = terminal.getvalue()
    assert "\x1b[1;29r" in out                       # everything else scrolls in rows 1..29
    assert "\x1b7\x1b[30;1H\x1b[2K" in out            # the status is drawn on row 30 only
    assert "10.0 steps/s" in out and "data wait 60%" in out
    assert "CPU 2.0/2 cores" in out                   # 3.5 cores measured, never more than the machine has
    assert "GPU 87%" in out
    live.clear()
    assert terminal.getvalue().endswith("\x1b[30;1H\x1b[2K\x1b[r\x1b8")     # region reset, row cleared


def test_a_resize_moves_the_region_and_a_stop_takes_it_down(tmp_path, clock):
    terminal = Terminal(rows=30)
    live = live_on(terminal, clock)
    system = Sampler(SYSTEM_COLUMNS, {"t": 1.0, "dt": 0.1, "job_user_s": 0.1, "job_system_s": 0.0})
    live(system, None)
    terminal.size = (40, 100)
    live(system, None)
    assert "\x1b[1;39r" in terminal.getvalue()
    live.suspend()
    assert live.rows is None and terminal.getvalue().endswith("\x1b[r\x1b8")


def test_nothing_is_drawn_on_a_tiny_terminal(clock):
    terminal = Terminal(rows=3)
    live = live_on(terminal, clock)
    live(Sampler(SYSTEM_COLUMNS, {"t": 1.0, "dt": 0.1, "job_user_s": 0.1, "job_system_s": 0.0}), None)
    live.clear()
    assert terminal.getvalue() == ""


def test_job_figures_read_files_as_they_grow(tmp_path):
    figures = JobFigures(str(tmp_path))
    assert figures.figures() == (None, None)
    path = tmp_path / "h-1-ab.jsonl"
    path.write_text(json.dumps({"k": "step", "cols": ["t", "f", "fc"], "rows": [[1.0, None, None]]}) + "\n"
                    + '{"k":"step","cols":["t","f","fc"],"rows":[[1.5,nu')          # a line still being written
    figures.poll()
    assert figures.figures() == (None, None)
    with open(path, "a") as handle:
        handle.write('ll,null]]}\n')
    figures.poll()
    assert figures.figures() == (2.0, None)
