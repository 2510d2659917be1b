"""Two CPU ranks of a real Lightning program (DDP over gloo, Lightning's own subprocess launcher):
a DataModule builds its training and validation DataLoaders, and Lightning rebuilds each under DDP
with a DistributedSampler inside `trainer.fit`; the lines to change are the DataModule's."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
import lightning as L


class Squares(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        x = torch.rand(32, generator=torch.Generator().manual_seed(i))
        return x, (x.sum() > 16).long()


class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(Squares(), batch_size=16, shuffle=True, num_workers=0)  # TRAIN LOADER

    def val_dataloader(self):
        return DataLoader(Squares(), batch_size=64, num_workers=0)  # VAL LOADER


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))

    def training_step(self, batch, _):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(Model(), datamodule=Data())
