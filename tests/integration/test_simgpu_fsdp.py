"""FSDP2 (`fully_shard`) on simulated GPUs under torchrun: the model is sharded as DTensors and
trains with AdamW, and its gathers and reductions are costed as NCCL's ring moves their bytes over
the GPUs' link."""

import json
import socket
import textwrap

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment
from gpuprof.testing.simgpu.collectives import traffic
from tests.integration.helpers import plain

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FSDP = textwrap.dedent("""
    import json, os
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor

    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256)).to(rank)
    for layer in (model[0], model[2]):
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(32, 256, device=rank)
    for _ in range(3):
        model(x).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    shard = torch.empty(1 << 24, device=rank)                   # 64 MiB a rank
    whole = torch.empty(2 * shard.numel(), device=rank)
    before, after = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    dist.all_gather_into_tensor(whole, shard)                   # the host's first call of each is slow
    dist.reduce_scatter_tensor(shard, whole)
    torch.cuda._sleep(int(0.3 * 1980e6))                         # the device busy while the host issues them
    before.record()
    dist.all_gather_into_tensor(whole, shard)
    dist.reduce_scatter_tensor(shard, whole)
    after.record()
    after.synchronize()
    weight = model[0].weight
    with open(f"rank{rank}.json", "w") as out:                  # one file a rank: their stdouts interleave
        out.write(json.dumps({
        "sharded": all(isinstance(p, DTensor) for p in model.parameters()),
        "local_rows": weight.to_local().shape[0], "grads_cleared": all(p.grad is None for p in model.parameters()),
        "state_sharded": all(isinstance(v, DTensor) for s in optimizer.state.values() for k, v in s.items() if k != "step"),
        "ms": before.elapsed_time(after), "whole_bytes": whole.numel() * whole.element_size()}))
    dist.destroy_process_group()
""")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def two_ranks(tmp_path, machine, program: str) -> list:
    """What each of two torchrun ranks of `program` wrote to its rank{N}.json, on `machine`."""
    folder = machine.create(str(tmp_path / "machine"))
    script = tmp_path / "ranks.py"
    script.write_text(program)
    got = plain("-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(free_port()),
                str(script), cwd=tmp_path, env=environment(folder), timeout=240)
    assert got.returncode == 0, got.stderr[-3000:]
    return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in (0, 1)]


def test_fully_sharded_training_runs_and_its_collectives_take_their_bytes_over_the_link(tmp_path):
    machine = Machine(gpus=[Gpu(), Gpu()], time_scale=1.0)
    ranks = two_ranks(tmp_path, machine, FSDP)
    for rank in ranks:
        assert rank["sharded"] and rank["state_sharded"] and rank["grads_cleared"]
        assert rank["local_rows"] == 128                        # half of each layer's rows a rank
    gpu = machine.gpus[0]
    one = gpu.collective_latency_s + traffic("allgather", ranks[0]["whole_bytes"], 2) / gpu.link_bandwidth
    # the rank whose stream got there last waits for nobody: its two collectives take their bytes' time
    assert min(rank["ms"] for rank in ranks) == pytest.approx(2 * one * 1e3, rel=0.05)


FSDP1 = textwrap.dedent("""
    import json, os
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.distributed.fsdp import FullyShardedDataParallel

    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    inner = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256)).cuda()
    whole = sum(p.numel() for p in inner.parameters())
    model = FullyShardedDataParallel(inner, device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(32, 256, device="cuda")
    for _ in range(3):
        model(x).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.cuda.synchronize()
    with open(f"rank{rank}.json", "w") as out:                  # one file a rank: their stdouts interleave
        out.write(json.dumps({"whole": whole, "shard": sum(p.numel() for p in model.parameters()),
                              "device": str(next(model.parameters()).device)}))
    dist.destroy_process_group()
""")


def test_the_older_fully_sharded_wrapper_trains_with_its_device_given_as_an_index(tmp_path):
    ranks = two_ranks(tmp_path, Machine(gpus=[Gpu(), Gpu()]), FSDP1)
    assert sorted(rank["device"] for rank in ranks) == ["cuda:0", "cuda:1"]
    assert all(rank["shard"] * 2 == rank["whole"] for rank in ranks)      # one flat half a rank
