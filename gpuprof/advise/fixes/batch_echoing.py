"""batch-echoing: train on each batch twice before fetching the next.

Halves the batches made per step, so the input's cost per step halves; it changes what the model
trains on (fewer fresh samples per step, another order of data and random draws), so it ranks
after the fixes that keep training the same."""

from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.loader_terms import where
from gpuprof.advise.situation import INPUT

FACTOR = 2


def build(ev, s):
    if s.input_kind is None:
        return None
    factor = FACTOR
    gain = s.cheaper_input(ev, factor)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": where(ev),
        "detail": f"echo factor 1 -> {factor}: input time per step / {factor}. Randomness: each batch is seen "
                  f"{factor} times in a row, so a step sees half as many fresh samples and the order of data and "
                  "augmentation draws changes; echo before augmentation (or reshuffle within the echoed batch) "
                  "and check convergence per fresh sample, not per step",
        "snippet": "for x, y in loader:\n    for _ in range(2):   # batch echoing\n        loss = loss_fn(model(x), y)\n"
                   "        optimizer.zero_grad(); loss.backward(); optimizer.step()",
        "why": f"{s.input_cost(ev)}; echoing halves the batches made per step",
        "change": {"echo": factor},
    }


def keep(settings, loader, framework=None) -> str:
    if framework == "transformers":
        return ("in a Trainer subclass: override training_step to run each batch's forward and backward twice (the "
                "Trainer owns the loop; see the batch-echoing fix)")
    if framework == "lightning":
        return ("in training_step, with manual optimization: step the optimizer twice on each batch (Lightning owns "
                "the loop; see the batch-echoing fix)")
    return "in the training loop: train on each batch twice before taking the next (see the batch-echoing fix)"


def variant_label(change) -> str:
    return f"echo x{int(change.get('echo', FACTOR))}"


def variant_caution(change) -> str:
    factor = int(change.get("echo", FACTOR))
    return (f"each batch is trained on {factor} times in a row: fewer fresh samples per step, and the data order and "
            "the random numbers drawn change")


FIX = Fix(id="batch-echoing", title="Echo each batch: train on it twice before fetching the next", effort=2,
          addresses=INPUT, build=build, changes_training=True, try_keys=("echo",), keep=keep,
          variant_label=variant_label, variant_caution=variant_caution, unadvised=lambda report: {"echo": 2})
