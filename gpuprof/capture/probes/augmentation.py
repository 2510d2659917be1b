"""Random augmentation in a DataLoader's per-sample path, found once when the loader is built.

Caching preprocessed samples is only sound for the deterministic part of the path: a random flip
or noise cached once is frozen for every epoch. So when a DataLoader is built, its dataset is
inspected once (per dataset class): the source of its __getitem__/__getitems__/__iter__ and of the
methods, module-level functions and transform objects they reach is parsed (ast, never run), and
calls that draw random numbers (torch, numpy and the random module, a random generator held by the
dataset, in-place random fills) are noted with their lines, but a generator made there from a seed
(`numpy.random.default_rng(index)`: the same draws for a sample every epoch) is not random; transform objects reachable from the
dataset (torchvision, albumentations, the user's own callables) are named random (Random*,
RandAugment, ColorJitter, ... or an albumentations transform applied with probability below 1) or
deterministic (Resize, Normalize, ...). Nothing of the dataset is called and no random number is
drawn; any failure leaves the loader unnoted."""

import ast
import inspect
import os
import textwrap
import time
import types

from . import runtime, dataloader
from ...record import kinds

MAX_FUNCTIONS = 24          # functions parsed per dataset class
MAX_OBJECTS = 300           # objects visited looking for transforms
MAX_DEPTH = 4
MAX_NOTED = 8               # random / deterministic items kept

TORCH_RANDOM = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                "normal", "multinomial", "poisson"}
RANDOM_FILLS = {"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_",
                "log_normal_"}
RANDOM_TRANSFORMS = {"RandAugment", "AutoAugment", "TrivialAugmentWide", "AugMix", "ColorJitter", "GaussianBlur",
                     "GaussianNoise", "ElasticTransform", "ScaleJitter", "RandomErasing", "JPEG", "MixUp", "CutMix"}
GENERATORS = {"numpy.random._generator.Generator", "numpy.random.mtrand.RandomState", "random.Random",
              "torch._C.Generator", "torch.Generator"}
#: Generator constructors: made with a seed inside the per-sample path (`default_rng(index)`), their
#: draws are the same every epoch for that sample, which caching keeps; made without one, they are random.
SEEDED_MAKERS = {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.mtrand.RandomState",
                 "numpy.random._generator.default_rng", "random.Random"}
CONTAINERS = {"Compose", "Sequential", "OneOf", "SomeOf", "ReplayCompose"}
LIBRARIES = ("torchvision.transforms", "albumentations", "kornia.augmentation")

_seen_classes = {}


def install(torch) -> None:
    """Note the augmentation of each DataLoader's dataset when the loader is built."""
    from torch.utils.data import dataloader as dl

    cls = dl.DataLoader
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            _note(self)
        except Exception:
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def _note(loader) -> None:
    dataset = _unwrapped(getattr(loader, "dataset", None))
    if dataset is None:
        return
    key = type(dataset)
    found = _seen_classes.get(key)
    if found is None:
        found = _seen_classes[key] = inspect_dataset(dataset)
    runtime.emit(dict(found, k=kinds.AUGMENTATION, t=time.monotonic(), l=dataloader.loader_id(loader),
                   ds=type(dataset).__name__))


def _unwrapped(dataset):
    """The dataset under torch's wrappers (Subset and the like: their `.dataset`)."""
    for _ in range(4):
        inner = getattr(dataset, "dataset", None) if dataset is not None else None
        if inner is None or not (type(dataset).__module__ or "").startswith("torch.utils.data"):
            break
        dataset = inner
    return dataset


def inspect_dataset(dataset) -> dict:
    """{"random": [...], "deterministic": [...], "checked": bool, "why": str}: random calls and
    transforms in the per-sample path, deterministic transforms found, or why it could not be read."""
    random, deterministic = [], []
    functions = [getattr(type(dataset), name) for name in ("__getitem__", "__getitems__", "__iter__")
                 if isinstance(getattr(type(dataset), name, None), types.FunctionType)]
    checked = _scan_functions(functions, dataset, random)
    _scan_objects(dataset, random, deterministic)
    out = {"random": _unique(random), "deterministic": _unique(deterministic), "checked": bool(checked)}
    if not checked:
        out["why"] = "the dataset's source could not be read"
    return out


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))[:MAX_NOTED]


def _scan_functions(functions: list, owner, random: list) -> int:
    """Parse each function (and the methods of `owner` and module-level functions it calls, in
    turn); append its random calls to `random`. Returns how many were parsed."""
    queue, done = list(functions), set()
    while queue and len(done) < MAX_FUNCTIONS:
        func = queue.pop(0)
        code = getattr(func, "__code__", None)
        if code is None or code in done or _is_library(code.co_filename):
            continue
        done.add(code)
        tree = _parse(func)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                _call(node, func, owner, random, queue, code)
    return len(done)


def _parse(func):
    try:
        source = textwrap.dedent(inspect.getsource(func))
        return ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None


def _call(node, func, owner, random: list, queue: list, code) -> None:
    line = code.co_firstlineno + getattr(node, "lineno", 1) - 1
    where = f"{_short(code.co_filename)}:{line}"
    if isinstance(node.func, ast.Attribute) and node.func.attr in RANDOM_FILLS:
        random.append(f".{node.func.attr}() at {where}")     # a tensor filled in place with random numbers
        return
    parts = _dotted(node.func)
    if not parts:
        return
    head = parts[0]
    if head == "self" and owner is not None and len(parts) >= 2:
        target = getattr(owner, parts[1], None)
        if len(parts) == 3 and _is_generator(target):
            random.append(f"{'.'.join(parts)} at {where}")
        elif len(parts) == 2 and callable(target):
            queue.append(getattr(target, "__func__", None) or getattr(type(target), "__call__", None))
        return
    value = (getattr(func, "__globals__", None) or {}).get(head)
    name = _module_name(value, parts)
    if name in SEEDED_MAKERS and _seeded(node):
        return          # a generator made from a seed the path gives it draws the same numbers for that seed
    if name is not None and _draws_random(name):
        random.append(f"{name} at {where}")
    elif len(parts) == 1 and isinstance(value, types.FunctionType):
        queue.append(value)
    elif len(parts) == 2 and _is_generator(value):
        random.append(f"{'.'.join(parts)} at {where}")


def _seeded(node) -> bool:
    """A generator's constructor called with a seed (not None): its draws repeat for that seed."""
    seed = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)
    return seed is not None and not (isinstance(seed, ast.Constant) and seed.value is None)


def _dotted(node) -> list:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return []


def _module_name(value, parts: list):
    """The dotted name a call resolves to through the function's globals, or None."""
    if isinstance(value, types.ModuleType):
        return ".".join([value.__name__] + parts[1:])
    module = getattr(value, "__module__", None)
    if callable(value) and isinstance(module, str) and len(parts) == 1:
        return f"{module}.{getattr(value, '__name__', parts[0])}"
    return None


def _draws_random(name: str) -> bool:
    if name.startswith(("numpy.random.", "random.")):
        return True
    if name.startswith("torch.") and name.rsplit(".", 1)[-1] in TORCH_RANDOM:
        return True
    return name.startswith(("torch.nn.functional.dropout",))


def _is_generator(value) -> bool:
    cls = type(value)
    return f"{cls.__module__}.{cls.__name__}" in GENERATORS


def _scan_objects(dataset, random: list, deterministic: list) -> None:
    """Transform objects reachable from the dataset's attributes, named random or deterministic;
    a user's own callable transform has its __call__ parsed like __getitem__."""
    stack, seen = [(value, 1) for value in _attributes(dataset)], set()
    while stack and len(seen) < MAX_OBJECTS:
        value, depth = stack.pop()
        if id(value) in seen or depth > MAX_DEPTH or isinstance(value, (str, bytes, int, float, bool, type(None), type,
                                                                        types.ModuleType)):
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            stack.extend((item, depth + 1) for item in value[:64])
            continue
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in list(value.values())[:64])
            continue
        module = type(value).__module__ or ""
        name = type(value).__name__
        if module.startswith(LIBRARIES):
            kind = _transform_kind(value, name, module)
            if kind == "random":
                random.append(name)
            elif kind == "deterministic":
                deterministic.append(name)
            stack.extend((item, depth + 1) for item in _attributes(value))
        elif isinstance(value, types.FunctionType) or (callable(value) and hasattr(type(value), "__call__")
                                                      and not module.startswith(("torch", "numpy", "builtins"))):
            func = value if isinstance(value, types.FunctionType) else getattr(type(value), "__call__", None)
            if isinstance(func, types.FunctionType):
                _scan_functions([func], None if isinstance(value, types.FunctionType) else value, random)
            if not isinstance(value, types.FunctionType):
                stack.extend((item, depth + 1) for item in _attributes(value))


def _attributes(value) -> list:
    try:
        return list(vars(value).values())[:64]
    except TypeError:
        return []


def _transform_kind(value, name: str, module: str):
    if name in CONTAINERS:
        return None
    if name.startswith("Random") or name in RANDOM_TRANSFORMS:
        return "random"
    p = getattr(value, "p", None)
    if module.startswith("albumentations") and isinstance(p, (int, float)) and 0 < p < 1:
        return "random"
    if module.startswith("kornia.augmentation"):
        return "random"        # kornia's augmentation module holds random transforms
    return "deterministic"


def _is_library(path: str) -> bool:
    path = path or ""
    return "site-packages" in path or "dist-packages" in path or path.startswith("<") or \
        os.path.dirname(path) == os.path.dirname(os.__file__)


def _short(path: str) -> str:
    from .sampling import display_path as _display     # the stack sampler's spelling of a file, relative below the cwd
    return _display(path)
