"""A Trainer-style program: the user configures TrainingArguments and calls trainer.train(); the
framework builds the DataLoader. Each sample is prepared on the CPU (input-bound)."""
import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments


class Images(Dataset):
    def __len__(self):
        return 8 * 40

    def __getitem__(self, i):
        x = torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(i))
        for _ in range(40):
            x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-2)) / 3
        return x, i % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 24 * 24, 10))
args = TrainingArguments(per_device_train_batch_size=8, dataloader_num_workers=0)  # ARGS LINE
trainer = Trainer(model=model, args=args, train_dataset=Images())
print("loss", round(trainer.train(), 4))  # TRAIN LINE
