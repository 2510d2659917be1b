"""Text classification with the Hugging Face Trainer: tokenized per batch in a data collator, evaluated
on a held-out set every 40 steps.

Adapted from huggingface/transformers examples/pytorch/text-classification/run_glue.py (Apache-2.0):
TrainingArguments, a sequence-classification model, Trainer with train and eval datasets and
eval_strategy="steps". Changed: the texts are made up at start, the tokenizer is a WordLevel one built
from their vocabulary and the model a one-layer BERT from a config (no download), and tokenization
runs in the collator at every batch (as scripts that keep raw text in the dataset do) rather than in
datasets' map() before training.

    python train.py [--steps N]
"""
import argparse
import random

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
from transformers import (BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast, Trainer,
                          TrainingArguments)

CACHE = False  # True: tokenize every text once before training; the collator only pads

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "po", "an", "el", "is", "or", "um"]
MAX_LENGTH = 128


def make_texts(n, seed):
    """Reviews of 40-160 made-up words; the label is whether 'good' words outnumber 'bad' ones."""
    rng = random.Random(seed)
    words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    good, bad = set(words[:50]), set(words[50:100])
    rows = []
    for _ in range(n):
        text = [rng.choice(words) for _ in range(rng.randint(40, 160))]
        label = int(sum(w in good for w in text) >= sum(w in bad for w in text))
        rows.append({"sentence": " ".join(text).capitalize() + ".", "label": label})
    return rows, words


def build_tokenizer(words):
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, ".": 4}
    for word in words:
        vocab.setdefault(word, len(vocab))
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    core.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]")


class TokenizingCollator:
    """Tokenizes the batch's sentences, pads to MAX_LENGTH and adds the labels."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, rows):
        if CACHE:
            batch = self.tokenizer.pad([{k: r[k] for k in ("input_ids", "attention_mask")} for r in rows],
                                       padding="max_length", max_length=MAX_LENGTH, return_tensors="pt")
        else:
            batch = self.tokenizer([r["sentence"] for r in rows], padding="max_length", truncation=True,
                                   max_length=MAX_LENGTH, return_attention_mask=True, return_token_type_ids=False,
                                   return_tensors="pt")
        batch["labels"] = torch.tensor([r["label"] for r in rows])
        return batch


def tokenize_once(tokenizer, rows):
    encoded = tokenizer([r["sentence"] for r in rows], truncation=True, max_length=MAX_LENGTH,
                        return_token_type_ids=False)
    return [{"input_ids": encoded["input_ids"][i], "attention_mask": encoded["attention_mask"][i],
             "label": r["label"]} for i, r in enumerate(rows)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=160)
    args = parser.parse_args()
    torch.manual_seed(0)
    train_rows, words = make_texts(4000, 1)
    eval_rows, _ = make_texts(192, 2)
    tokenizer = build_tokenizer(words)
    if CACHE:
        train_rows, eval_rows = tokenize_once(tokenizer, train_rows), tokenize_once(tokenizer, eval_rows)

    config = BertConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=MAX_LENGTH, num_labels=2)
    model = BertForSequenceClassification(config)
    training_args = TrainingArguments(output_dir="hf_trainer_text_out", per_device_train_batch_size=16,
                                      per_device_eval_batch_size=32, learning_rate=5e-4, max_steps=args.steps,
                                      eval_strategy="steps", eval_steps=40, logging_strategy="no", save_strategy="no",
                                      report_to=[], remove_unused_columns=False, dataloader_num_workers=0,
                                      disable_tqdm=True, use_cpu=True, seed=0)
    trainer = Trainer(model=model, args=training_args, train_dataset=train_rows, eval_dataset=eval_rows,
                      data_collator=TokenizingCollator(tokenizer))
    result = trainer.train()
    print(f"eval loss {trainer.evaluate()['eval_loss']:.4f}")
    print(f"final loss {result.training_loss:.4f}")


if __name__ == "__main__":
    main()
