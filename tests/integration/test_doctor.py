"""`gpuprof doctor` as a user runs it: the checks on this machine, its one-line answers to bad input,
and the scenario runner on a scenario file of the user's own, on the simulated device."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from gpuprof.testing import simgpu
from tests.integration.helpers import env_with_source, gpuprof

pytest.importorskip("torch")
SIMGPU = os.path.dirname(os.path.abspath(simgpu.__file__))
needs_nvml_face = pytest.mark.skipif(not os.path.isfile(os.path.join(SIMGPU, "shim", "pynvml.py")),
                                     reason="the simulated GPU's NVML face (shim/pynvml.py) is not there yet")
needs_cuda_face = pytest.mark.skipif(not os.path.isfile(os.path.join(SIMGPU, "torch_face.py")),
                                     reason="the simulated GPU's CUDA face (torch_face.py) is not there yet")

STARVED = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 192

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 32, 32, generator=g)
        for _ in range(30):
            x = (x + x.roll(1, dims=-1) + 0.01 * torch.randn(x.shape, generator=g)) / 2
        return x, i % 10


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for x, y in DataLoader(Slow(), batch_size=16, num_workers=0):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done")
"""

ON_THE_GPU = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4096, 4096, device="cuda"), nn.ReLU(), nn.Linear(4096, 4096, device="cuda"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16384, 4096, device="cuda")
losses = []
for step in range(30):
    loss = model(x).square().mean()
    losses.append(loss.item())         # waits for the forward's kernels, as logging the loss does
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", sum(losses))
"""


def nvml_works_here() -> bool:
    try:
        import pynvml
        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return True
    except Exception:
        return False


def one_line_error(stderr: str) -> bool:
    return stderr.startswith("gpuprof: error: ") and stderr.count("\n") == 1 and "Traceback" not in stderr


def test_doctor_on_this_machine_says_what_it_sees(tmp_path):
    got = gpuprof("doctor", cwd=str(tmp_path), env=env_with_source({"NO_COLOR": "1"}), timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stderr == ""
    for title in ("NVML (GPU figures)", "torch", "py-spy (gpuprof attach)", "Limits a job started here gets"):
        assert f"\n{title}\n" in f"\n{got.stdout}"
    if not nvml_works_here():
        assert "  - no NVIDIA driver or GPU here: gpuprof will profile CPU training\n" in got.stdout
    assert "✓" not in got.stdout and "\033[" not in got.stdout       # plain ASCII on a pipe and with NO_COLOR
    assert "torch 2." in got.stdout


def test_bad_input_is_one_line_and_status_2(tmp_path):
    got = gpuprof("doctor", "--colour", cwd=str(tmp_path))
    assert got.returncode == 2 and one_line_error(got.stderr), got.stderr
    got = gpuprof("doctor", "--simulated", "--scenario", "no-such-scenario", cwd=str(tmp_path))
    assert got.returncode == 2 and one_line_error(got.stderr), got.stderr
    assert "--scenario no-such-scenario: no such scenario" in got.stderr
    (tmp_path / "broken.py").write_text("SCENARIO = (\n")
    got = gpuprof("doctor", "--simulated", "--scenario", str(tmp_path / "broken.py"), cwd=str(tmp_path))
    assert got.returncode == 2 and one_line_error(got.stderr), got.stderr


@pytest.mark.skipif(nvml_works_here(), reason="this machine has a GPU")
def test_verify_without_a_gpu_says_so_in_one_line(tmp_path):
    got = gpuprof("doctor", "--verify", cwd=str(tmp_path), timeout=120)
    assert got.returncode == 2
    assert got.stderr == ("gpuprof: error: no GPU here: --verify needs one; --simulated runs the scenarios on the "
                          "simulated device\n")
    assert got.stdout == ""


def write_scenarios(folder, program: str, scenarios: str):
    (folder / "program.py").write_text(program)
    path = folder / "my_scenarios.py"
    path.write_text("from gpuprof.testing.scenarios import Expect, Scenario\n"
                    "from gpuprof.testing.simgpu import Gpu, Machine\n" + textwrap.dedent(scenarios))
    return path


def test_a_scenario_file_of_ones_own_runs_and_disagreement_is_status_1(tmp_path):
    """One scenario that agrees and one whose expectation is wrong, on a CPU-bound program: the
    table, "1 of 2 agree", exit status 1, the JSON, and only the disagreeing run kept."""
    path = write_scenarios(tmp_path, STARVED, """
        SCENARIOS = [Scenario("starved", "program.py", Expect("input.cpu", fixes=("num-workers",))),
                     Scenario("starved-said-compute", "program.py", Expect("compute"))]
        """)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    got = gpuprof("doctor", "--simulated", "--scenario", str(path), "--json", str(tmp_path / "doctor.json"),
                  cwd=str(tmp_path), env=env_with_source({"TMPDIR": str(scratch), "COLUMNS": "200"}), timeout=400)
    assert got.returncode == 1, got.stdout + got.stderr
    rows = got.stdout.splitlines()          # the table (at 100 columns it is one block per scenario)
    assert rows[0].split()[:3] == ["scenario", "expected", "found"]
    assert rows[2].split()[:3] == ["starved", "input.cpu", "input.cpu"] and rows[2].endswith("yes")
    assert rows[3].split()[:3] == ["starved-said-compute", "compute", "input.cpu"] and rows[3].endswith("NO")
    assert "starved-said-compute: bottleneck: expected compute; found input.cpu" in got.stdout
    assert rows[-1] == "1 of 2 agree"
    doc = json.loads((tmp_path / "doctor.json").read_text())
    assert [(r["name"], r["agrees"]) for r in doc["results"]] == [("starved", True), ("starved-said-compute", False)]
    [kept] = [r["folder"] for r in doc["results"] if r["folder"]]
    assert os.path.isfile(os.path.join(kept, "report.json")) and kept.startswith(str(scratch))
    assert sorted(os.listdir(os.path.dirname(kept))) == [os.path.basename(kept)]     # the agreeing run is gone


@needs_cuda_face
def test_a_gpu_scenario_of_ones_own_on_the_simulated_device(tmp_path):
    """A program written for a real GPU, on GPU 1 of a simulated two-GPU machine (named by UUID):
    gpuprof must call it compute-bound, name GPU 1 as the job's and read its SM activity."""
    path = write_scenarios(tmp_path, ON_THE_GPU, """
        SCENARIO = Scenario("on-gpu-1", "program.py", Expect("compute", gpu=1, sm_activity=True),
                            machine=Machine(gpus=[Gpu(), Gpu()]), env={"CUDA_VISIBLE_DEVICES": "{uuid:1}"})
        """)
    got = gpuprof("doctor", "--simulated", "--scenario", str(path), "--keep", str(tmp_path / "kept"),
                  cwd=str(tmp_path), timeout=400)
    assert got.returncode == 0, got.stdout + got.stderr
    row = got.stdout.splitlines()[2]
    assert row.split()[:5] == ["on-gpu-1", "compute", "compute", "GPU", "1"] and row.endswith("yes")
    assert got.stdout.endswith("1 of 1 agree\n")
    kept = tmp_path / "kept" / "01-on-gpu-1"
    assert (kept / "machine" / "machine.json").is_file() and (kept / "report.json").is_file()


PID_MODES = {"same": "NVML's process list: ok", "host": "NVML's process list: host PIDs",
             "none": "NVML's process list: no process list"}


def mig_machine():
    return simgpu.Machine(gpus=[simgpu.Gpu(), simgpu.Gpu(name="NVIDIA A100-SXM4-80GB", gpm=False,
                                                         mig=[simgpu.MigInstance(), simgpu.MigInstance()])])


@pytest.fixture(scope="module")
def simulated_doctors(tmp_path_factory):
    """`gpuprof doctor` on four simulated machines (a MIG one, and one per way NVML lists PIDs), all
    started at once: each mostly waits on its children (torch, the PID check, the peak benchmark),
    and each machine and peak cache is its own. {name: (machine, returncode, stdout, stderr)}."""
    root = tmp_path_factory.mktemp("doctors")
    machines = {"mig": mig_machine(), **{mode: simgpu.Machine(pid_mode=mode) for mode in PID_MODES}}
    children = {}
    for name, machine in machines.items():
        env = simgpu.environment(machine.create(str(root / name / "machine")),
                                 env_with_source({"NO_COLOR": "1", "XDG_CACHE_HOME": str(root / name / "cache")}))
        if name == "mig":
            env["CUDA_VISIBLE_DEVICES"] = machine.gpus[1].mig[1].uuid
        children[name] = subprocess.Popen([sys.executable, "-m", "gpuprof", "doctor"], cwd=str(root / name), env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = {}
    for name, child in children.items():
        try:
            stdout, stderr = child.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            child.kill()
            stdout, stderr = child.communicate()
        done[name] = (machines[name], child.returncode, stdout, stderr)
    return done


@needs_nvml_face
def test_doctor_reads_a_simulated_machine_through_nvml(simulated_doctors):
    machine, status, stdout, stderr = simulated_doctors["mig"]
    assert status == 0, stderr
    assert "+ NVML works: driver 550.54.15, CUDA driver 12.4" in stdout
    assert f"+ GPU 0: NVIDIA H100 80GB HBM3  {machine.uuid(0)}" in stdout
    assert "MIG mode: on, 2 MIG device(s)" in stdout and machine.gpus[1].mig[0].uuid in stdout
    assert f"+ cuda:0 = NVML GPU 1: " in stdout and f"{machine.gpus[1].mig[1].uuid}" in stdout


@needs_nvml_face
@needs_cuda_face
@pytest.mark.parametrize("mode", sorted(PID_MODES))
def test_doctor_tells_host_pids_from_its_own_with_a_cuda_process(simulated_doctors, mode):
    _, status, stdout, stderr = simulated_doctors[mode]
    assert status == 0, stderr
    assert PID_MODES[mode] in stdout, stdout
