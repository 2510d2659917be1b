"""CUDA graphs on the simulated GPU: kernels launched while a graph captures are kept for it, not
run; a replay queues them all from one call of the host, so a launch-bound loop's host time per
step falls to almost nothing while the device does the same work."""

import json
import textwrap

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment
from tests.integration.helpers import plain

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

GRAPHED = textwrap.dedent("""
    import json, time
    import torch, torch.nn as nn

    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)]).cuda()
    x = torch.randn(32, 64, device="cuda")
    out = {}
    with torch.no_grad():
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(30):
            model(x)
        torch.cuda.synchronize()
        out["eager_host_s"] = (time.perf_counter() - start) / 30
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static = model(x)
            out["capturing"] = torch.cuda.is_current_stream_capturing()
        out["capturing_after"] = torch.cuda.is_current_stream_capturing()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(30):
            graph.replay()
        out["replay_host_s"] = (time.perf_counter() - start) / 30
        torch.cuda.synchronize()
        before, after = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        before.record()
        graph.replay()
        after.record()
        after.synchronize()
        out["replay_device_s"] = before.elapsed_time(after) / 1e3
    out["shape"] = list(static.shape)
    print(json.dumps(out))
""")


def test_a_replayed_graph_runs_its_kernels_from_one_launch_of_the_host(tmp_path):
    gpu = Gpu()
    folder = Machine(gpus=[gpu], time_scale=1.0).create(str(tmp_path / "machine"))
    script = tmp_path / "graphed.py"
    script.write_text(GRAPHED)
    got = plain(str(script), cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr[-3000:]
    result = json.loads(got.stdout.splitlines()[-1])
    assert result["capturing"] and not result["capturing_after"] and result["shape"] == [32, 64]
    # the graph's 20 kernels (one addmm a Linear), each at least the shortest kernel's time
    assert result["replay_device_s"] >= 20 * gpu.min_kernel_s
    # the host launches the whole graph at once: far less host time than launching each op
    assert result["replay_host_s"] < result["eager_host_s"] / 5
