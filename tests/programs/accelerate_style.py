"""An accelerate-style program (a stand-in in tests/programs/frameworks): the model's forward is
plain, the optimizer is the one accelerate's prepare() wrapped, and the step is compute-bound, so
the model-side fixes are advised in accelerate's terms."""
import torch
from accelerate import Accelerator
from torch import nn

torch.manual_seed(0)
accelerator = Accelerator()
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512))
model, optimizer = accelerator.prepare(model, torch.optim.SGD(model.parameters(), lr=0.01))
x, y = torch.randn(128, 512), torch.randn(128, 512)
for _ in range(60):
    loss = nn.functional.mse_loss(model(x), y)      # MODEL LINE
    optimizer.zero_grad()
    accelerator.backward(loss)
    optimizer.step()
print("loss", round(loss.item(), 4))
