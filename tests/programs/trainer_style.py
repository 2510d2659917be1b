"""A Trainer-style program: the user configures TrainingArguments and calls trainer.train(); the
framework builds the DataLoader. Each sample waits on a slow source (input-bound by latency: more
workers help whatever else the machine runs, so the advice is there to phrase in the framework's terms)."""
import time

import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments


class Images(Dataset):
    def __len__(self):
        return 8 * 40

    def __getitem__(self, i):
        time.sleep(0.004)
        return torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(i)), i % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 24 * 24, 10))
args = TrainingArguments(per_device_train_batch_size=8, dataloader_num_workers=0)  # ARGS LINE
trainer = Trainer(model=model, args=args, train_dataset=Images())
print("loss", round(trainer.train(), 4))  # TRAIN LINE
