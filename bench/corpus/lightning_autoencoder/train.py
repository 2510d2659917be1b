"""A convolutional autoencoder in Lightning: a LightningDataModule serves made-up digit images that
are converted from PIL, resized and normalised per sample in the training process; validation every
epoch.

Adapted from Lightning-AI/pytorch-lightning examples/pytorch/basics/autoencoder.py (Apache-2.0): a
LightningDataModule with train/val splits and its dataloaders, a LightningModule encoder-decoder
trained with Adam and a validation step, a Trainer with a fixed step budget. Changed: the MNIST
download is replaced by 6000 digit-like 28x28 images drawn at start, each sample is resized to 48x48
(the size a pretrained encoder would want) in the Dataset, the model is a small conv net, the run is
capped at 300 steps on the CPU.

    python train.py [--steps N]
"""
import argparse

import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset, random_split
import lightning as L

CACHE = False  # True: convert, resize and normalise every image once before training
SIDE = 48


def draw_digits(n, seed=0):
    """Strokes on a 28x28 canvas: a few random thick line segments per image, as uint8 PIL images."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(n):
        canvas = np.zeros((28, 28), dtype=np.float32)
        for _ in range(rng.integers(2, 5)):
            (x0, y0), (x1, y1) = rng.integers(4, 24, (2, 2))
            for t in np.linspace(0, 1, 24):
                x, y = int(x0 + t * (x1 - x0)), int(y0 + t * (y1 - y0))
                canvas[max(y - 1, 0):y + 2, max(x - 1, 0):x + 2] = 1.0
        images.append(Image.fromarray((canvas * 255).astype(np.uint8), mode="L"))
    return images


def to_tensor(image):
    """What torchvision's Resize, ToTensor and Normalize((0.1307,), (0.3081,)) do to one image."""
    resized = image.resize((SIDE, SIDE), Image.BILINEAR)
    x = torch.from_numpy(np.asarray(resized, dtype=np.float32) / 255.0).unsqueeze(0)
    return (x - 0.1307) / 0.3081


class Digits(Dataset):
    def __init__(self, images):
        self.images = images
        self.cached = [to_tensor(image) for image in images] if CACHE else None

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        x = self.cached[index] if CACHE else to_tensor(self.images[index])
        return x, x


class DigitsDataModule(L.LightningDataModule):
    def __init__(self, batch_size=32):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage):
        full = Digits(draw_digits(6000))
        self.train_set, self.val_set = random_split(full, [5500, 500], generator=torch.Generator().manual_seed(42))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True, num_workers=0)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size, num_workers=0)


class AutoEncoder(L.LightningModule):
    def __init__(self, hidden=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, hidden, 3, 2, 1), nn.ReLU(), nn.Conv2d(hidden, hidden, 3, 2, 1),
                                     nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(hidden, hidden, 4, 2, 1), nn.ReLU(),
                                     nn.ConvTranspose2d(hidden, 1, 4, 2, 1))
        self.last_loss = None

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def training_step(self, batch, batch_idx):
        x, target = batch
        loss = nn.functional.mse_loss(self(x), target)
        self.last_loss = loss.detach()
        return loss

    def validation_step(self, batch, batch_idx):
        x, target = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), target))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    L.seed_everything(0, verbose=False)
    model = AutoEncoder()
    trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=args.steps, val_check_interval=100, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, datamodule=DigitsDataModule())
    print(f"final loss {float(model.last_loss):.4f}")


if __name__ == "__main__":
    main()
