"""The simulated GPU's CUDA face in real child processes: plain torch programs written for a GPU run
unchanged on the CPU-only torch under `environment(folder)`, write their device activity where the
NVML face reads it, time copies as CUDA does, and run under `gpuprof run` too."""

import json
import os
import textwrap

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment, state
from gpuprof.testing.simgpu.machine import device_dir
from tests.integration.helpers import env_with_source, gpuprof, plain, without_gpuprof_lines

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TRAIN = textwrap.dedent("""
    import json, os, sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    device = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to(device)
    opt = torch.optim.AdamW(model.parameters())
    data = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
    loader = DataLoader(data, batch_size=32, shuffle=True, pin_memory=True, num_workers=int(sys.argv[1]))
    pinned = []
    for epoch in range(2):
        for x, y in loader:
            pinned.append(x.is_pinned())
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    print(json.dumps({"loss": loss.item(), "device": str(next(model.parameters()).device),
                      "pinned": all(pinned) and len(pinned) == 16, "uuid": str(props.uuid), "name": props.name,
                      "count": torch.cuda.device_count(), "allocated": torch.cuda.memory_allocated(),
                      "pid": os.getpid()}))
""")

SEMANTICS = textwrap.dedent("""
    import json, os, sys, time
    import torch

    clock_hz = float(sys.argv[1]) * 1e6
    out = {}
    host = torch.randn(1024, 1024)                        # 4 MiB, pageable
    torch.cuda._sleep(int(0.5 * clock_hz))               # 500 ms of queued device work
    start = time.perf_counter()
    host.to("cuda", non_blocking=True)
    out["pageable_s"] = time.perf_counter() - start

    pinned = host.pin_memory()
    before, after = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(int(0.5 * clock_hz))
    start = time.perf_counter()
    before.record()
    on_device = pinned.to("cuda", non_blocking=True)
    after.record()
    out["pinned_s"] = time.perf_counter() - start
    out["done_at_once"] = after.query()
    after.synchronize()
    out["pinned_copy_ms"] = before.elapsed_time(after)

    try:
        torch.empty(3 << 30, dtype=torch.uint8, device="cuda")
    except torch.cuda.OutOfMemoryError as error:
        out["oom"] = str(error)

    pid = os.fork()
    if pid == 0:
        try:
            torch.zeros(1, device="cuda")
            os._exit(3)
        except RuntimeError as error:
            os._exit(0 if "Cannot re-initialize CUDA in forked subprocess" in str(error) else 4)
    out["child"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    out["pid"] = os.getpid()
    print(json.dumps(out))
""")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def last_json(stdout: str) -> dict:
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def records_of(folder, index):
    return state.read_records(device_dir(folder, index))


def test_a_training_loop_written_for_a_gpu_runs_and_its_work_lands_on_the_gpu(tmp_path):
    machine = Machine(gpus=[Gpu(), Gpu()])
    folder = machine.create(str(tmp_path / "machine"))
    script = write(tmp_path, "train.py", TRAIN)
    got = plain(script, "0", cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    assert got.stderr == ""
    result = last_json(got.stdout)
    assert result["device"] == "cuda:0" and result["count"] == 2 and result["pinned"]
    assert result["uuid"] == machine.uuid(0)[len("GPU-"):] and result["name"] == machine.gpus[0].name
    assert result["allocated"] > 0
    records = records_of(folder, 0)[result["pid"]]
    kinds = {record[3] for record in records}
    assert {state.KERNEL, state.H2D} <= kinds
    assert sum(record[4] for record in records if record[3] == state.H2D) >= 2 * 256 * (32 * 4 + 8)
    held, peak = state.read_memory(device_dir(folder, 0))[result["pid"]]
    assert held >= machine.gpus[0].context_bytes and peak >= held
    assert records_of(folder, 1) == {}


def test_cuda_visible_devices_by_uuid_puts_the_work_on_that_gpu(tmp_path):
    machine = Machine(gpus=[Gpu() for _ in range(8)])
    folder = machine.create(str(tmp_path / "machine"))
    script = write(tmp_path, "train.py", TRAIN)
    env = environment(folder)
    env["CUDA_VISIBLE_DEVICES"] = machine.uuid(5)
    got = plain(script, "0", cwd=tmp_path, env=env)
    assert got.returncode == 0, got.stderr
    result = last_json(got.stdout)
    assert result["count"] == 1 and result["uuid"] == machine.uuid(5)[len("GPU-"):]
    assert result["pid"] in records_of(folder, 5)
    assert all(records_of(folder, i) == {} for i in range(8) if i != 5)


def test_work_follows_the_device_its_tensors_were_put_on(tmp_path):
    folder = Machine(gpus=[Gpu(), Gpu()]).create(str(tmp_path / "machine"))
    program = textwrap.dedent("""
        import os, torch
        device = torch.device("cuda:1")               # no set_device: the current device stays 0
        model = torch.nn.Linear(8, 2).to(device)
        for _ in range(3):
            model(torch.randn(4, 8).to(device)).sum().backward()
        torch.cuda.synchronize(device)
        print(os.getpid(), torch.cuda.current_device(), torch.cuda.memory_allocated(0) == 0,
              torch.cuda.memory_allocated(1) > 0, model.weight.grad.device)
    """)
    got = plain("-c", program, cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    pid, current, none_on_0, some_on_1, grad_device = got.stdout.split()
    assert (current, none_on_0, some_on_1, grad_device) == ("0", "True", "True", "cuda:1")
    assert records_of(folder, 0) == {}
    assert {state.KERNEL, state.H2D} <= {r[3] for r in records_of(folder, 1)[int(pid)]}


def test_a_dataloader_with_workers_pins_its_batches(tmp_path):
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    script = write(tmp_path, "train.py", TRAIN)
    got = plain(script, "2", cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    result = last_json(got.stdout)
    assert result["pinned"]
    assert list(records_of(folder, 0)) == [result["pid"]]        # the workers never touched the device


def test_copies_and_events_time_as_cuda_says(tmp_path):
    gpu = Gpu(memory_bytes=2 << 30, pinned_copy_bandwidth=25e9)
    folder = Machine(gpus=[gpu], time_scale=1.0).create(str(tmp_path / "machine"))
    script = write(tmp_path, "semantics.py", SEMANTICS)
    got = plain(script, str(gpu.max_sm_clock_mhz), cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    result = last_json(got.stdout)
    assert result["pageable_s"] >= 0.45                 # waited for the 500 ms queued before it
    assert result["pinned_s"] < 0.25 and not result["done_at_once"]
    assert result["pinned_copy_ms"] == pytest.approx(((4 << 20) / 25e9 + gpu.copy_latency_s) * 1000, rel=1e-3)
    assert result["oom"].startswith("CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
                                    "2.00 GiB")
    assert result["child"] == 0
    assert list(records_of(folder, 0)) == [result["pid"]]


def test_the_same_program_runs_under_gpuprof(tmp_path):
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    script = write(tmp_path, "train.py", TRAIN)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), script, "0", cwd=tmp_path,
                  env=environment(folder, env_with_source()))
    assert got.returncode == 0, got.stderr
    result = last_json(got.stdout)
    assert result["device"] == "cuda:0" and result["pinned"]
    program_err = without_gpuprof_lines(got.stderr)
    assert "Traceback" not in program_err and "simulated GPU" not in program_err
    assert result["pid"] in records_of(folder, 0)


def test_workers_forked_after_the_first_copies_run_under_gpuprof_as_without_it(tmp_path):
    """The copy probe's CUDA events of the model's copies are still pending when the DataLoader
    forks its workers; a child that destroyed them would abort (SIGABRT), as every DataLoader worker
    of a real job on an H200 did (docs/validation.md). Each epoch forks its workers again."""
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    script = write(tmp_path, "train.py", TRAIN)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), script, "2", cwd=tmp_path,
                  env=environment(folder, env_with_source()))
    assert got.returncode == 0, got.stderr
    assert "Aborted" not in got.stderr and "terminate called" not in got.stderr
    result = last_json(got.stdout)
    assert result["pinned"] and result["count"] == 1 and result["device"] == "cuda:0"   # as it runs alone (above)


def test_a_host_spinning_while_it_waits_for_the_device_is_not_preparing_a_batch(tmp_path):
    """CUDA's default schedule spins the waiting thread: the `.item()` that waits for ten queued steps
    burns its core. That CPU is the device's wait, not the batch's preparation: the pause after it
    (a sleep) is idle, and the loop is not CPU-bound on its input (an H200 read it so; fixed)."""
    from gpuprof.testing.scenarios import PROGRAMS
    folder = Machine(gpus=[Gpu()], host_wait="spin").create(str(tmp_path / "machine"))
    report = tmp_path / "report.json"
    got = gpuprof("run", "-q", "--json", str(report), "--out", str(tmp_path / "run"),
                  os.path.join(PROGRAMS, "paused_compute.py"), "--steps", "30", "--pause", "0.3",
                  cwd=tmp_path, env=environment(folder, env_with_source()))
    assert got.returncode == 0, got.stderr
    report = json.loads(report.read_text())
    steps = report["steps"]
    assert steps["gpu_wait_before_forward_s"] > 0.5           # the .item() waits, spinning
    assert steps["data_wait_cpu_share"] < 0.3
    assert report["verdict"]["bottleneck"] != "input.cpu"
    assert report["efficiency"]["mfu"] < 1.0                  # the mean step, not the launch-fast median


FORKED_EVENT = textwrap.dedent("""
    import os, torch
    x = torch.randn(4).to("cuda")
    event = torch.cuda.Event(enable_timing=True)
    event.record()
    unrecorded = torch.cuda.Event(enable_timing=True)
    pid = os.fork()
    if pid == 0:
        del unrecorded                  # never created on the device: nothing to destroy
        if os.environ.get("DROP") == "1":
            del event                   # a recorded event destroyed in the child
        os._exit(0)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")


@pytest.mark.parametrize("drop,status", [("1", -6), ("0", 0)])
def test_a_forked_child_that_destroys_a_recorded_event_aborts_as_torch_does(tmp_path, drop, status):
    """torch's ~CUDAEvent runs a device guard that fails in a child forked after CUDA was
    initialised, inside a destructor: std::terminate (seen on an H200 with torch 2.11)."""
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    got = plain("-c", FORKED_EVENT, cwd=tmp_path, env=dict(environment(folder), DROP=drop))
    assert got.returncode == 0, got.stderr
    assert int(got.stdout.split()[-1]) == status
    assert ("terminate called after throwing" in got.stderr) == (drop == "1")


THREAD_ENDS = textwrap.dedent("""
    import json, threading
    import torch

    def stacks():
        return [torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()]

    class Watched(threading.Thread):
        # Reads its own mode stacks after its run, where Python is about to let the thread go.
        def _bootstrap(self):
            super()._bootstrap()
            self.left = stacks()

    def work(out):
        out["during"] = stacks()
        out["device"] = str(torch.ones(3, device="cuda").device)

    out = {}
    thread = Watched(target=work, args=(out,))
    thread.start()
    thread.join()
    print(json.dumps(dict(out, left=thread.left, main=stacks(), main_device=str(torch.zeros(1, device="cuda").device))))
""")


def test_a_thread_leaves_no_mode_of_the_face_behind_when_it_ends(tmp_path):
    """A thread runs with the face's modes and ends with none left in torch's thread-local stacks:
    what is left there is released by the OS thread's exit after Python let it go, which aborts the
    process when it meets the interpreter's finalisation ("terminate called without an active
    exception" at exit)."""
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    got = plain("-c", THREAD_ENDS, cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    result = last_json(got.stdout)
    assert result["during"] == [1, 1] and result["device"] == "cuda:0"
    assert result["left"] == [0, 0]
    assert result["main"] == [1, 1] and result["main_device"] == "cuda:0"


def test_the_programs_own_gpuprof_module_is_left_alone(tmp_path):
    """torch imports pynvml while it loads: the shims load the simulated GPU under private names, so
    a program's own module called gpuprof is neither imported early nor shadowed."""
    (tmp_path / "gpuprof.py").write_text("MINE = True\n")
    folder = Machine(gpus=[Gpu(), Gpu()]).create(str(tmp_path / "machine"))
    program = textwrap.dedent("""
        import sys
        import torch, pynvml
        early = "gpuprof" in sys.modules
        pynvml.nvmlInit()
        import gpuprof
        print(early, torch.cuda.device_count(), pynvml.nvmlDeviceGetCount(), getattr(gpuprof, "MINE", False))
    """)
    got = plain("-c", program, cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["False", "2", "2", "True"]


def test_without_a_machine_the_shim_changes_nothing(tmp_path):
    env = environment(str(tmp_path))
    del env["GPUPROF_SIMGPU"]
    got = plain("-c", "import torch; print(torch.cuda.is_available(), torch.version.cuda)", cwd=tmp_path, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["False", "None"] and got.stderr == ""


def test_the_users_own_sitecustomize_still_runs(tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITE'] = 'ran'\n")
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    env = environment(folder, dict(os.environ, PYTHONPATH=str(own)))
    got = plain("-c", "import os, torch; print(os.environ.get('OWN_SITE'), torch.cuda.is_available())",
                cwd=tmp_path, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["ran", "True"]



TESTS_ON_ZEROS = """
import json
import torch
x = torch.randn(8, device="cuda")
loss = (x * 2).sum()
print(json.dumps({"finite": bool(torch.isfinite(loss)), "all_finite": bool(torch.isfinite(x).all()),
                  "any_nan": bool(torch.isnan(x).any()), "not_finite": bool(~torch.isfinite(loss)),
                  "positive": bool(x.sum() > 0), "below": bool(loss < 1.5), "loss": loss.item()}))
"""


def test_tests_on_device_values_answer_as_they_do_on_zeros(tmp_path):
    """Device tensors hold zeros: a NaN check or an early stop reads what zeros give (finite, not
    NaN, not above zero), not a blanket False that would stop a loop that checks for NaN."""
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    got = plain(write(tmp_path, "tests.py", TESTS_ON_ZEROS), cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr
    assert last_json(got.stdout) == {"finite": True, "all_finite": True, "any_nan": False, "not_finite": False,
                                     "positive": False, "below": True, "loss": 0.0}
