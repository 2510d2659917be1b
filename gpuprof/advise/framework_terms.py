"""A change to the model, its step or its processes in the words of the framework that runs the
training: accelerate's Accelerator, Lightning's Trainer, Hugging Face's TrainingArguments, Ray
Train's TorchTrainer.

A user of a framework does not write the autocast context or the no_sync() call: the framework does,
from one of its own settings. The framework is the one the probes saw on the stack where the model's
optimizer stepped (`model.framework`), else the one that built the DataLoader. The words come first,
the plain-PyTorch snippet second (for a loop the user writes inside the framework)."""

import os

from gpuprof.advise.flag_terms import ACCUMULATION, BATCH, COMPILATION, PRECISION, TF32_MATMUL

#: Half the batch and two micro-batches per optimizer step: the same batch per update, half the activations.
HALVED_ACCUMULATED = "halved_accumulated"
#: One training process per GPU.
SCALE_OUT = "scale_out"
#: The framework's setting for each change; {amp} is bf16 or fp16, {k} micro-batches, {size} a batch.
TERMS = {
    "accelerate": {
        PRECISION: 'accelerator = Accelerator(mixed_precision="{amp}")   # or: accelerate launch --mixed_precision '
                   '{amp} {script}',
        COMPILATION: 'accelerator = Accelerator(dynamo_backend="inductor")   # or: accelerate launch --dynamo_backend '
                     'inductor {script}',
        ACCUMULATION: "accelerator = Accelerator(gradient_accumulation_steps={k})\n"
                      "for x, y in loader:\n"
                      "    with accelerator.accumulate(model):   # all-reduces only on the micro-batch that steps\n"
                      "        accelerator.backward(loss_fn(model(x), y))\n"
                      "        optimizer.step(); optimizer.zero_grad()",
        SCALE_OUT: "accelerate launch --multi_gpu --num_processes {gpus} {script}   # one process per GPU; "
                   "accelerator.prepare(model) wraps the model in DDP",
        HALVED_ACCUMULATED: "accelerator = Accelerator(gradient_accumulation_steps=2)   # and DataLoader(..., "
                            "batch_size={size}) before prepare\n"
                            "for x, y in loader:\n"
                            "    with accelerator.accumulate(model):\n"
                            "        accelerator.backward(loss_fn(model(x), y))\n"
                            "        optimizer.step(); optimizer.zero_grad()",
    },
    "lightning": {
        PRECISION: 'Trainer(..., precision="{lightning_precision}")',
        COMPILATION: "model = torch.compile(model)   # your LightningModule, before trainer.fit(model)",
        ACCUMULATION: "Trainer(..., accumulate_grad_batches={k})   # Lightning skips the all-reduce while it "
                      "accumulates",
        BATCH: "DataLoader(dataset, batch_size={size}, ...)   # in your LightningDataModule's train_dataloader",
        SCALE_OUT: 'Trainer(..., accelerator="gpu", devices={gpus})   # Lightning runs DDP over them by default',
        HALVED_ACCUMULATED: "Trainer(..., accumulate_grad_batches=2)   # and batch_size={size} in your "
                            "LightningDataModule's train_dataloader",
    },
    "transformers": {
        PRECISION: "TrainingArguments(..., {hf_precision}=True)",
        COMPILATION: "TrainingArguments(..., torch_compile=True)",
        ACCUMULATION: "TrainingArguments(..., gradient_accumulation_steps={k})   # the Trainer skips the all-reduce "
                      "while it accumulates",
        BATCH: "TrainingArguments(..., per_device_train_batch_size={size})",
        TF32_MATMUL: "TrainingArguments(..., tf32=True)",
        HALVED_ACCUMULATED: "TrainingArguments(..., per_device_train_batch_size={size}, gradient_accumulation_steps=2)",
        SCALE_OUT: "torchrun --nproc-per-node={gpus} {script}   # the Trainer runs DDP by itself under torchrun",
    },
    "ray": {
        SCALE_OUT: "TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers={gpus}, use_gpu=True))   # one "
                   "training worker per GPU; ray.train.torch.prepare_model(model) wraps it in DDP",
        BATCH: "DataLoader(dataset, batch_size={size}, ...)   # per training worker, in your train_func, then "
               "ray.train.torch.prepare_data_loader(loader)",
    },
}
#: The names the report gives each framework.
NAMES = {"accelerate": "accelerate", "lightning": "Lightning", "transformers": "the Hugging Face Trainer",
         "ray": "Ray Train"}


def framework_of(ev):
    """The framework that runs the training: where the optimizer stepped, else where the
    DataLoader was built; None for a loop of the user's own."""
    return (ev.model or {}).get("framework") or (ev.loader or {}).get("framework") or None


def words(ev, change: str, **values):
    """The run's framework's own setting for `change`, or None where the framework has none (or
    the run has no framework)."""
    return setting(framework_of(ev), change, script=_script(ev), **values)


def setting(framework, change: str, script: str = None, **values):
    """`framework`'s own setting for `change`, or None where it has none; without a script, its
    first line without the comment (for a line of prose)."""
    template = TERMS.get(framework, {}).get(change)
    if template is None:
        return None
    if script is None:
        template = template.splitlines()[0].split("   #")[0]
    dtype = values.get("dtype") or "bfloat16"
    filled = dict(values, amp="bf16" if dtype == "bfloat16" else "fp16",
                  lightning_precision="bf16-mixed" if dtype == "bfloat16" else "16-mixed",
                  hf_precision="bf16" if dtype == "bfloat16" else "fp16", script=script)
    return template.format(**filled)


def _script(ev) -> str:
    script = (ev.program or {}).get("script")
    return os.path.basename(script) if script else "train.py"


def framework_first(ev, change: str, snippet: str, **values) -> str:
    """`snippet` with the framework's own setting above it, where the run's framework has one."""
    found = words(ev, change, **values)
    if found is None:
        return snippet
    return f"{found}\n# or in plain PyTorch:\n{snippet}"


def framework_name(ev):
    return NAMES.get(framework_of(ev))
