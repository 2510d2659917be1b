"""A Lightning-style program: the user's DataLoader is built in their module's train_dataloader, and
the Trainer (a stand-in in tests/programs/frameworks) rebuilds it with its own sampler inside fit."""
import time

import torch
from lightning import LightningModule, Trainer
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 480

    def __getitem__(self, i):
        time.sleep(0.003)
        g = torch.Generator().manual_seed(i)
        return torch.randn(32, generator=g), i % 4


class Classifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 4)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        return DataLoader(Slow(), batch_size=16, num_workers=0)      # LOADER LINE


torch.manual_seed(0)
Trainer(max_epochs=2).fit(Classifier())      # FIT LINE
print("done")
