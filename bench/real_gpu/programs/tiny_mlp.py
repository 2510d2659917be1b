"""A tiny MLP on tabular data trained as people write one: the whole data set moved to the GPU
once, random mini-batches indexed there, Adam, and the loss read with .item() every step for a
running average. Each step is a few dozen microsecond kernels: the host's launches are the step.

    python tiny_mlp.py [--steps 3000]
"""
import argparse
import time

import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    device = "cuda"
    torch.manual_seed(0)
    features = torch.randn(100_000, 32)
    target = features[:, :4].sum(dim=1, keepdim=True) + 0.1 * torch.randn(100_000, 1)
    features, target = features.to(device), target.to(device)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    running = 0.0
    for step in range(args.steps):
        if step == 100:
            started = time.perf_counter()
        idx = torch.randint(0, features.shape[0], (args.batch,), device=device)
        loss = nn.functional.mse_loss(model(features[idx]), target[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running = 0.98 * running + 0.02 * loss.item()
        if step % 500 == 0:
            print(f"step {step} loss {running:.4f}")
    print("done", running, f"{(args.steps - 100) / (time.perf_counter() - started):.0f} steps/s")


if __name__ == "__main__":
    main()
