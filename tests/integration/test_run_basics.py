"""`gpuprof run` against plain `python` as the oracle: same output, same status, and a report."""

import os
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain

SHOW = os.path.join(PROGRAMS, "show_context.py")


def test_output_argv_and_status_pass_through_unchanged(tmp_path):
    args = [SHOW, "3", "--lr", "3e-4", "--json", "x", "--help"]
    expected = plain(*args, cwd=tmp_path, input="line from stdin\n")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), *args, cwd=tmp_path, input="line from stdin\n")
    assert got.returncode == expected.returncode == 3
    assert got.stdout == expected.stdout
    assert got.stderr == expected.stderr
    assert "argv ['" + SHOW + "', '3', '--lr', '3e-4', '--json', 'x', '--help']" in got.stdout
    assert "stdin line from stdin" in got.stdout
    assert load_json(tmp_path / "run" / "report.json")["exit_code"] == 3


def test_module_form_sees_what_python_dash_m_gives(tmp_path):
    expected = plain("-m", "pkg.train", "a", cwd=PROGRAMS)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "-m", "pkg.train", "a", cwd=PROGRAMS)
    assert got.returncode == expected.returncode == 0, got.stderr
    assert got.stdout == expected.stdout == "module __main__ pkg.train 7\n"


def test_command_form_runs_any_launcher(tmp_path):
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable, SHOW, "4",
                  cwd=tmp_path, input="")
    assert got.returncode == 4
    report = load_json(tmp_path / "run" / "report.json")
    assert report["exit_code"] == 4 and report["processes"]["python"] == 1


def test_a_crash_keeps_the_users_traceback_and_leaves_a_report(tmp_path):
    script = os.path.join(PROGRAMS, "crash.py")
    expected = plain(script, cwd=tmp_path)
    got = gpuprof("run", "--json", str(tmp_path / "r.json"), script, cwd=tmp_path)
    assert got.returncode == expected.returncode == 1
    assert got.stderr.startswith(expected.stderr)           # the user's traceback, untouched, first
    assert "ValueError: boom from the user's code" in got.stderr
    package = os.path.join(ROOT, "gpuprof") + os.sep       # gpuprof's own code, wherever the checkout is
    assert package not in expected.stderr and package not in got.stderr.split("gpuprof  ")[0]
    report = load_json(tmp_path / "r.json")
    assert report["format"] == "gpuprof.report/1" and report["exit_code"] == 1


def test_a_short_run_is_sampled_at_the_default_interval(tmp_path):
    got = gpuprof("run", "--json", str(tmp_path / "r.json"), os.path.join(PROGRAMS, "busy.py"), "1.5", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "r.json")
    system = report["system"]
    assert system["samples"] >= 5 and system["interval_s"] == 0.1
    assert system["cpu_count"] >= 1
    assert system["job"]["cores_busy"] > 0.5                   # one core spinning
    assert system["gpus"] == [] and system["gpu_status"]["reason"]
    assert report["duration_s"] >= 1.5
    assert "job CPU" in got.stderr and "busy done" in got.stdout


@pytest.mark.parametrize("args, message", [
    ([], "nothing to run"),
    (["missing_script.py"], "no such file: missing_script.py"),
    ([PROGRAMS], "is a directory"),
    (["--no-such-option", "x.py"], "--no-such-option"),
    (["--out", "/proc/version/sub", SHOW], "cannot"),
    (["--interval", "0", SHOW], "--interval"),
    (["--json", "/no/such/folder/r.json", SHOW], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2_with_nothing_launched(tmp_path, args, message):
    got = gpuprof("run", *args, cwd=tmp_path, env=env_with_source({"XDG_STATE_HOME": str(tmp_path / "state")}))
    assert got.returncode == 2
    assert got.stderr.count("\n") == 1 and message in got.stderr and "Traceback" not in got.stderr
    assert got.stdout == ""
    assert not (tmp_path / "state").exists()


def test_no_subcommand_and_unknown_subcommand_are_usage_errors(tmp_path):
    for args in ([], ["nope"]):
        got = gpuprof(*args, cwd=tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr


def test_help_is_fast_and_imports_neither_torch_nor_nvml(tmp_path):
    code = ("import sys, time; t=time.perf_counter(); sys.argv=['gpuprof','--help'];\n"
            "from gpuprof.commands.cli import main\n"
            "try: main()\n"
            "except SystemExit: pass\n"
            "sys.stderr.write('%f %s %s' % (time.perf_counter()-t, 'torch' in sys.modules, 'pynvml' in sys.modules))")
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env_with_source(),
                         capture_output=True, text=True)
    elapsed, torch_loaded, nvml_loaded = got.stderr.split()[-3:]
    assert "run" in got.stdout and torch_loaded == "False" and nvml_loaded == "False"
    assert float(elapsed) < 0.5


def test_user_sitecustomize_still_runs(tmp_path):
    env = env_with_source()
    env["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + os.path.join(PROGRAMS, "user_site")
    script = os.path.join(PROGRAMS, "print_env_flag.py")
    assert plain(script, cwd=tmp_path, env=env).stdout == "sitecustomize: yes\n"
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), script, cwd=tmp_path, env=env)
    assert got.stdout == "sitecustomize: yes\n"
    assert load_json(tmp_path / "run" / "report.json")["processes"]["python"] == 1


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_every_python_process_of_the_job_registers(tmp_path, method):
    script = os.path.join(PROGRAMS, "mp_pool.py")
    expected = plain(script, method, cwd=tmp_path)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), script, method, cwd=tmp_path, timeout=120)
    assert got.returncode == expected.returncode == 0, got.stderr
    assert got.stdout == expected.stdout
    processes = load_json(tmp_path / "run" / "report.json")["processes"]["list"]
    origins = [p["origin"] for p in processes]
    assert len(processes) >= 3                               # main + 2 pool workers at least
    if method == "fork":
        assert origins.count("fork") >= 2
    if method == "spawn":
        assert origins.count("exec") >= 3


def test_nothing_is_written_into_site_packages(tmp_path):
    import site
    roots = [p for p in site.getsitepackages() if os.path.isdir(p)]
    before = {p: set(os.listdir(p)) for p in roots}
    gpuprof("run", "-q", "--out", str(tmp_path / "run"), SHOW, cwd=tmp_path, input="")
    assert {p: set(os.listdir(p)) for p in roots} == before


def test_report_command_renders_a_saved_run_again(tmp_path):
    gpuprof("run", "-q", "--out", str(tmp_path / "run"), SHOW, cwd=tmp_path, input="")
    first = load_json(tmp_path / "run" / "report.json")
    again = gpuprof("report", str(tmp_path / "run"), "--format", "json", cwd=tmp_path)
    assert again.returncode == 0
    import json
    assert json.loads(again.stdout)["system"] == first["system"]
    # The folder holding the run (as `--out` on several nodes writes them) reports the run inside.
    parent = gpuprof("report", str(tmp_path), "--format", "json", cwd=tmp_path)
    assert parent.returncode == 0 and json.loads(parent.stdout)["system"] == first["system"]
    (tmp_path / "empty").mkdir()
    bad = gpuprof("report", str(tmp_path / "empty"), cwd=tmp_path)
    assert bad.returncode == 2 and "not a gpuprof run" in bad.stderr and "Traceback" not in bad.stderr


def test_demo_runs_the_bundled_example_and_gives_a_verdict(tmp_path):
    pytest.importorskip("torch")
    got = gpuprof("demo", "--out", str(tmp_path / "run"), cwd=tmp_path, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "demo: 60 steps" in got.stdout
    report = load_json(tmp_path / "run" / "report.json")
    assert report["verdict"]["bottleneck"] == "input.cpu"
    ids = [a["id"] for a in report["advice"][:3]]
    if (report["system"].get("others") or {}).get("notable"):
        # Other programs held the cores: more workers would take the training's, so a cheaper
        # producer or fewer training threads come first (bench/expectations.py's LOADED cases).
        assert ids and "num-workers" not in ids[:1], ids
    else:
        assert "num-workers" in ids, ids
    assert "Input-bound" in got.stderr
    # The demo's program ships inside gpuprof, yet it is the user's code the advice points at.
    assert report["dataloaders"][0]["where"].endswith(f"demo_train.py:{_line_of('DataLoader(', DEMO)}")


DEMO = os.path.join(ROOT, "gpuprof", "examples", "demo_train.py")


def _line_of(text: str, path: str) -> int:
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            if text in line and "import" not in line:
                return number
    raise AssertionError(f"{text} not in {path}")


def test_run_defaults_come_from_pyproject_and_flags_win(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpuprof.run]\nout = "runs/here"\nquiet = true\ninterval = 0.05\n')
    script = tmp_path / "t.py"
    script.write_text("print('hi')\n")
    got = gpuprof("run", str(script), cwd=tmp_path)
    assert got.returncode == 0 and got.stdout == "hi\n" and got.stderr == ""
    run = load_json(tmp_path / "runs" / "here" / "run.json")
    assert run["settings"]["interval_s"] == 0.05
    loud = gpuprof("run", "--no-quiet", "--out", str(tmp_path / "other"), str(script), cwd=tmp_path)
    assert "run saved in" in loud.stderr and (tmp_path / "other" / "report.json").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.gpuprof.run]\nintervall = 0.05\n')
    bad = gpuprof("run", str(script), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown [tool.gpuprof.run] key intervall" in bad.stderr
