"""`torch.compile` on the simulated GPU: the model runs eagerly, still wrapped as compiled.

Inductor generates kernels for a real CUDA device, which the CPU build of torch cannot target
("PyTorch is not linked with support for cuda devices"), and dynamo would trace the face's own code.
So a program that compiles runs here as it would with `torch.compile(..., disable=True)`, except
that a module still comes back as torch's `OptimizedModule` around it (its state_dict keys, and what
gpuprof reads of a compiled model, as after a real compile). What compiling changes on a GPU (fused
kernels, fewer launches, CUDA graphs under mode="reduce-overhead") is not simulated."""


def install(torch) -> None:
    real_compile = torch.compile

    def compile(model=None, **options):
        if model is None:
            return lambda fn: compile(fn, **options)
        if isinstance(model, torch.nn.Module):
            from torch._dynamo.eval_frame import DisableContext, OptimizedModule
            return OptimizedModule(model, DisableContext())
        return model

    compile.__wrapped__ = real_compile
    compile.__doc__ = real_compile.__doc__
    torch.compile = compile
