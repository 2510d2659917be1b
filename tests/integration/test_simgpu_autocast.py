"""torch.autocast("cuda") on the simulated GPU casts what torch's CUDA autocast casts: each family of
ops it runs in the lower precision gives bfloat16 outputs from float32 inputs (tensors inside lists
too), trains back to float32 gradients, and is left alone outside autocast."""

import json
import textwrap

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, environment
from tests.integration.helpers import plain

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FAMILIES = textwrap.dedent("""
    import json
    import torch, torch.nn as nn, torch.nn.functional as F

    d = "cuda"
    x, w = torch.randn(4, 8, device=d), torch.randn(8, 8, device=d, requires_grad=True)
    seq = torch.randn(5, 4, 8, device=d)
    cases = {
        "matmul": lambda: x @ w,
        "addmm": lambda: torch.addmm(torch.randn(8, device=d), x, w),
        "bmm": lambda: torch.bmm(seq, w.expand(5, 8, 8)),
        "einsum": lambda: torch.einsum("bij,jk->bik", seq, w),
        "multi_dot": lambda: torch.linalg.multi_dot([x, w, w]),
        "linear": lambda: nn.Linear(8, 8).to(d)(x),
        "conv2d": lambda: nn.Conv2d(3, 4, 3).to(d)(torch.randn(2, 3, 8, 8, device=d)),
        "conv_transpose": lambda: nn.ConvTranspose1d(8, 4, 3).to(d)(seq.transpose(1, 2)),
        "lstm_cell": lambda: nn.LSTMCell(8, 8).to(d)(x)[0],
        "gru_cell": lambda: nn.GRUCell(8, 8).to(d)(x),
        "rnn_cell": lambda: nn.RNNCell(8, 8).to(d)(x),
        "lstm": lambda: nn.LSTM(8, 8).to(d)(seq)[0],
        "gru": lambda: nn.GRU(8, 8, batch_first=True).to(d)(seq)[0],
        "attention": lambda: F.scaled_dot_product_attention(*(torch.randn(2, 2, 4, 8, device=d) for _ in range(3))),
        "multihead_attention": lambda: nn.MultiheadAttention(8, 2).to(d)(seq, seq, seq)[0],
    }
    out = {}
    for name, case in cases.items():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            inside = case()
        outside = case()
        if inside.requires_grad:
            inside.float().sum().backward()
        out[name] = {"inside": str(inside.dtype), "outside": str(outside.dtype)}
    with torch.autocast("cuda", dtype=torch.bfloat16):
        low = x @ w
        out["softmax_of_lower"] = str(torch.softmax(low, dim=-1).dtype)
    out["grad"] = str(w.grad.dtype)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("autocast")
    folder = Machine(gpus=[Gpu()]).create(str(tmp / "machine"))
    script = tmp / "families.py"
    script.write_text(FAMILIES)
    got = plain(str(script), cwd=tmp, env=environment(folder))
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stderr == ""                     # RNNs on device tensors say nothing of cuDNN
    return json.loads(got.stdout.splitlines()[-1])


@pytest.mark.parametrize("family", ["matmul", "addmm", "bmm", "einsum", "multi_dot", "linear", "conv2d",
                                    "conv_transpose", "lstm_cell", "gru_cell", "rnn_cell", "lstm", "gru",
                                    "attention", "multihead_attention"])
def test_each_family_autocast_lowers_runs_in_bfloat16_inside_autocast_only(families, family):
    assert families[family] == {"inside": "torch.bfloat16", "outside": "torch.float32"}


def test_softmax_of_a_lower_precision_input_runs_in_float32_and_gradients_stay_float32(families):
    assert families["softmax_of_lower"] == "torch.float32"
    assert families["grad"] == "torch.float32"
