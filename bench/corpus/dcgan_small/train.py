"""DCGAN on made-up 32x32 images: a generator and a discriminator, two optimizers, alternating updates.

Adapted from pytorch/examples dcgan/main.py (BSD-3-Clause), which can train on torchvision's FakeData:
here a FakeData-like Dataset makes each random image from its index (the same picture every epoch)
and applies the example's normalisation to [-1, 1]; the networks are the example's transposed-conv
generator and strided-conv discriminator cut to 32x32 and narrower; each step updates D on real and
fake batches, then G, with Adam(lr=2e-4, betas=(0.5, 0.999)). The discriminator returns logits and
the loss is BCEWithLogitsLoss (the example uses Sigmoid + BCELoss).

    python train.py [--steps N]
"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

NZ, NGF, NDF, NC = 64, 16, 16, 3


class FakeImages(Dataset):
    """Like torchvision.datasets.FakeData: image i is drawn from a generator seeded with i."""

    def __init__(self, size=4096, shape=(3, 32, 32)):
        self.size, self.shape = size, shape

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        low = torch.rand((3, 8, 8), generator=g)
        image = nn.functional.interpolate(low[None], size=self.shape[1:], mode="bilinear", align_corners=False)[0]
        return (image - 0.5) / 0.5, 0


def weights_init(m):
    name = m.__class__.__name__
    if "Conv" in name:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif "BatchNorm" in name:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),  # 4x4
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),  # 8x8
            nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),  # 16x16
            nn.ConvTranspose2d(NGF, NC, 4, 2, 1, bias=False), nn.Tanh(),  # 32x32
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(NC, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),  # 16x16
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),  # 8x8
            nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 4), nn.LeakyReLU(0.2, inplace=True),  # 4x4
            nn.Conv2d(NDF * 4, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.main(x).view(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)

    dataset = FakeImages()
    dataloader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=0, drop_last=True)

    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0

    def train_step(real):
        batch = real.size(0)
        # (1) update D: maximise log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((batch,), real_label)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        noise = torch.randn(batch, NZ, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        # (2) update G: maximise log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
        return errD_real + errD_fake, errG

    step = 0
    while step < args.steps:
        for real, _ in dataloader:
            errD, errG = train_step(real)
            step += 1
            if step % 50 == 0:
                print(f"step {step} Loss_D {errD.item():.4f} Loss_G {errG.item():.4f}", flush=True)
            if step >= args.steps:
                break
    print(f"final loss D {errD.item():.4f} G {errG.item():.4f}")


if __name__ == "__main__":
    main()
