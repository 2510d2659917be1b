"""Descriptor games real programs play. Modes:
closerange OUT   train with a DataLoader, close every descriptor above 2 midway, then write OUT
fd3              write to descriptor 3 (given by the shell: `3>log`), say the next free number
stdio OUT        write to OUT which of stdin, stdout, stderr are open, and the next free number"""
import os
import sys
import time

mode = sys.argv[1]
if mode == "closerange":
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    results = None
    step = 0
    for epoch in range(3):
        for x, y in DataLoader(data, batch_size=4):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step == 10:
                os.closerange(3, 1024)
                results = open(sys.argv[2], "w")
                print("results on descriptor", results.fileno(), flush=True)
            if results is not None:
                results.write(f"{step},{loss.item():.6f}\n")
                results.flush()
                time.sleep(0.05)
    results.close()
    print("done", flush=True)
elif mode == "fd3":
    os.write(3, b"to fd3\n")
    print("next free descriptor", os.open(os.devnull, os.O_RDONLY), flush=True)
elif mode == "stdio":
    state = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            state.append(f"{fd} open")
        except OSError:
            state.append(f"{fd} closed")
    free = os.open(os.devnull, os.O_RDONLY)
    with open(sys.argv[2], "w") as out:
        out.write(", ".join(state) + f"; next free descriptor {free}\n")
    print("stdout works")
