"""collate-once: do the collate_fn's per-batch work (tokenizing, encoding, building masks) once,
ahead of training, and keep only the assembly (padding, stacking) per batch.

Estimated from the split the probe measures inside each fetch: the collate's seconds per batch go
but for a residual (prior collate-once.residual), the samples' stay. Offered only where the collate
is named (the user's or a framework's own, not torch's default) and takes a notable share of making
a batch (gpuprof.judge.sections.batch_parts)."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.sections.batch_parts import collate_words, token_batch
from gpuprof.priors.input_fixes import COLLATE_RESIDUAL

TEXT_SNIPPET = """# once, ahead of training (datasets caches map()'s result by fingerprint):
tokenized = raw.map(lambda rows: tokenizer(rows["text"], truncation=True, max_length=128),
                    batched=True, num_proc=2)
# per batch: padding only
collate_fn = DataCollatorWithPadding(tokenizer)"""

TRAINER_SNIPPET = """tokenized = raw.map(lambda rows: tokenizer(rows["text"], truncation=True, max_length=128),
                    batched=True, num_proc=2)          # once; cached by fingerprint
Trainer(..., train_dataset=tokenized["train"], eval_dataset=tokenized["test"],
        data_collator=DataCollatorWithPadding(tokenizer))"""

OTHER_SNIPPET = """prepared = [prepare(sample) for sample in dataset]      # once: the collate's per-sample work
torch.save(prepared, "prepared.pt")
# per batch: stack or pad what was prepared
collate_fn = lambda rows: torch.utils.data.default_collate(rows)"""


def times_cheaper(parts: dict, residual: float) -> float:
    """How many times cheaper a batch gets when its collate keeps `residual` of its time."""
    made = parts["samples_s"] + parts["collate_s"]
    after = parts["samples_s"] + residual * parts["collate_s"]
    return made / after if after > 0 else float("inf")


def build(ev, s):
    if s.input_kind != bottlenecks.INPUT_CPU.id:
        return None
    parts = (ev.loader or {}).get("batch_parts")
    if not parts or not parts.get("notable"):
        return None
    gain = s.cheaper_input(ev, times_cheaper(parts, COLLATE_RESIDUAL.value))
    if gain < MIN_GAIN:
        return None
    least_left, most_left = COLLATE_RESIDUAL.ends()
    low = s.cheaper_input(ev, times_cheaper(parts, most_left))
    high = s.cheaper_input(ev, times_cheaper(parts, least_left))
    text = token_batch(ev.loader)
    trainer = (ev.loader or {}).get("framework") == "transformers"
    named = collate_words(parts)
    if text:
        detail = (f"tokenize the dataset once ahead of training instead of in {named} at every batch "
                  "(datasets' map(batched=True), cached on disk; num_proc to use the cores), and keep only "
                  "padding per batch (DataCollatorWithPadding)")
        snippet = TRAINER_SNIPPET if trainer else TEXT_SNIPPET
    else:
        detail = (f"do the per-sample work of {named} once ahead of training (save its output) and keep only "
                  "stacking or padding per batch")
        snippet = OTHER_SNIPPET
    made = parts["samples_s"] + parts["collate_s"]
    why = (f"{named} takes {pct(parts['collate_share'])} of making a batch ({parts['collate_s'] * 1e3:.1f} ms of "
           f"{made * 1e3:.1f} ms); {s.input_cost(ev)}; about {pct(COLLATE_RESIDUAL.value)} of the collate's time "
           f"stays per batch (padding; prior {COLLATE_RESIDUAL.id})")
    return {"estimated_speedup": gain, "estimate_low": low, "estimate_high": high,
            "where": (parts.get("collate") or {}).get("where"), "detail": detail, "snippet": snippet, "why": why}


FIX = Fix(id="collate-once", title="Do the collate_fn's work once, ahead of training", effort=2,
          addresses=(bottlenecks.INPUT_CPU.id,), build=build)
