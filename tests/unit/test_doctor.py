"""`gpuprof doctor`'s parts from fake inputs: NVML absent, NVML with two GPUs (one in MIG mode), a
container, torch's answers, the PID check, CUDA's numbering under CUDA_VISIBLE_DEVICES, and the
scenario runner's comparison of a report with what a scenario expects."""

import io
import json
import os

import pytest

from gpuprof.commands.doctor import checks, cuda_order, expectations, host_facts, lines, scenarios, table
from gpuprof.commands.doctor.gather import check_pids
from gpuprof.commands.doctor.nvml_facts import read_nvml, running_pids
from gpuprof.commands.doctor.runner import Outcome, Runner, machine_at_hand
from gpuprof.errors import UsageProblem
from gpuprof.testing.scenarios import Expect, Scenario
from gpuprof.testing.simgpu import SHIM
from gpuprof.testing.simgpu.machine import Gpu, Machine, MigInstance
from tests.simulated_nvml import hold_memory, open_machine

H100 = "GPU-11111111-aaaa-bbbb-cccc-000000000000"
A100 = "GPU-22222222-aaaa-bbbb-cccc-000000000000"
MIG1 = "MIG-33333333-aaaa-bbbb-cccc-000000000000"
MIG2 = "MIG-44444444-aaaa-bbbb-cccc-000000000000"


def nvml_of(tmp_path, pids=(), nvml="present"):
    """pynvml over a simulated machine of two GPUs: an H100 with GPM, and an A100 in MIG mode with two
    MIG devices in slots 0 and 2 (slot 1 empty). `pids` (live processes) hold memory on the H100.
    Names and the driver version come as bytes, as nvidia-ml-py before 11.515 gave them."""
    machine = Machine(nvml=nvml, gpus=[
        Gpu(name="NVIDIA H100 80GB HBM3", uuid=H100),
        Gpu(name="NVIDIA A100-SXM4-80GB", uuid=A100, gpm=False, compute_capability=(8, 0), mig=[
            MigInstance(profile="1g.10gb", uuid=MIG1, gpu_instance_id=1, memory_bytes=10 << 30, slot=0),
            MigInstance(profile="3g.40gb", uuid=MIG2, gpu_instance_id=5, memory_bytes=40 << 30, slot=2)])])
    module, folder = open_machine(tmp_path / "machine", machine)
    for pid in pids:
        hold_memory(folder, 0, pid, 1 << 30)
    for name in ("nvmlSystemGetDriverVersion", "nvmlDeviceGetName"):
        answer = getattr(module, name)
        setattr(module, name, lambda *args, answer=answer: answer(*args).encode())
    return module


def assert_shut_down(nvml):
    with pytest.raises(nvml.NVMLError_Uninitialized):
        nvml.nvmlDeviceGetCount()


def text_of(facts: dict) -> str:
    return lines.render(checks.sections(facts), pretty=False)


def base_facts(**changes) -> dict:
    facts = {"nvml": {"importable": True, "init_error": None, "gpus": []}, "visible": None, "order": None,
             "torch": [{"python": "/venv/bin/python", "version": "2.13.0", "cuda": None, "available": False,
                        "count": 0, "devices": [], "pid": 10}],
             "pid_check": None, "container": [], "pyspy": {"path": "/venv/bin/py-spy", "ptrace_scope": 0, "root": False},
             "limits": {"cpus": 2, "host_cpus": 2, "source": "the host's CPU count", "memory_limit_bytes": None,
                        "shm_bytes": 8 << 30, "shm_free_bytes": 8 << 30}}
    facts.update(changes)
    return facts


# -- NVML ------------------------------------------------------------------------------------------
def test_no_nvml_library_says_cpu_training_and_is_not_an_error(tmp_path):
    def missing():
        return None, "nvidia-ml-py is not importable (ImportError: no pynvml)"
    text = text_of(base_facts(nvml=read_nvml(load=missing)))
    assert "x nvidia-ml-py is not importable (ImportError: no pynvml): gpuprof cannot read any GPU" in text

    facts = read_nvml(nvml_of(tmp_path, nvml="no_driver"))       # nvidia-ml-py without libnvidia-ml
    text = text_of(base_facts(nvml=facts))
    assert "- no NVIDIA driver or GPU here: gpuprof will profile CPU training" in text
    assert "GPUs NVML sees" not in text
    assert not [line for line in text.splitlines() if line.startswith("  x ")]      # a normal state, nothing broken


def test_a_driver_mismatch_is_broken_not_absent(tmp_path):
    text = text_of(base_facts(nvml=read_nvml(nvml_of(tmp_path, nvml="init_fails"))))
    assert "x nvmlInit failed (NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.)" in text


def test_two_gpus_one_in_mig_mode_with_gpm_on_the_other(tmp_path):
    nvml = nvml_of(tmp_path)
    facts = read_nvml(nvml)
    assert_shut_down(nvml)
    assert facts["driver"] == "550.54.15" and facts["cuda_driver"] == "12.4"
    h100, a100 = facts["gpus"]
    assert (h100["mig"], h100["gpm"], h100["name"]) == (False, True, "NVIDIA H100 80GB HBM3")
    assert a100["mig"] and not a100["gpm"]
    assert [(m["uuid"], m["gpu_instance_id"]) for m in a100["mig_instances"]] == [(MIG1, 1), (MIG2, 5)]
    text = text_of(base_facts(nvml=facts))
    assert "+ NVML works: driver 550.54.15, CUDA driver 12.4" in text
    assert f"+ GPU 0: NVIDIA H100 80GB HBM3  {H100}  80.0 GiB" in text
    assert "MIG mode: on, 2 MIG device(s)" in text and f"GPU instance 5: {MIG2}  40.0 GiB" in text
    assert "MIG mode: off" in text
    assert "SM activity (GPM): yes" in text and "SM activity (GPM): not supported" in text
    # Without torch's CUDA the usable GPUs come from NVML: the H100 and the A100's two MIG devices.
    assert f"+ cuda:0 = NVML GPU 0: NVIDIA H100 80GB HBM3  {H100}" in text
    assert f"+ cuda:2 = NVML GPU 1: NVIDIA A100-SXM4-80GB MIG 5  {MIG2}" in text
    assert "CUDA may number them unlike nvidia-smi" in text        # unlike GPUs under FASTEST_FIRST


def test_torch_with_cuda_numbers_the_gpus_and_its_bare_uuids_are_matched_to_nvml(tmp_path):
    facts = read_nvml(nvml_of(tmp_path))
    torch = {"python": "/venv/bin/python", "version": "2.5.1", "cuda": "12.4", "available": True, "count": 1,
             "devices": [{"cuda_index": 0, "name": "NVIDIA A100 MIG 1g.10gb", "uuid": MIG1[4:]}], "pid": 7}
    text = text_of(base_facts(nvml=facts, torch=[torch], visible=MIG1))
    assert f"from torch in /venv/bin/python" in text
    assert f"+ cuda:0 = NVML GPU 1: NVIDIA A100 MIG 1g.10gb  {MIG1}" in text
    assert "+ torch 2.5.1 in /venv/bin/python (the python `gpuprof run` starts): CUDA build 12.4, CUDA available" in text


def test_a_cpu_torch_beside_nvml_gpus_is_flagged_and_a_missing_torch_points_at_one_that_works(tmp_path):
    facts = read_nvml(nvml_of(tmp_path))
    answers = [{"python": "/usr/bin/python3", "error": "ModuleNotFoundError: No module named 'torch'"},
               {"python": "/venv/bin/python", "version": "2.13.0+cpu", "cuda": None, "available": False, "count": 0}]
    text = text_of(base_facts(nvml=facts, torch=answers))
    assert "x torch is not importable in /usr/bin/python3 (the python `gpuprof run` starts)" in text
    assert "x torch 2.13.0+cpu in /venv/bin/python (gpuprof's own python): a CPU build" in text
    assert "install a CUDA build" in text
    assert "gpuprof run --python /venv/bin/python train.py" in text
    assert checks.cuda_python(base_facts(nvml=facts, torch=answers)) is None
    answers[1].update(cuda="12.4", available=True, count=2)
    assert checks.cuda_python(base_facts(nvml=facts, torch=answers)) == "/venv/bin/python"
    assert checks.cuda_python(base_facts(torch=answers)) is None              # no GPU in NVML's eyes


# -- CUDA's numbering ------------------------------------------------------------------------------
GPUS = [{"index": i, "name": "NVIDIA H100", "uuid": f"GPU-{i}{i}aa{i}000-0000", "mig": False} for i in range(4)]


def numbered(visible, order=None, gpus=GPUS):
    devices, notes = cuda_order.cuda_devices(gpus, visible, order)
    return [d["nvml_index"] for d in devices], notes


@pytest.mark.parametrize("visible, expected", [
    (None, [0, 1, 2, 3]),
    ("", []),
    ("2,0", [2, 0]),
    ("0,2,-1,1", [0, 2]),               # the invalid entry ends the list
    ("GPU-33aa", [3]),                  # a unique prefix
    ("GPU-11aa1000-0000,1", [1]),       # the same device twice counts once
    ("1, GPU-22", [1, 2]),
    ("7,1", []),
])
def test_cuda_visible_devices_as_cuda_reads_it(visible, expected):
    assert numbered(visible)[0] == expected


def test_an_ambiguous_uuid_prefix_ends_the_list_and_says_so():
    found, notes = numbered("3,GPU-")
    assert found == [3]
    assert notes == ["CUDA_VISIBLE_DEVICES entry 'GPU-' names no device here: CUDA ignores it and every entry after it"]


def test_mig_devices_by_uuid_and_by_the_older_gpu_instance_form():
    gpus = [{"index": 0, "name": "A100", "uuid": "GPU-aaaa", "mig": True,
             "mig_instances": [{"uuid": "MIG-1111", "gpu_instance_id": 1}, {"uuid": "MIG-2222", "gpu_instance_id": 2}]},
            {"index": 1, "name": "A100", "uuid": "GPU-bbbb", "mig": False}]
    assert numbered("MIG-2222", gpus=gpus)[0] == [0]
    devices, _ = cuda_order.cuda_devices(gpus, "MIG-GPU-aaaa/2/0,1")
    assert [(d["uuid"], d["cuda_index"]) for d in devices] == [("MIG-2222", 0), ("GPU-bbbb", 1)]
    assert numbered("0", gpus=gpus)[0] == []           # a GPU in MIG mode is no CUDA device itself
    assert numbered(None, "PCI_BUS_ID", gpus=gpus)[0] == [0, 0, 1]


# -- container and PIDs ----------------------------------------------------------------------------
def test_container_signs(tmp_path):
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text("0::/\n")
    assert host_facts.container(str(tmp_path), environ={}) == []
    (tmp_path / ".dockerenv").write_text("")
    (tmp_path / "proc" / "self" / "cgroup").write_text("0::/kubepods/burstable/pod1/abc\n")
    signs = host_facts.container(str(tmp_path), environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert signs == ["/.dockerenv exists", "the cgroup path names kubepods", "KUBERNETES_SERVICE_HOST is set"]
    text = text_of(base_facts(container=signs))
    assert "- looks like a container (/.dockerenv exists; the cgroup path names kubepods" in text


def holding(pid=4321):
    return {"pid": pid, "python": "/venv/bin/python", "holding": True}


@pytest.mark.parametrize("listed, state", [
    ({H100: [4321]}, "ok"),
    ({H100: [3004321, 99]}, "host"),       # another PID namespace's numbers
    ({H100: []}, "none"),
    (None, "none"),
])
def test_pid_check_reads_nvml_while_a_cuda_process_lives(listed, state):
    reads = []

    def read():
        reads.append(1)
        return listed
    assert check_pids(holding(), read=read, wait_s=0.5, sleep=lambda s: None)["state"] == state


def test_a_pid_new_since_before_the_context_is_its_host_number_at_once():
    """A PID that appeared with the child's context answers "host" on the first read; one that was
    listed before may be another job's, so the check waits for the child's own PID to show."""
    reads = []

    def read():
        reads.append(1)
        return {H100: [3004321, 99]}
    assert check_pids(holding(), read=read, wait_s=30, sleep=lambda s: None, before={99})["state"] == "host"
    assert len(reads) == 1
    reads.clear()
    assert check_pids(holding(), read=read, wait_s=0.05, sleep=lambda s: None,
                      before={3004321, 99})["state"] == "host"
    assert len(reads) > 1


def test_pid_check_needs_a_cuda_process_and_says_what_gpuprof_does(tmp_path):
    check = check_pids({"pid": 5, "python": "/venv/bin/python"}, read=lambda: pytest.fail("NVML read"))
    assert check == {"state": "unchecked", "pid": 5, "why": "torch has no CUDA in /venv/bin/python"}
    facts = read_nvml(nvml_of(tmp_path))
    text = text_of(base_facts(nvml=facts, pid_check={"state": "host", "pid": 4321}, container=["/.dockerenv exists"]))
    assert "- NVML's process list: host PIDs" in text
    assert "gpuprof finds the job's GPUs by UUID from inside the job" in text
    assert "+ NVML's process list: ok" in text_of(base_facts(nvml=facts, pid_check={"state": "ok", "pid": 1}))
    assert "not checked (it needs a CUDA process" in text_of(base_facts(nvml=facts, pid_check=check))


def test_running_pids_from_every_gpu_and_mig_device(tmp_path):
    pids = sorted({os.getpid(), os.getppid()})
    nvml = nvml_of(tmp_path / "two", pids=pids)
    listed = running_pids(nvml)
    assert listed == {H100: pids, A100: [], MIG1: [], MIG2: []}
    assert_shut_down(nvml)
    assert running_pids(nvml_of(tmp_path / "broken", nvml="init_fails")) is None


# -- py-spy and limits -----------------------------------------------------------------------------
def test_ptrace_scope_lines():
    def spy(scope, root=False, path="/bin/py-spy"):
        return lines.render([checks.pyspy_section({"path": path, "ptrace_scope": scope, "root": root})])
    assert "x ptrace_scope 1: only a process's parent may read a process's memory: run gpuprof attach with sudo" in spy(1)
    assert "+ ptrace_scope 1, but gpuprof runs as root" in spy(1, root=True)
    assert "x ptrace_scope 3" in spy(3, root=True)
    assert "+ ptrace_scope 0" in spy(0)
    assert "- py-spy is not installed: gpuprof attach needs it" in spy(0, path=None)


def test_limits_and_a_small_dev_shm():
    text = lines.render([checks.limits_section({"cpus": 4, "host_cpus": 64, "source": "the cgroup v2 CPU quota",
                                                "memory_limit_bytes": 16 << 30, "shm_bytes": 64 << 20})])
    assert "+ 4 of the host's 64 CPUs (the cgroup v2 CPU quota)" in text
    assert "- cgroup memory limit 16.0 GiB" in text
    assert "x /dev/shm is 64.0 MiB" in text and "--shm-size=8g" in text


def test_symbols_and_colour_only_on_a_terminal_without_no_color():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    assert lines.fancy(Tty(), environ={}) and not lines.fancy(Tty(), environ={"NO_COLOR": "1"})
    assert not lines.fancy(io.StringIO(), environ={})
    section = [lines.Section("S", [lines.Line(lines.OK, "a"), lines.Line(lines.NONE, "b"), lines.Line(lines.BAD, "c")])]
    assert lines.render(section, pretty=False) == "S\n  + a\n  - b\n  x c\n"
    pretty = lines.render(section, pretty=True)
    assert "✓" in pretty and "–" in pretty and "✗" in pretty and "\033[" in pretty


# -- scenarios: what to run ------------------------------------------------------------------------
def test_a_scenario_file_with_its_program_beside_it(tmp_path):
    (tmp_path / "prog.py").write_text("print('hi')\n")
    path = tmp_path / "mine.py"
    path.write_text("from gpuprof.testing.scenarios import Expect, Scenario\n"
                    "SCENARIO = Scenario('mine', 'prog.py', Expect('compute'))\n")
    [scenario] = scenarios.choose([str(path)], known=[])
    assert scenario.name == "mine" and scenario.program_path() == str(tmp_path / "prog.py")
    (tmp_path / "empty.py").write_text("X = 1\n")
    with pytest.raises(UsageProblem, match="define SCENARIO"):
        scenarios.choose([str(tmp_path / "empty.py")], known=[])
    (tmp_path / "broken.py").write_text("raise ValueError('nope')\n")
    with pytest.raises(UsageProblem, match=r"cannot load it \(ValueError: nope\)"):
        scenarios.choose([str(tmp_path / "broken.py")], known=[])


def test_scenarios_by_name_and_the_real_ones_for_verify():
    known = [Scenario("a", "a.py", Expect("compute"), real=True), Scenario("b", "b.py", Expect("compute"))]
    assert [s.name for s in scenarios.choose([], known=known)] == ["a", "b"]
    assert [s.name for s in scenarios.choose([], real_only=True, known=known)] == ["a"]
    assert [s.name for s in scenarios.choose(["b"], known=known)] == ["b"]
    with pytest.raises(UsageProblem, match="--scenario c: no such scenario"):
        scenarios.choose(["c"], known=known)
    with pytest.raises(UsageProblem, match="no scenarios marked real"):
        scenarios.choose([], real_only=True, known=known[1:])


# -- scenarios: the report against what was expected -----------------------------------------------
MACHINE = Machine(gpus=[Gpu(), Gpu(), Gpu(mig=[MigInstance()])])


def report(**changes) -> dict:
    gpus = [{"index": i, "uuid": g.uuid, "util_gpu": 0.9 if i == 1 else 0.0, "util_gpu_run": 0.6 if i == 1 else 0.0,
             "sm_active": 0.4 if i == 1 else None, "job": i == 1} for i, g in enumerate(MACHINE.gpus)]
    out = {"verdict": {"bottleneck": "compute"}, "advice": [{"id": "mixed-precision"}, {"id": "larger-batch"}],
           "notes": ["GPU 1 ran busy at 1300 of its 1980 MHz: check cooling"], "system": {"gpus": gpus},
           "copies": {"observed": True, "gpu_s": 0.002, "host_s": 0.05, "device_wait_s": 0.048}}
    out.update(changes)
    return out


def checked(expect, rep, uuid=None):
    return {c.what: c.ok for c in expectations.compare(expect, rep, MACHINE, uuid)}


def test_each_expectation_can_agree_and_disagree():
    rep = report()
    assert checked(Expect("compute", fixes=("mixed-precision",)), rep) == {"bottleneck": True, "fixes": True}
    assert checked(Expect("transfer.h2d", fixes=("pin-memory",)), rep) == {"bottleneck": False, "fixes": False}
    assert checked(Expect(gpu=1), rep, MACHINE.uuid(1)) == {"job's GPU": True}
    [wrong] = expectations.compare(Expect(gpu=0), rep, MACHINE, MACHINE.uuid(0))
    assert (wrong.ok, wrong.expected, wrong.found) == (False, "GPU 0", "GPU 1")
    assert checked(Expect(sm_activity=True), rep) == {"SM activity": True}
    assert checked(Expect(sm_activity=True), report(system={"gpus": []})) == {"SM activity": False}
    assert checked(Expect(note="check cooling"), rep) == {"note": True}
    assert checked(Expect(no_note="check cooling"), rep) == {"no note": False}


def test_a_gpu_the_report_names_by_torch_spelling_or_only_in_cuda_devices_is_not_the_jobs_by_mistake():
    rep = report()
    for g in rep["system"]["gpus"]:
        g["job"] = False
    rep["cuda_devices"] = [{"uuid": MACHINE.uuid(1), "ranks": [None]}]
    assert checked(Expect(gpu=1), rep, MACHINE.uuid(1)) == {"job's GPU": False}     # the GPU section must say it
    rep["system"]["gpus"][1].update(job=True, uuid=MACHINE.uuid(1)[4:].upper())     # another spelling, same GPU
    assert checked(Expect(gpu=1), rep, MACHINE.uuid(1)) == {"job's GPU": True}


def test_sampled_gpus_leave_out_lost_ones_and_mig_devices():
    rep = report()
    rep["system"]["gpus"][2]["lost"] = "GPU is lost"
    rep["system"]["gpus"].append({"index": 2, "uuid": MACHINE.gpus[2].mig[0].uuid, "mig": {"gpu_instance_id": 1}})
    assert checked(Expect(sampled_gpus=(0, 1)), rep) == {"sampled GPUs": True}
    assert checked(Expect(sampled_gpus=(0, 1, 2)), rep) == {"sampled GPUs": False}


def test_gpus_per_rank_from_the_ranks_or_the_devices_the_job_opened():
    rep = report(cuda_devices=[{"uuid": MACHINE.uuid(0), "ranks": [0]}, {"uuid": MACHINE.uuid(1), "ranks": [1]}])
    assert checked(Expect(gpus_per_rank={0: 0, 1: 1}), rep) == {"GPU per rank": True}
    rep["ranks"] = [{"rank": 1, "gpus": [{"label": "GPU 2", "uuid": MACHINE.uuid(2)}]}]
    [check] = expectations.compare(Expect(gpus_per_rank={0: 0, 1: 1}), rep, MACHINE)
    assert not check.ok and check.found == "rank 0: GPU 0, rank 1: GPU 2"


def test_the_table_puts_the_readings_side_by_side_and_counts_agreement():
    good = Outcome(Scenario("good", "p.py", Expect("compute", gpu=1)), machine=MACHINE, expected_uuid=MACHINE.uuid(1))
    good.checks = expectations.compare(good.scenario.expect, report(), MACHINE, good.expected_uuid)
    good.readings = expectations.readings(report(), good.expected_uuid)
    bad = Outcome(Scenario("bad", "p.py", Expect("input.cpu")), machine=MACHINE, folder="/tmp/kept/02-bad")
    bad.checks = expectations.compare(bad.scenario.expect, report(), MACHINE)
    bad.readings = expectations.readings(report())
    broken = Outcome(Scenario("broken", "p.py", Expect("compute")), machine=MACHINE,
                     error="gpuprof run exited 1 without a report (no output)")
    text = table.render([good, bad, broken])
    rows = text.splitlines()
    assert rows[0].split()[:3] == ["scenario", "expected", "found"]
    assert rows[2].split() == ["good", "compute", "compute", "GPU", "1", "2.0", "ms", "/", "50", "ms",
                               "90%", "/", "60%", "40%", "yes"]
    assert rows[4].split()[:3] == ["broken", "compute", "no"]
    assert "bad: bottleneck: expected input.cpu; found compute" in text
    assert "bad: its run: /tmp/kept/02-bad" in text
    assert "broken: gpuprof run exited 1 without a report (no output)" in text
    assert text.endswith("1 of 3 agree\n")
    doc = table.to_json([good, bad])
    assert (doc["format"], doc["agree"], doc["scenarios"]) == ("gpuprof.doctor/1", 1, 2)
    assert json.loads(json.dumps(doc))["results"][0]["readings"]["copy_wait_s"] == 0.048


# -- scenarios: how each runs ----------------------------------------------------------------------
def test_a_simulated_run_has_the_shim_then_gpuprof_first_and_its_placeholders_resolved(tmp_path):
    runner = Runner(str(tmp_path), "/venv/bin/python", env={"PYTHONPATH": "/user/lib", "PATH": "/bin"})
    scenario = Scenario("s", "p.py", Expect(gpu=1), machine=Machine(gpus=[Gpu(), Gpu()]),
                        env={"CUDA_VISIBLE_DEVICES": "{uuid:1}"})
    machine, env = runner._machine_and_environment(scenario, str(tmp_path / "s"))
    from gpuprof.commands.doctor.runner import PACKAGE_ROOT
    assert env["PYTHONPATH"].split(os.pathsep) == [SHIM, PACKAGE_ROOT, "/user/lib"]
    assert env["CUDA_VISIBLE_DEVICES"] == scenario.machine.uuid(1)
    assert os.path.isfile(tmp_path / "s" / "machine" / "machine.json")
    assert env["GPUPROF_SIMGPU"] == str(tmp_path / "s" / "machine")


def test_verify_names_the_gpus_at_hand_and_runs_without_the_shim(tmp_path):
    machine = machine_at_hand(read_nvml(nvml_of(tmp_path / "here")))
    assert [g.uuid for g in machine.gpus] == [H100, A100]
    assert [m.uuid for m in machine.gpus[1].mig] == [MIG1, MIG2]
    runner = Runner(str(tmp_path), "/venv/bin/python", machine=machine, env={})
    scenario = Scenario("s", "p.py", Expect(gpu=1), env={"CUDA_VISIBLE_DEVICES": "{mig:1:1}"})
    _, env = runner._machine_and_environment(scenario, str(tmp_path / "s"))
    assert SHIM not in env["PYTHONPATH"] and "GPUPROF_SIMGPU" not in env
    assert env["CUDA_VISIBLE_DEVICES"] == MIG2
    assert not os.path.exists(tmp_path / "s" / "machine")


def test_bad_combinations_of_flags_are_usage_problems(tmp_path):
    from gpuprof.commands.workflows.doctor import doctor
    with pytest.raises(UsageProblem, match="choose one"):
        doctor(simulated=True, verify=True)
    with pytest.raises(UsageProblem, match="go with --simulated or --verify"):
        doctor(scenarios=["x"])
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "f").write_text("")
    with pytest.raises(UsageProblem, match="new or empty folder"):
        doctor(simulated=True, keep=str(tmp_path / "old"))


# -- torch, asked in a child -----------------------------------------------------------------------
def fake_python(tmp_path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_torch_is_asked_in_a_child_that_may_print_first_hang_or_fail(tmp_path):
    from gpuprof.commands.doctor.torch_facts import TorchChild
    chatty = fake_python(tmp_path, "echo 'a sitecustomize says hello'\necho '{\"pid\": 5, \"version\": \"2.5\"}'\n")
    with TorchChild(chatty) as child:
        assert child.facts == {"pid": 5, "version": "2.5", "python": chatty}
    with TorchChild(fake_python(tmp_path, "exec sleep 30\n"), timeout_s=0.3) as child:
        assert child.facts["error"] == "no answer within 0.3 s"
    assert child.child.returncode is not None                     # ended, not left behind
    with TorchChild(fake_python(tmp_path, "exit 3\n")) as child:
        assert child.facts["error"] == "it ended with status 3 before answering"
    with TorchChild(str(tmp_path / "missing")) as child:
        assert child.facts["error"].startswith("cannot start it")
