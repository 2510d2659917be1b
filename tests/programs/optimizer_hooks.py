"""Trains a few steps, then prints what torch's global hook tables hold: a profiled run must show
the same as plain python."""
import torch
from torch.nn.modules import module
from torch.optim import optimizer as optim_module

model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(8):
    loss = model(torch.ones(3, 4)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("optimizer pre", len(optim_module._global_optimizer_pre_hooks),
      "post", len(optim_module._global_optimizer_post_hooks),
      "instance", len(opt._optimizer_step_pre_hooks), len(opt._optimizer_step_post_hooks))
print("module forward pre", len(module._global_forward_pre_hooks), "forward", len(module._global_forward_hooks))
print("step", torch.optim.SGD.step.__qualname__, torch.optim.SGD.step.__module__)
