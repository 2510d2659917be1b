"""torch.compile on the simulated GPU: a program that compiles runs (eagerly: inductor cannot target
the simulated device), a compiled module still comes back as torch's OptimizedModule, and its work
lands on the device as the uncompiled model's does."""

import json
import textwrap

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment
from tests.integration.helpers import plain

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

COMPILED = textwrap.dedent("""
    import json
    import torch, torch.nn as nn

    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)).cuda()
    compiled = torch.compile(model, mode="reduce-overhead")
    optimizer = torch.optim.AdamW(compiled.parameters())

    @torch.compile(fullgraph=True)
    def loss_of(out):
        return out.pow(2).mean()

    other = nn.Linear(8, 8).cuda()
    other.compile()
    x = torch.randn(32, 64, device="cuda")
    for _ in range(3):
        loss = loss_of(other(compiled(x)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(json.dumps({"wrapped": type(compiled).__name__, "keys": sorted(compiled.state_dict())[:1],
                      "device": str(loss.device), "grad": model[0].weight.grad is not None,
                      "allocated": torch.cuda.memory_allocated()}))
""")


def test_a_program_that_compiles_runs_on_the_simulated_gpu(tmp_path):
    folder = Machine(gpus=[Gpu()]).create(str(tmp_path / "machine"))
    script = tmp_path / "compiled.py"
    script.write_text(COMPILED)
    got = plain(str(script), cwd=tmp_path, env=environment(folder))
    assert got.returncode == 0, got.stderr[-3000:]
    result = json.loads(got.stdout.splitlines()[-1])
    assert result["wrapped"] == "OptimizedModule" and result["keys"] == ["_orig_mod.0.bias"]
    assert result["device"] == "cuda:0" and result["grad"] and result["allocated"] > 0
