"""A DataLoader change in the terms of whatever builds the loader: the user's own DataLoader call,
TrainingArguments under a Hugging Face Trainer, the DataLoader in a LightningDataModule, or the
one handed to accelerate's prepare() or Ray Train's prepare_data_loader(). Every fix that changes a loader's arguments speaks through
here, in the report and in `try`'s "to keep it" line."""

from gpuprof.record.changes import loader_settings

#: DataLoader arguments as Hugging Face's TrainingArguments names them.
HF_ARGUMENTS = {"num_workers": "dataloader_num_workers", "persistent_workers": "dataloader_persistent_workers",
                "pin_memory": "dataloader_pin_memory", "prefetch_factor": "dataloader_prefetch_factor",
                "batch_size": "per_device_train_batch_size"}


def where(ev):
    """The line that built the run's dominant DataLoader, or None."""
    return (ev.loader or {}).get("where")


def loader_snippet(ev, settings: dict) -> str:
    """The change to the DataLoader's arguments, as code at the place that builds it."""
    loader = ev.loader or {}
    framework = loader.get("framework")
    text = ", ".join(f"{k}={v}" for k, v in settings.items())
    size = loader.get("batch_size")
    if size is not None:
        text = f"batch_size={size}, {text}"      # an attach does not see it: left out
    if framework == "transformers":
        hf = ", ".join(f"{HF_ARGUMENTS.get(k, k)}={v}" for k, v in settings.items())
        return f"TrainingArguments(..., {hf})   # the Trainer builds the DataLoader from these"
    if framework == "lightning":
        return f"def train_dataloader(self):   # in your LightningDataModule / LightningModule\n" \
               f"    return DataLoader(dataset, {text}, ...)"
    if framework == "accelerate":
        return f"loader = DataLoader(dataset, {text}, ...)\n" \
               "loader = accelerator.prepare(loader)   # accelerate rebuilds it with these settings"
    if framework == "ray":
        return f"loader = DataLoader(dataset, {text}, ...)   # in your train_func\n" \
               "loader = ray.train.torch.prepare_data_loader(loader)   # Ray rebuilds it with these settings " \
               "(ScalingConfig(num_workers=...) counts training workers, not these)"
    return f"DataLoader(dataset, {text}, ...)"


def loader_detail(ev, text: str) -> str:
    """`text` (the change), with who builds the DataLoader when it is not the user's own call."""
    loader = ev.loader or {}
    framework, built_in = loader.get("framework"), loader.get("built_in")
    if framework == "transformers":
        return f"{text} through TrainingArguments (the Trainer builds the DataLoader" + \
            (f" at {built_in})" if built_in else ")")
    if built_in:
        return f"{text} where you configure {framework or 'the library'} (it builds the DataLoader at {built_in})"
    return text


def keep_loader_line(settings: dict, loader, framework=None) -> str:
    """How to keep DataLoader settings `try` measured, in the terms of whatever builds the loader:
    the arguments at the loader's line (TrainingArguments under a Trainer, the DataModule's
    train_dataloader under Lightning), and the training process's intra-op threads when the change
    set them."""
    chosen = loader_settings(settings)
    args = ", ".join(f"{k}={v}" for k, v in chosen.items())
    threads = (settings or {}).get("torch_threads")
    before = f"torch.set_num_threads({threads}) in the training process, and " if threads else ""
    if framework == "transformers":
        hf = ", ".join(f"{HF_ARGUMENTS.get(k, k)}={v}" for k, v in chosen.items())
        return f"{before}in TrainingArguments(..., {hf}) (the Trainer builds the DataLoader at {loader or 'its line'})"
    if framework == "lightning":
        return f"{before}in your LightningDataModule's train_dataloader: DataLoader(..., {args})"
    if framework == "accelerate":
        return f"{before}at {loader or 'the DataLoader'}: DataLoader(..., {args}), before accelerator.prepare"
    if framework == "ray":
        return f"{before}at {loader or 'the DataLoader'}: DataLoader(..., {args}), before " \
               "ray.train.torch.prepare_data_loader"
    return f"{before}at {loader or 'the DataLoader'}: DataLoader(..., {args})"
