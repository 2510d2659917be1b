"""The random-augmentation check: the dataset's per-sample path is read (ast, never run) for calls
that draw random numbers and for random transform objects; caching then keeps them online."""

import random
import sys
import types

import numpy as np
import pytest

from gpuprof.judge.sections.augmentation import random_parts, with_augmentation
from gpuprof.capture.probes.augmentation import inspect_dataset

torch = pytest.importorskip("torch")


def noise(x):
    return x + torch.randn(x.shape)


class Noisy:
    def __getitem__(self, i):
        x = torch.ones(3) * i
        if random.random() < 0.5:
            x = x.flip(0)
        return noise(x)


class Steady:
    def __init__(self):
        self.rows = [torch.ones(3)]

    def __getitem__(self, i):
        return self.prepare(self.rows[0] * i)

    def prepare(self, x):
        return (x - x.mean()) / 2


class HeldGenerator:
    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __getitem__(self, i):
        return self.rng.normal() + i


class FillsInPlace:
    def __getitem__(self, i):
        return torch.empty(3).uniform_()


def seeded_mask(index):
    rng = np.random.default_rng(index)
    return rng.integers(0, 4)


class SeededPerSample:
    def __getitem__(self, i):
        return seeded_mask(i)


class UnseededPerSample:
    def __getitem__(self, i):
        first = np.random.default_rng().integers(0, 4)
        return first + np.random.default_rng(None).integers(0, 4)


def _library_class(name, module, **attributes):
    cls = type(name, (), {"__call__": lambda self, x: x})
    cls.__module__ = module
    obj = cls()
    obj.__dict__.update(attributes)
    return obj


class WithTransforms:
    def __init__(self, transforms):
        self.transform = transforms

    def __getitem__(self, i):
        return self.transform(i)


def test_random_calls_are_found_with_their_lines_through_helpers_and_none_is_drawn():
    state = random.getstate(), torch.random.get_rng_state()
    found = inspect_dataset(Noisy())
    assert found["checked"] is True
    assert any(item.startswith("random.random at ") for item in found["random"])
    assert any(item.startswith("torch.randn at ") and "test_augmentation_probe.py:" in item for item in found["random"])
    assert (random.getstate(), torch.random.get_rng_state().tolist()) == (state[0], state[1].tolist())


def test_a_deterministic_path_has_nothing_random():
    assert inspect_dataset(Steady())["random"] == []


def test_a_generator_held_by_the_dataset_and_in_place_random_fills_count():
    assert any("self.rng.normal" in item for item in inspect_dataset(HeldGenerator())["random"])
    assert any("uniform_" in item for item in inspect_dataset(FillsInPlace())["random"])


def test_a_generator_seeded_in_the_path_draws_the_same_for_a_sample_every_epoch_one_unseeded_is_random():
    assert inspect_dataset(SeededPerSample())["random"] == []
    assert len(inspect_dataset(UnseededPerSample())["random"]) == 2


def test_transform_objects_are_named_random_or_deterministic():
    compose = _library_class("Compose", "torchvision.transforms.transforms")
    compose.transforms = [_library_class("Resize", "torchvision.transforms.transforms"),
                          _library_class("RandomHorizontalFlip", "torchvision.transforms.transforms"),
                          _library_class("ColorJitter", "torchvision.transforms.v2._color"),
                          _library_class("HorizontalFlip", "albumentations.augmentations", p=0.5),
                          _library_class("Normalize", "albumentations.augmentations", p=1.0)]
    found = inspect_dataset(WithTransforms(compose))
    assert set(found["random"]) == {"RandomHorizontalFlip", "ColorJitter", "HorizontalFlip"}
    assert set(found["deterministic"]) == {"Resize", "Normalize"}


def test_the_loader_section_gets_what_the_probe_found_by_id_or_dataset():
    loaders = [{"id": 1, "dataset": "Noisy"}, {"id": 2, "dataset": "Other"}]
    events = [{"k": "augmentation", "l": 1, "ds": "Noisy", "random": ["torch.randn at t.py:3"], "deterministic": [],
               "checked": True}]
    out = with_augmentation(loaders, events)
    assert random_parts(out[0]) == ["torch.randn at t.py:3"] and "augmentation" not in out[1]
