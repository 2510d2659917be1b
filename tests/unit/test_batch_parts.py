from gpuprof.judge.sections.batch_parts import batch_parts, collate_dominates, token_batch
from gpuprof.judge.sections.loaders import analyse_loaders


def _entry(collate_s, wall_s=1.6, named=True, in_main=True):
    return {"batches": 100, "wait_s": 1.7,
            "collate": {"name": "Collator.__call__", "where": "train.py:30"} if named else None,
            "producer": {"batches": 100, "wall_s": wall_s, "collate_s": collate_s, "in_main_process": in_main}}


def test_a_batch_splits_into_samples_collate_and_the_rest_of_the_wait():
    parts = batch_parts(_entry(1.2))
    assert parts["collate_s"] == 0.012 and abs(parts["samples_s"] - 0.004) < 1e-9
    assert parts["collate_share"] == 0.75 and abs(parts["rest_s"] - 0.001) < 1e-9 and parts["notable"]


def test_only_a_named_collate_with_a_notable_share_is_notable():
    assert not batch_parts(_entry(1.2, named=False))["notable"]
    assert not batch_parts(_entry(0.1))["notable"]
    assert batch_parts(dict(_entry(1.2), producer={"batches": 100, "wall_s": 1.6})) is None


def test_workers_have_no_rest_of_the_wait_to_split():
    assert batch_parts(_entry(1.2, in_main=False))["rest_s"] is None


def test_token_batches_and_a_dominant_collate():
    assert token_batch({"batch": {"dtype": "int64", "shape": [16, 128]}})
    assert not token_batch({"batch": {"dtype": "uint8", "shape": [16, 128]}})
    assert not token_batch({"batch": {"dtype": "float32", "shape": [16, 3, 32, 32]}})
    assert collate_dominates({"batch_parts": batch_parts(_entry(1.2))})
    assert not collate_dominates({"batch_parts": batch_parts(_entry(0.5))})


def _loader(l, role=None, where="train.py:51"):
    event = {"k": "loader", "l": l, "where": where, "num_workers": 0, "batch_size": 16}
    if role:
        event.update(role=role, built_by=f"Trainer.get_{role}_dataloader")
    return event


def test_loaders_built_at_one_line_for_two_roles_are_two_pipelines_with_their_own_figures():
    loaders = [_loader("1:1", "train"), _loader("1:2", "validation"), _loader("1:3", "validation")]
    batches = [{"k": "batch", "l": "1:1", "t": 1.0, "w": 0.5}, {"k": "batch", "l": "1:2", "t": 2.0, "w": 0.2},
               {"k": "batch", "l": "1:3", "t": 3.0, "w": 0.3}]
    fetches = [{"k": "fetch", "l": l, "wall": 0.1, "cpu": 0.1, "co": 0.08, "cc": 0.08} for l in ("1:1", "1:2", "1:3")]
    out = analyse_loaders(loaders, batches, fetches, [])
    by_role = {e["declared_role"]: e for e in out}
    assert set(by_role) == {"train", "validation"}
    assert by_role["validation"]["instances"] == 2 and by_role["validation"]["batches"] == 2
    assert abs(by_role["validation"]["producer"]["collate_s"] - 0.16) < 1e-9
    assert by_role["train"]["instances"] == 1 and by_role["train"]["batch_parts"]["collate_share"] == 0.8


def test_loaders_at_one_line_without_a_declared_role_stay_one_pipeline():
    loaders = [_loader("1:1"), _loader("1:2")]
    batches = [{"k": "batch", "l": "1:1", "t": 1.0, "w": 0.5}, {"k": "batch", "l": "1:2", "t": 2.0, "w": 0.2}]
    out = analyse_loaders(loaders, batches, [], [])
    assert len(out) == 1 and out[0]["instances"] == 2
