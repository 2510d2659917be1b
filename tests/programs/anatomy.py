"""A model whose memory is known: Linear(1000, 1000) and Linear(1000, 10) in float32 (1,011,010
parameters), trained with AdamW (two float32 states per parameter)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.ReLU(), torch.nn.Linear(1000, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(8):
    loss = model(torch.randn(16, 1000)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done")
