"""`gpuprof compare` on real runs: the same program run twice, and a before/after of a real fix
measured by `try`. The machine may be loaded: the structure, the facts and the exit codes are
asserted, never the faster/slower call between two runs of the same code."""

import concurrent.futures
import json
import os

from tests.conftest import ROOT
from tests.integration.helpers import gpuprof, load_json

PROGRAMS = os.path.join(ROOT, "tests", "programs")
CALLS = {"faster", "slower", "within noise", "disturbed"}


def test_the_same_program_run_twice_compares_with_exit_0(tmp_path):
    # The two runs go side by side: nothing here judges which was faster (a call of "disturbed" is one
    # of the calls allowed).
    def run(name):
        return gpuprof("run", "-q", "--out", str(tmp_path / name), "--steps", "8", "--warmup-steps", "1",
                       os.path.join(PROGRAMS, "waiting_loader.py"), cwd=str(tmp_path), timeout=300)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(run, ("a", "b")))
    for got in runs:
        assert got.returncode == 0, got.stderr
    assert load_json(tmp_path / "a" / "run.json")["provenance"]["torch"]      # recorded by the run header
    got = gpuprof("compare", "a", "b", cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == "gpuprof compare" and max(len(line) for line in lines) <= 100   # piped, COLUMNS unset
    assert "Share of step time" in got.stdout and "Fixes applied" in got.stdout
    got = gpuprof("compare", "a", "b", "--format", "json", "--output", "cmp.json", cwd=str(tmp_path))
    assert got.returncode == 0 and got.stdout == "", got.stderr
    result = load_json(tmp_path / "cmp.json")
    assert result["format"] == "gpuprof.compare/1" and result["call"] in CALLS
    assert result["a"]["step_s"] > 0 and result["b"]["step_s"] > 0 and result["step"]["ratio"] > 0
    changed = {row["fact"] for row in result["changed"]}
    assert not changed & {"command", "num_workers", "batch size", "torch"}
    assert {"command", "num_workers", "torch"} <= set(result["unchanged"])
    got = gpuprof("compare", "a", str(tmp_path / "missing"), cwd=str(tmp_path))
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr


def test_before_and_after_a_real_fix_names_the_change_and_the_gain(tmp_path):
    # The loader waits 32 ms a batch on a slow store: 4 workers overlap the waits whatever the load.
    got = gpuprof("try", "--out", str(tmp_path / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0",
                  "--steps", "30", "--warmup-steps", "2", "--set", "num_workers=4",
                  os.path.join(PROGRAMS, "waiting_loader.py"), str(tmp_path / "results.txt"), cwd=str(tmp_path),
                  timeout=300)
    assert got.returncode == 0, got.stderr
    before, after = os.path.join("exp", "r1-baseline"), os.path.join("exp", "r1-v1")
    got = gpuprof("compare", before, after, "--format", "json", cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    result = json.loads(got.stdout)
    changed = {row["fact"]: (row["a"], row["b"]) for row in result["changed"]}
    assert changed["num_workers"] == (0, 4)
    assert result["b"]["changes"] == {"num_workers": 4} and result["a"]["changes"] is None
    assert result["step"]["speedup"] == result["a"]["step_s"] / result["b"]["step_s"]
    assert result["step"]["speedup"] > 1.3
    # On a machine other processes left alone the gain is clear, unless the fixed run's own steps split
    # into instant and waiting ones (prefetching workers): a single run's noise is then too wide to call.
    if result["call"] != "disturbed" and result["b"]["noise"] < 0.5:
        assert result["call"] == "faster", result["step"]
    got = gpuprof("compare", "exp", after, "--format", "markdown", cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    assert "(try folder: its baseline, 1 run)" in got.stdout and "| num_workers | `0` | `4` |" in got.stdout
    assert "try changes applied: num_workers=4" in got.stdout
    assert f"{result['step']['speedup']:.2f}x faster" in got.stdout or result["step"]["speedup"] < 1
    # the fix's run as the baseline: the unfixed run is slower; the exit code follows the gate's check
    got = gpuprof("compare", after, before, "--fail-if-slower", "10", "--format", "json", cwd=str(tmp_path))
    result = json.loads(got.stdout)
    assert got.returncode == (1 if result["gate"]["failed"] else 0), got.stderr
    assert result["gate"]["failed"] or result["call"] == "disturbed"
