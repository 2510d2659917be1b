"""`torch.autocast("cuda")` for the simulated device's tensors.

Autocast works in a dispatch key that only CUDA tensors carry, so it never sees the meta tensors that
stand for device tensors. Here the function mode casts their inputs as autocast would: the ops
torch's CUDA autocast runs in the lower precision (its "Automatic Mixed Precision package" page lists
them; aten/src/ATen/autocast_mode.cpp registers them: matmuls of every form, einsum, linear,
convolutions, attention, the RNN cells, and cuDNN's whole RNNs through their own wrapper,
aten/src/ATen/cudnn/AutocastRNN.cpp) get float32 inputs cast to the autocast dtype, tensors inside
lists and tuples too (einsum's operands, an LSTM's weights and hidden state); the ops it lists as
autocasting to float32 (softmax, losses, layer norm) get lower-precision inputs cast to float32.
Their outputs, and the backward pass through them, then have the dtypes they have on a GPU, and
their kernels cost what they cost there. Autocast's cache of weight casts is not kept: a weight used
twice in one region is cast twice."""


def handlers(torch, cast) -> dict:
    """{function: handler(func, args, kwargs)} for the function mode; `cast(tensor, dtype)` is a
    device-side cast that bypasses the modes above it."""
    F = torch.nn.functional
    lower = [torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.Tensor.__rmatmul__, torch.mm,
             torch.Tensor.mm, torch.bmm, torch.Tensor.bmm, torch.addmm, torch.Tensor.addmm, torch.baddbmm,
             torch.Tensor.baddbmm, torch.addbmm, torch.mv, torch.addmv, torch.addr, F.linear, torch.conv1d,
             torch.conv2d, torch.conv3d, torch.conv_transpose1d, torch.conv_transpose2d, torch.conv_transpose3d,
             F.scaled_dot_product_attention, torch.prelu, torch.einsum, torch.chain_matmul, torch.linalg.multi_dot,
             torch.conv_tbc, torch.lstm_cell, torch.gru_cell, torch.rnn_tanh_cell, torch.rnn_relu_cell,
             torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu,
             # a Python composite torch hands a mode as one call, its inner ops unseen: its matmuls
             # run in the lower precision as on a GPU (its softmax here too, float32 there)
             F.multi_head_attention_forward]
    fp32 = [torch.softmax, torch.Tensor.softmax, F.softmax, torch.log_softmax, torch.Tensor.log_softmax,
            F.log_softmax, F.cross_entropy, F.nll_loss, F.mse_loss, F.l1_loss, F.smooth_l1_loss,
            F.binary_cross_entropy_with_logits, F.kl_div, F.layer_norm, torch.layer_norm, F.group_norm,
            torch.group_norm, torch.exp, torch.Tensor.exp, torch.cumsum, torch.norm, F.normalize]
    low = {torch.float16, torch.bfloat16}

    def enabled():
        return torch.is_autocast_enabled("cuda")

    def to_lower(func, args, kwargs):
        if not enabled():
            return func(*args, **kwargs)
        dtype = torch.get_autocast_dtype("cuda")
        return _call_cast(func, args, kwargs, lambda t: t.dtype == torch.float32, dtype, torch, cast)

    def to_float32(func, args, kwargs):
        if not enabled():
            return func(*args, **kwargs)
        return _call_cast(func, args, kwargs, lambda t: t.dtype in low, torch.float32, torch, cast)

    out = {func: to_lower for func in lower}
    out.update({func: to_float32 for func in fp32})
    return out


def _call_cast(func, args, kwargs, wanted, dtype, torch, cast):
    Tensor, is_meta = torch.Tensor, torch._C.TensorBase.is_meta.__get__

    def convert(value):
        if isinstance(value, Tensor):
            if is_meta(value) and value.is_floating_point() and wanted(value):
                return cast(value, dtype)
            return value
        if type(value) in (list, tuple) and any(isinstance(v, Tensor) for v in value):
            return type(value)(convert(v) for v in value)
        return value

    return func(*(convert(a) for a in args), **{k: convert(v) for k, v in kwargs.items()})
