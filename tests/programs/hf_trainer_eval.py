"""A Hugging Face Trainer text classifier: tokenization on the fly in the data collator (main
process, no workers) and evaluation every few steps on a held-out set, as a fine-tuning script is
written. The tokenizer and the model are built from a small vocabulary and config: no download."""
import argparse
import random
import time

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast, Trainer,
                          TrainerCallback, TrainingArguments)

flags = argparse.ArgumentParser()
flags.add_argument("steps", type=int, nargs="?", default=110)   # evaluations at 20, 40, ... and after the last step
flags.add_argument("--workers", type=int, default=0)
flags.add_argument("--threads", type=int, default=0, help="torch.set_num_threads, 0 to leave it")
flags.add_argument("--pretokenized", action="store_true", help="tokenize once ahead; pad per batch")
options = flags.parse_args()
STEPS = options.steps
if options.threads:
    torch.set_num_threads(options.threads)
WORDS = [f"w{i}" for i in range(2000)]


def sentences(n, seed):
    rng = random.Random(seed)
    return [{"text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))), "label": rng.randint(0, 1)}
            for _ in range(n)]


vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, **{w: i + 4 for i, w in enumerate(WORDS)}}
core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                    cls_token="[CLS]", sep_token="[SEP]")


class Padding:
    """Pads texts tokenized ahead of training (the edit the collate-once advice describes)."""

    def __call__(self, rows):
        out = tokenizer.pad([{key: value for key, value in r.items() if key != "label"} for r in rows],
                            padding="max_length", max_length=128, return_tensors="pt")
        out["labels"] = torch.tensor([r["label"] for r in rows])
        return out


def tokenized_ahead(rows):
    encoded = tokenizer([r["text"] for r in rows], truncation=True, max_length=128)
    return [{**{key: encoded[key][i] for key in encoded}, "label": r["label"]} for i, r in enumerate(rows)]


class Collator:
    """Tokenizes each batch as it is made (the common pattern when a dataset holds raw text)."""

    def __call__(self, rows):
        out = None
        for _ in range(6):      # a slow tokenizer's cost, made of the fast one's
            out = tokenizer([r["text"] for r in rows], padding="max_length", truncation=True, max_length=128,
                            return_tensors="pt")
        out["labels"] = torch.tensor([r["label"] for r in rows])
        return out


class EvaluationClock(TrainerCallback):
    """The evaluation's share of the loop, timed by the Trainer's own clocks: the runtime of the
    evaluations between the first step's end and the last's, over that time (the window gpuprof
    measures; the evaluation after the last step falls outside it)."""

    def __init__(self):
        self.step_ends, self.evaluations = [], []

    def on_step_end(self, args, state, control, **kwargs):
        self.step_ends.append(time.monotonic())

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.evaluations.append((time.monotonic(), (metrics or {}).get("eval_runtime", 0.0)))

    def share(self):
        first, last = self.step_ends[0], self.step_ends[-1]
        inside = sum(runtime for ended, runtime in self.evaluations if first < ended < last)
        return inside / (last - first)


clock = EvaluationClock()
torch.manual_seed(0)
config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=128, num_labels=2)
model = BertForSequenceClassification(config)
args = TrainingArguments(output_dir="hf_out", per_device_train_batch_size=16, per_device_eval_batch_size=32,
                         max_steps=STEPS, eval_strategy="steps", eval_steps=20, logging_strategy="no",
                         save_strategy="no", report_to=[], remove_unused_columns=False,
                         dataloader_num_workers=options.workers, use_cpu=True, seed=0)
train_rows, eval_rows = sentences(2000, 1), sentences(256, 2)
if options.pretokenized:
    train_rows, eval_rows = tokenized_ahead(train_rows), tokenized_ahead(eval_rows)
trainer = Trainer(model=model, args=args, train_dataset=train_rows, eval_dataset=eval_rows,
                  data_collator=Padding() if options.pretokenized else Collator(), callbacks=[clock])
result = trainer.train()
print("loss", round(result.training_loss, 4))
print(f"train runtime {result.metrics['train_runtime']:.3f} s")
print(f"timed evaluation share {clock.share():.4f}")
