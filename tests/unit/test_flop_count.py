"""The in-job FLOP count (gpuprof/capture/probes/flops.py) against FLOPs counted by hand from each layer's
shape, for an MLP, a small CNN and a small transformer: forward plus backward, within 10%; the
count leaves the step's numbers alone, names the heavy ops it has no formula for, and reads the
transformer shape (layers, heads, head size, tokens) the 6N + 12LHQT convention needs."""

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gpuprof.judge.sections.efficiency import per_token_convention  # noqa: E402
from gpuprof.capture.probes import flops  # noqa: E402

B = 8


def counted_step(model, x, target_classes):
    """(FLOPs counted over one forward and backward, the mode's summary)."""
    mode = flops.counting_mode(torch)
    with mode:
        out = model(x)
        loss = nn.functional.cross_entropy(out.reshape(-1, target_classes),
                                           torch.zeros(out.shape[:-1], dtype=torch.long).reshape(-1))
        loss.backward()
    return mode.summary()


def linear(n_in, n_out, rows):
    return 2 * rows * n_in * n_out


def test_an_mlp_step_counts_forward_weight_and_input_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32))
    first, second = linear(64, 128, B), linear(128, 32, B)
    # forward; both weight gradients; the input gradient of the second layer only (the data needs none)
    expected = (first + second) + (first + second) + second
    got = counted_step(model, torch.randn(B, 64), 32)
    assert got["flops"] == pytest.approx(expected, rel=0.10)
    assert got["uncounted"] == {} and got["by_dtype"] == {"float32": got["flops"]}


def test_a_cnn_step_counts_convolutions_and_their_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                          nn.Flatten(), nn.Linear(16 * 16 * 16, 10))
    conv1 = 2 * B * 8 * 16 * 16 * 3 * 9
    conv2 = 2 * B * 16 * 16 * 16 * 8 * 9
    head = linear(16 * 16 * 16, 10, B)
    expected = 2 * conv1 + 3 * conv2 + 3 * head       # conv1 has no input gradient to compute
    got = counted_step(model, torch.randn(B, 3, 16, 16), 10)
    assert got["flops"] == pytest.approx(expected, rel=0.10)
    assert "convolution_backward" in got["by_op"]


class TinyLM(nn.Module):
    def __init__(self, vocab=100, width=64, heads=4, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)))


@pytest.mark.parametrize("dropout", [0.1, 0.0], ids=["math-attention", "fused-cpu-attention"])
def test_a_transformer_step_counts_projections_attention_and_head(dropout):
    torch.manual_seed(0)
    vocab, width, layers, T = 100, 64, 2, 16
    model = TinyLM(vocab, width, 4, layers, dropout)
    rows = B * T
    per_layer = (linear(width, 3 * width, rows) + linear(width, width, rows) + linear(width, 4 * width, rows)
                 + linear(4 * width, width, rows) + 2 * 2 * B * T * T * width)
    forward = layers * per_layer + linear(width, vocab, rows)
    got = counted_step(model, torch.randint(0, vocab, (B, T)), vocab)
    # every matmul's input comes from the embedding, so every gradient is computed: 3x the forward
    assert got["flops"] == pytest.approx(3 * forward, rel=0.10)


def test_the_transformer_shape_and_the_per_token_convention():
    model = TinyLM()
    shape = flops.transformer_shape(model, torch)
    assert (shape["layers"], shape["heads"], shape["head_dim"]) == (2, 4, 16)
    embedding = 100 * 64
    assert shape["params"] == sum(p.numel() for p in model.parameters()) - embedding
    public = flops._with_tokens(shape, (16, B * 16))
    convention = per_token_convention(public)
    assert convention["flops_per_token"] == 6 * shape["params"] + 12 * 2 * 4 * 16 * 16
    assert convention["flops_per_step"] == convention["flops_per_token"] * B * 16


def test_a_tied_embedding_counts_in_n_and_a_plain_mlp_has_no_transformer_shape():
    model = TinyLM()
    model.head.weight = model.embed.weight
    assert flops.transformer_shape(model, torch)["params"] == sum(p.numel() for p in model.parameters())
    assert flops.transformer_shape(nn.Sequential(nn.Linear(4, 4)), torch) is None


def test_counting_changes_no_number_of_the_step():
    def step(counted):
        torch.manual_seed(0)
        model = TinyLM()
        x = torch.randint(0, 100, (B, 16))
        mode = flops.counting_mode(torch) if counted else None
        if mode:
            mode.__enter__()
        out = model(x)
        out.sum().backward()
        if mode:
            mode.__exit__(None, None, None)
        return out.detach(), model.encoder.layers[0].linear1.weight.grad, torch.rand(3)

    for plain, counted in zip(step(False), step(True)):
        assert torch.equal(plain, counted)


def test_a_heavy_op_without_a_formula_is_named_as_uncounted():
    mode = flops.counting_mode(torch)
    a = torch.randn(8, 8)
    with mode:
        torch.linalg.inv(a @ a.T + torch.eye(8))
        torch.relu(a)
    summary = mode.summary()
    assert any("linalg" in name for name in summary["uncounted"])
    assert "relu" not in summary["uncounted"]
    assert summary["flops"] > 0                   # the matmul is counted


def test_a_wrapped_model_is_not_counted_and_says_why():
    model = nn.Sequential(nn.Linear(4, 4))
    assert flops.skip_reason(model, torch) is None
    reason = flops.skip_reason(nn.DataParallel(model), torch)
    assert "DataParallel" in reason


def test_the_timing_mode_times_the_ops_with_a_formula_and_leaves_the_step_alone():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 32))
    x = torch.randn(64, 256)
    plain = model(x).sum()
    mode = flops.timing_mode(torch)
    with mode:
        timed = model(x).sum()
        timed.backward()
    assert torch.equal(plain, timed.detach())
    assert {"addmm", "mm"} <= set(mode.seconds) and "relu" not in mode.seconds
    assert all(s > 0 for s in mode.seconds.values())
