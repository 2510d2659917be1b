"""Binary classification on a CSV table, with the feature engineering done row by row in __getitem__.

Adapted from manujosephv/pytorch_tabular (MIT): its TabularDataset splits a table into continuous
and categorical columns, and its CategoryEmbeddingModel embeds each categorical column, normalises
the continuous ones and feeds both to an MLP. pandas is not installed here, so the table is read
with the csv module into rows of strings, and each row is parsed, imputed, date-expanded, encoded
and standardised when the DataLoader (num_workers=0) asks for it. The CSV is made up at start.

    python train.py [--steps N]
"""
import argparse
import csv
import math
import os
import random
import tempfile
from datetime import date, datetime

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

CACHE = False  # True: engineer every row's features once before training and index the tensors

ROWS = 20000
CATEGORICAL = ["city", "device", "plan", "channel"]
EPOCH = date(2020, 1, 1)


def write_table(path):
    rng = random.Random(0)
    cities = [f"city_{i:02d}" for i in range(40)]
    devices, plans, channels = ["ios", "android", "web", "tv", "other"], ["free", "basic", "pro"], ["ads", "search", "friend", "mail"]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["signup_date", "city", "device", "plan", "channel", "age", "income", "visits", "last_amount", "churned"])
        for _ in range(ROWS):
            day = date.fromordinal(EPOCH.toordinal() + rng.randint(0, 1400))
            plan = rng.choice(plans)
            age = rng.randint(18, 80)
            income = rng.lognormvariate(10.5, 0.6)
            visits = rng.randint(0, 60)
            amount = rng.expovariate(1 / 30) * (1 + plans.index(plan))
            score = 0.04 * (40 - age) / 10 - 0.05 * visits + 0.6 * (plan == "free") + (day.month in (6, 7)) * 0.4
            churned = int(rng.random() < 1 / (1 + math.exp(-score)))
            out.writerow([day.isoformat(), rng.choice(cities), rng.choice(devices), plan, rng.choice(channels),
                          "" if rng.random() < 0.1 else age, "" if rng.random() < 0.15 else f"{income:.2f}",
                          visits, f"{amount:.2f}", churned])


class TabularRows(Dataset):
    """Rows kept as strings; each fetch turns one into (continuous, categorical, target) tensors."""

    def __init__(self, path):
        with open(path, newline="") as f:
            reader = csv.reader(f)
            self.header = next(reader)
            self.rows = list(reader)
        self.col = {name: i for i, name in enumerate(self.header)}
        self.vocab = {}
        for name in CATEGORICAL:
            values = sorted({row[self.col[name]] for row in self.rows})
            self.vocab[name] = {v: i + 1 for i, v in enumerate(values)}  # 0 is kept for unseen values
        ages = sorted(int(r[self.col["age"]]) for r in self.rows if r[self.col["age"]])
        incomes = sorted(float(r[self.col["income"]]) for r in self.rows if r[self.col["income"]])
        self.age_fill, self.income_fill = ages[len(ages) // 2], incomes[len(incomes) // 2]
        raw = [self.continuous(r) for r in self.rows[:2000]]
        self.mean = [sum(c) / len(c) for c in zip(*raw)]
        self.std = [max(1e-6, (sum((x - m) ** 2 for x in c) / len(c)) ** 0.5) for c, m in zip(zip(*raw), self.mean)]
        self.cached = [self.features(i) for i in range(len(self.rows))] if CACHE else None

    def __len__(self):
        return len(self.rows)

    def continuous(self, row):
        when = datetime.strptime(row[self.col["signup_date"]], "%Y-%m-%d").date()
        age = int(row[self.col["age"]]) if row[self.col["age"]] else self.age_fill
        income = float(row[self.col["income"]]) if row[self.col["income"]] else self.income_fill
        visits = int(row[self.col["visits"]])
        amount = float(row[self.col["last_amount"]])
        return [
            (when - EPOCH).days / 365.0,
            math.sin(2 * math.pi * when.month / 12), math.cos(2 * math.pi * when.month / 12),
            float(when.weekday() >= 5),
            float(age), float(not row[self.col["age"]]),
            math.log1p(income), float(not row[self.col["income"]]),
            math.log1p(visits), math.log1p(amount), amount / (visits + 1),
        ]

    def features(self, index):
        row = self.rows[index]
        cont = [(x - m) / s for x, m, s in zip(self.continuous(row), self.mean, self.std)]
        cat = [self.vocab[name].get(row[self.col[name]], 0) for name in CATEGORICAL]
        target = float(row[self.col["churned"]])
        return torch.tensor(cont, dtype=torch.float32), torch.tensor(cat, dtype=torch.long), torch.tensor([target])

    def __getitem__(self, index):
        if self.cached is not None:
            return self.cached[index]
        return self.features(index)


class CategoryEmbeddingModel(nn.Module):
    def __init__(self, cardinalities, n_continuous, layers=(128, 64)):
        super().__init__()
        dims = [min(50, (card + 1) // 2) for card in cardinalities]
        self.embeddings = nn.ModuleList(nn.Embedding(card + 1, d) for card, d in zip(cardinalities, dims))
        self.normalize = nn.BatchNorm1d(n_continuous)
        blocks, width = [], sum(dims) + n_continuous
        for units in layers:
            blocks += [nn.Linear(width, units), nn.ReLU(), nn.Dropout(0.1)]
            width = units
        self.backbone = nn.Sequential(*blocks)
        self.head = nn.Linear(width, 1)

    def forward(self, cont, cat):
        embedded = [emb(cat[:, i]) for i, emb in enumerate(self.embeddings)]
        x = torch.cat(embedded + [self.normalize(cont)], dim=1)
        return self.head(self.backbone(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "customers.csv")
        write_table(path)
        dataset = TabularRows(path)
    loader = DataLoader(dataset, batch_size=512, shuffle=True, num_workers=0, drop_last=True)

    model = CategoryEmbeddingModel([len(dataset.vocab[name]) for name in CATEGORICAL], len(dataset.mean))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()

    step = 0
    while step < args.steps:
        for cont, cat, target in loader:
            loss = criterion(model(cont, cat), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 100 == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
            if step >= args.steps:
                break
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
