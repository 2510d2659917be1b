"""Spoken-command classification from WAV files with log-Mel features made per sample.

Adapted from the pytorch/tutorials speech command classification tutorial (BSD-3-Clause): a
Dataset that reads one WAV per item, a collate_fn that pads the batch and turns label words into
indices, a DataLoader with num_workers=0 as the tutorial uses on a CPU, and a small convolutional
classifier trained with Adam. torchaudio is not needed: the WAVs are written at start with the
`wave` module (made-up "commands": tone patterns with noise) and the log-Mel spectrogram is
computed with torch.stft and a Mel filterbank built in numpy.

    python train.py [--steps N]
"""
import argparse
import os
import tempfile
import wave

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

CACHE = False  # True: compute every clip's features once, before training, and index them

RATE = 16000
N_FFT = 1024
HOP = 128
N_MELS = 64
LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes"]
PER_LABEL = 24


def write_clips(folder):
    """One second of 16-bit mono audio per clip: a word's pitch contour plus noise, at a random offset."""
    rng = np.random.default_rng(0)
    t = np.arange(RATE) / RATE
    items = []
    for k, word in enumerate(LABELS):
        for i in range(PER_LABEL):
            f0 = 180 + 45 * k + rng.normal(0, 8)
            glide = (k % 3 - 1) * 120 * t
            envelope = np.exp(-((t - rng.uniform(0.3, 0.7)) ** 2) / 0.02)
            signal = envelope * (np.sin(2 * np.pi * (f0 + glide) * t) + 0.5 * np.sin(4 * np.pi * (f0 + glide) * t))
            signal += rng.normal(0, 0.05, RATE)
            pcm = np.clip(signal * 12000, -32768, 32767).astype("<i2")
            path = os.path.join(folder, f"{word}_{i:03d}.wav")
            with wave.open(path, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(RATE)
                w.writeframes(pcm.tobytes())
            items.append((path, word))
    return items


def mel_filterbank(n_fft, n_mels, rate):
    """Triangular filters evenly spaced on the Mel scale (HTK formula), shape (n_mels, n_fft // 2 + 1)."""
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    bins = np.linspace(0, rate / 2, n_fft // 2 + 1)
    edges = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(rate / 2), n_mels + 2))
    bank = np.zeros((n_mels, len(bins)), dtype=np.float32)
    for m in range(n_mels):
        lo, centre, hi = edges[m], edges[m + 1], edges[m + 2]
        rising = (bins - lo) / (centre - lo)
        falling = (hi - bins) / (hi - centre)
        bank[m] = np.maximum(0.0, np.minimum(rising, falling))
    return torch.from_numpy(bank)


class SpeechCommands(Dataset):
    def __init__(self, items):
        self.items = items
        self.window = torch.hann_window(N_FFT)
        self.bank = mel_filterbank(N_FFT, N_MELS, RATE)
        self.cached = [self.features(i) for i in range(len(items))] if CACHE else None

    def __len__(self):
        return len(self.items)

    def load(self, path):
        with wave.open(path, "rb") as w:
            frames = w.readframes(w.getnframes())
        return torch.from_numpy(np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0)

    def features(self, index):
        path, _ = self.items[index]
        waveform = self.load(path)
        spec = torch.stft(waveform, N_FFT, HOP, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        mel = self.bank @ power
        return torch.log(mel + 1e-6)

    def __getitem__(self, index):
        if self.cached is not None:
            return self.cached[index], self.items[index][1]
        return self.features(index), self.items[index][1]


def label_to_index(word):
    return torch.tensor(LABELS.index(word))


def collate_fn(batch):
    """Pad the clips' feature frames to the longest in the batch and encode the words as indices."""
    tensors, targets = [], []
    for features, word in batch:
        tensors.append(features.t())
        targets.append(label_to_index(word))
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True).permute(0, 2, 1)
    return padded.unsqueeze(1), torch.stack(targets)


class CommandNet(nn.Module):
    def __init__(self, n_output):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, n_output)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.max_pool2d(F.relu(self.bn3(self.conv3(x))), 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return F.log_softmax(self.fc(x), dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as folder:
        items = write_clips(folder)
        train_set = SpeechCommands(items)
        train_loader = DataLoader(train_set, batch_size=32, shuffle=True, collate_fn=collate_fn, num_workers=0, pin_memory=False)

        model = CommandNet(len(LABELS))
        optimizer = torch.optim.Adam(model.parameters(), lr=0.003, weight_decay=0.0001)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.5)

        model.train()
        step = 0
        while step < args.steps:
            for data, target in train_loader:
                output = model(data)
                loss = F.nll_loss(output, target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                scheduler.step()
                step += 1
                if step % 50 == 0:
                    print(f"step {step} loss {loss.item():.4f}", flush=True)
                if step >= args.steps:
                    break
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
