"""Long-horizon forecasting on an hourly multivariate series: each sample is a window sliced from the
standardised series with its calendar features, served by a DataLoader with no workers, for a small
transformer encoder-decoder.

Adapted from zhouhaoyi/Informer2020 data/data_loader.py and exp/exp_informer.py (Apache-2.0): the
Dataset_ETT_hour split by borders (12/4/4 months), a StandardScaler fitted on the training part, the
hour/weekday/day/month time features, __getitem__ slicing seq_x, seq_y and their marks with
seq_len/label_len/pred_len, and the training loop feeding the decoder zeros for the horizon. Changed:
the ETTh1 file is replaced by a made-up 7-channel series with daily and weekly cycles, the Informer
is replaced by torch's nn.Transformer (2+1 layers, d_model=64), 200 steps.

    python train.py [--steps N]
"""
import argparse
import datetime

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

SEQ_LEN, LABEL_LEN, PRED_LEN = 96, 48, 24
HOURS = 24 * 30 * 20


def make_series():
    """Seven channels: daily and weekly cycles, a slow trend and noise, one row per hour."""
    rng = np.random.default_rng(0)
    t = np.arange(HOURS, dtype=np.float64)
    channels = [np.sin(2 * np.pi * t / 24 + k) * (1 + 0.3 * k) + 0.5 * np.sin(2 * np.pi * t / 168 + k)
                + 0.001 * k * t + rng.normal(0, 0.3, HOURS) for k in range(7)]
    start = datetime.datetime(2016, 7, 1)
    stamps = [start + datetime.timedelta(hours=int(h)) for h in t]
    return np.stack(channels, axis=1), stamps


def time_features(stamps):
    """Hour of day, day of week, day of month, day of year, each scaled to [-0.5, 0.5] (Informer's 'h' freq)."""
    return np.array([[s.hour / 23 - 0.5, s.weekday() / 6 - 0.5, (s.day - 1) / 30 - 0.5, (s.timetuple().tm_yday - 1) / 365 - 0.5]
                     for s in stamps], dtype=np.float32)


class DatasetHourly(Dataset):
    def __init__(self, flag="train"):
        data, stamps = make_series()
        month = 30 * 24
        border1s = [0, 12 * month - SEQ_LEN, 16 * month - SEQ_LEN]
        border2s = [12 * month, 16 * month, 20 * month]
        which = {"train": 0, "val": 1, "test": 2}[flag]
        train = data[border1s[0]:border2s[0]]
        mean, std = train.mean(0), train.std(0)
        scaled = ((data - mean) / std).astype(np.float32)
        self.data_x = scaled[border1s[which]:border2s[which]]
        self.data_y = self.data_x
        self.data_stamp = time_features(stamps[border1s[which]:border2s[which]])

    def __getitem__(self, index):
        s_begin = index
        s_end = s_begin + SEQ_LEN
        r_begin = s_end - LABEL_LEN
        r_end = r_begin + LABEL_LEN + PRED_LEN
        return (self.data_x[s_begin:s_end], self.data_y[r_begin:r_end], self.data_stamp[s_begin:s_end],
                self.data_stamp[r_begin:r_end])

    def __len__(self):
        return len(self.data_x) - SEQ_LEN - PRED_LEN + 1


class Forecaster(nn.Module):
    def __init__(self, channels=7, marks=4, d_model=64):
        super().__init__()
        self.enc_embed = nn.Linear(channels + marks, d_model)
        self.dec_embed = nn.Linear(channels + marks, d_model)
        self.transformer = nn.Transformer(d_model, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
                                          dim_feedforward=128, dropout=0.05, batch_first=True)
        self.project = nn.Linear(d_model, channels)

    def forward(self, x_enc, mark_enc, x_dec, mark_dec):
        out = self.transformer(self.enc_embed(torch.cat([x_enc, mark_enc], -1)),
                               self.dec_embed(torch.cat([x_dec, mark_dec], -1)))
        return self.project(out)[:, -PRED_LEN:, :]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)
    loader = DataLoader(DatasetHourly("train"), batch_size=32, shuffle=True, num_workers=0, drop_last=True)
    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    step, running = 0, 0.0
    while step < args.steps:
        for batch_x, batch_y, batch_x_mark, batch_y_mark in loader:
            dec_inp = torch.cat([batch_y[:, :LABEL_LEN, :], torch.zeros_like(batch_y[:, -PRED_LEN:, :])], dim=1)
            outputs = model(batch_x, batch_x_mark, dec_inp, batch_y_mark)
            loss = criterion(outputs, batch_y[:, -PRED_LEN:, :])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running = 0.9 * running + 0.1 * loss.item() if step else loss.item()
            step += 1
            if step >= args.steps:
                break
    print(f"final loss {running:.4f}")


if __name__ == "__main__":
    main()
