"""Word-level LSTM language model on a corpus tokenized in one pass before training.

Adapted from pytorch/examples word_language_model (BSD-3-Clause): a Corpus reads train.txt twice at
start (once to build the dictionary, once to turn every word into an index), the ids are folded into
batch columns (batchify), and training walks them in truncated-BPTT windows (get_batch), carrying
the hidden state across windows, clipping the gradient and updating the weights by hand with plain
SGD. No DataLoader. The text is made up at start (a WikiText-sized vocabulary is not needed).

    python train.py [--steps N]
"""
import argparse
import itertools
import os
import random
import tempfile

import torch
from torch import nn

BATCH = 20
BPTT = 35
CLIP = 0.25
LR = 20.0


def write_text(path, lines=30000):
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(2000)]
    cumulative = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(vocab))))
    with open(path, "w", encoding="utf8") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choices(vocab, cum_weights=cumulative, k=rng.randint(5, 20))) + " .\n")


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(path)

    def tokenize(self, path):
        with open(path, "r", encoding="utf8") as f:
            for line in f:
                for word in line.split() + ["<eos>"]:
                    self.dictionary.add_word(word)
        with open(path, "r", encoding="utf8") as f:
            rows = []
            for line in f:
                rows.append(torch.tensor([self.dictionary.word2idx[w] for w in line.split() + ["<eos>"]], dtype=torch.int64))
        return torch.cat(rows)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=128, nhid=128, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, x, hidden):
        emb = self.drop(self.encoder(x))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)).view(-1, self.decoder.out_features), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "train.txt")
        write_text(path)
        corpus = Corpus(path)
    train_data = batchify(corpus.train, BATCH)
    ntokens = len(corpus.dictionary)
    print(f"{len(corpus.train)} tokens, {ntokens} words", flush=True)

    model = RNNModel(ntokens)
    criterion = nn.NLLLoss()
    model.train()
    hidden = model.init_hidden(BATCH)
    step, i = 0, 0
    while step < args.steps:
        if i >= train_data.size(0) - 2:
            i, hidden = 0, model.init_hidden(BATCH)
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(torch.log_softmax(output.float(), dim=-1), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-LR)
        i += BPTT
        step += 1
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
