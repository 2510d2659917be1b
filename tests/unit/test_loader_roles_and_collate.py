"""The role a loader's building method declares, and the collate_fn named at its own line."""
import functools

from gpuprof.capture.probes import collate_origin, where


def get_eval_dataloader():
    return where.locate((), depth=1)


class DataModule:
    def val_dataloader(self):
        return where.locate((), depth=1)


def make_loader():
    return where.locate((), depth=1)


def test_a_method_named_for_a_role_declares_it_and_is_named_as_the_builder():
    found = DataModule().val_dataloader()
    assert found["role"] == "validation" and found["built_by"] == "DataModule.val_dataloader"
    assert get_eval_dataloader()["role"] == "validation"
    assert "role" not in make_loader()


def test_role_names_of_the_frameworks():
    def named(name):
        return where.role_of_code(compile("pass", "x.py", "exec").replace(co_name=name))
    assert named("get_train_dataloader") == "train" and named("train_dataloader") == "train"
    assert named("get_test_dataloader") == "test" and named("predict_dataloader") == "evaluation"
    assert named("val_dataloader") == "validation" and named("dataloader") is None


def tokenize_batch(rows):
    return rows


class Collator:
    def __call__(self, rows):
        return rows


class RemoveColumns:
    """A framework's wrapper that holds the user's collator (as Hugging Face's RemoveColumnsCollator)."""

    def __init__(self, data_collator):
        self.data_collator = data_collator

    def __call__(self, rows):
        return self.data_collator(rows)


def test_the_collate_is_named_through_partials_and_framework_wrappers():
    line = tokenize_batch.__code__.co_firstlineno
    assert collate_origin.describe(tokenize_batch)["where"].endswith(f"test_loader_roles_and_collate.py:{line}")
    assert collate_origin.describe(functools.partial(tokenize_batch))["name"] == "tokenize_batch"
    assert collate_origin.describe(Collator())["name"] == "Collator.__call__"
    assert collate_origin.describe(RemoveColumns(Collator()))["name"] == "Collator.__call__"


def test_torchs_default_collate_and_no_collate_are_not_named():
    from torch.utils.data import default_collate
    assert collate_origin.describe(default_collate) is None and collate_origin.describe(None) is None
    assert collate_origin.describe(len) is None
