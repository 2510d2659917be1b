"""Data-parallel training on two ranks (torchrun, gloo): a DistributedSampler per rank, DDP all-reduce each step.

Adapted from pytorch/examples distributed/ddp-tutorial-series/multigpu_torchrun.py (BSD-3-Clause): a
Trainer that wraps the model in DistributedDataParallel, runs epochs over a DataLoader with a
DistributedSampler, and has rank 0 save a snapshot (model state and epochs run) after each epoch,
resuming from it if present. Changed: CPU and the gloo backend instead of GPUs and NCCL; a bigger
MLP classifier than the tutorial's Linear(20, 1); made-up data whose samples are built from their
index; the snapshot lives in a temporary folder; run plainly (without torchrun) it trains as a
world of one.

    torchrun --standalone --nproc-per-node 2 train.py [--total-epochs E] [--batch-size B]
"""
import argparse
import os
import socket
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

FEATURES, CLASSES = 256, 10


class MyTrainDataset(Dataset):
    """Sample i: a feature vector from a generator seeded with i, labelled by a fixed random projection."""

    def __init__(self, size):
        self.size = size
        self.projection = torch.randn(FEATURES, CLASSES, generator=torch.Generator().manual_seed(1234))

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        x = torch.randn(FEATURES, generator=torch.Generator().manual_seed(index))
        return x, int(torch.argmax(x @ self.projection))


def ddp_setup():
    if "RANK" not in os.environ:  # run plainly: a world of one
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(backend="gloo")


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path, max_steps=None):
        self.rank = int(os.environ["LOCAL_RANK"])
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.snapshot_path = snapshot_path
        self.epochs_run = 0
        self.steps, self.max_steps = 0, max_steps
        self.last_loss = float("nan")
        if os.path.exists(snapshot_path):
            self._load_snapshot(snapshot_path)
        self.model = DDP(self.model)

    def _load_snapshot(self, path):
        snapshot = torch.load(path)
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = nn.functional.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss

    def _run_epoch(self, epoch):
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            loss = self._run_batch(source, targets)
            self.steps += 1
            if self.max_steps is not None and self.steps >= self.max_steps:
                break
        self.last_loss = loss.item()
        print(f"[rank {self.rank}] epoch {epoch} | steps {len(self.train_data)} | loss {self.last_loss:.4f}", flush=True)

    def _save_snapshot(self, epoch):
        torch.save({"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch + 1}, self.snapshot_path)

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.max_steps is not None and self.steps >= self.max_steps:
                break
            if self.rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    train_set = MyTrainDataset(8192)
    model = nn.Sequential(nn.Linear(FEATURES, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=0, sampler=DistributedSampler(dataset, seed=0))


def main(total_epochs, save_every, batch_size, snapshot_path, max_steps=None):
    ddp_setup()
    torch.manual_seed(0)  # the same initial weights on every rank
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path, max_steps)
    trainer.train(total_epochs)
    dist.barrier()  # every rank's last line is out before rank 0's final one
    if int(os.environ["RANK"]) == 0:
        print(f"final loss {trainer.last_loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("--total-epochs", type=int, default=3)
    parser.add_argument("--save-every", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps (a quick try)")
    args = parser.parse_args()
    # every rank derives the same path without talking: torchrun gives the ranks one run id
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", str(os.getpid()))
    snapshot = os.path.join(tempfile.gettempdir(), f"ddp_two_ranks_{run_id}.pt")
    try:
        main(args.total_epochs, args.save_every, args.batch_size, snapshot, args.steps)
    finally:
        if int(os.environ.get("RANK", "0")) == 0 and os.path.exists(snapshot):
            os.remove(snapshot)
