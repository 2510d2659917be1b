"""How a sampled stack frame is read, the same inside the job (gpuprof.capture.probes.sampling) and from
outside it (gpuprof.judge.sections.attached, reading py-spy's stacks): which torch frames mark a part of
the training step, and which paths are library code rather than the user's."""

#: (kind, path fragment, function names or None for any), innermost marker first.
TORCH_MARKERS = (
    ("collective", "torch/distributed/", None),      # all_reduce, barrier, ... called from Python
    ("backward", "torch/_tensor.py", ("backward",)),
    ("backward", "torch/autograd/", None),
    ("optimizer", "torch/optim/", None),
    ("forward", "torch/nn/modules/module.py", ("_call_impl", "_wrapped_call_impl")),
    ("dataloader", "torch/utils/data/", None),
)

#: A path under an installed package or the standard library (a regular expression).
LIBRARY_PATH = r"/(site|dist)-packages/|/lib/python\d"
