"""The one vocabulary of changes `gpuprof try` can make inside a program.

A change is a set of KEY=VALUE settings carried to the probes through the bootstrap (the probes
apply them, gpuprof.capture.probes.variants). Each key is declared here once: how its value reads on a
command line, the smallest value it takes, what it is applied to, whether `--set` offers it, and
what it changes besides speed. The fixes (gpuprof.advise.fixes) name the keys they set; `try`'s
options, its help and its table read them from here. Lives in `record` because the probes, which
may import nothing else of gpuprof, read it too."""

LOADER = "loader"        # given to the DataLoader built at the target line, as if the program had
PROCESS = "process"      # set in the training process when it imports torch (and where it builds the target loader)
ITERATOR = "iterator"    # changes the batches the target DataLoader's iterator serves
HDF5 = "hdf5"            # applied where h5py files and data sets are opened
MODEL = "model"          # applied to the trained model once the probes know it (after two steps)
OPTIMIZER = "optimizer"  # given to every optimizer the program builds, as if the program had
IMAGES = "images"        # applied where PIL decodes an image


class ChangeKey:
    """One key. A plain class: the probes import this in the job's processes."""

    __slots__ = ("name", "kind", "applies_to", "minimum", "settable", "shown", "caution")

    def __init__(self, name: str, kind: type, applies_to: str, minimum: int = None, settable: bool = False,
                 shown: bool = True, caution: str = None):
        self.name = name
        self.kind = kind                # int or bool
        self.applies_to = applies_to
        self.minimum = minimum          # the smallest value an int takes
        self.settable = settable        # offered by `try --set KEY=V1,V2`
        self.shown = shown              # part of a variant's label
        self.caution = caution          # what it changes besides speed, or None

    def parse(self, text: str):
        """The value `text` stands for. Raises ValueError with a sentence naming the problem."""
        text = text.strip()
        if self.kind is bool:
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{text!r} is not true or false")
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {self.minimum}, not {value}")
        return value

    def shown_value(self, value) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)


KEYS = {key.name: key for key in (
    ChangeKey("num_workers", int, LOADER, minimum=0, settable=True),
    ChangeKey("pin_memory", bool, LOADER, settable=True),
    ChangeKey("persistent_workers", bool, LOADER, settable=True),
    ChangeKey("prefetch_factor", int, LOADER, minimum=1, settable=True),
    ChangeKey("batch_size", int, LOADER, minimum=1, settable=True,
              caution="changes the optimisation (fewer, larger steps; scale the learning rate) and the batches' "
                      "contents"),
    ChangeKey("torch_threads", int, PROCESS, minimum=1, settable=True),
    ChangeKey("echo", int, ITERATOR, minimum=2),
    ChangeKey("ceiling", bool, ITERATOR),
    ChangeKey("hdf5_cache_bytes", int, HDF5, minimum=1),
    ChangeKey("hdf5_cache_slots", int, HDF5, minimum=1, shown=False),
    ChangeKey("hdf5_keep_handles", bool, HDF5, shown=False),
    ChangeKey("autocast", bool, MODEL,
              caution="the forward runs in lower precision: losses and gradients differ in their last digits"),
    ChangeKey("compile_model", bool, MODEL),
    ChangeKey("channels_last", bool, MODEL),
    ChangeKey("optimizer_foreach", bool, OPTIMIZER),
    ChangeKey("optimizer_fused", bool, OPTIMIZER),
    ChangeKey("allow_tf32", bool, PROCESS, caution="float32 matmuls round their inputs to 10 mantissa bits"),
    ChangeKey("cudnn_benchmark", bool, PROCESS),
    ChangeKey("jpeg_draft", int, IMAGES, minimum=1,
              caution="JPEGs are decoded reduced (1/2, 1/4 or 1/8, no smaller than this size) before the program's "
                      "own resize: pixels differ slightly, and code that reads an image's size before decoding sees "
                      "the full size"),
)}

#: Keys the probes give to a DataLoader's constructor.
LOADER_KEYS = tuple(name for name, key in KEYS.items() if key.applies_to == LOADER)
#: Keys `try --set` takes, in the order its help lists them.
SETTABLE = tuple(name for name, key in KEYS.items() if key.settable)


def label(change: dict) -> str:
    """`k=v, k=v` for the keys of `change` that a label shows."""
    return ", ".join(f"{k}={KEYS[k].shown_value(v) if k in KEYS else v}" for k, v in change.items()
                     if k not in KEYS or KEYS[k].shown)


def loader_settings(change: dict) -> dict:
    return {k: v for k, v in (change or {}).items() if k in LOADER_KEYS}
