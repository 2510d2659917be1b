from gpuprof.advise.fixes import cache_preprocessed, collate_once, device_preprocessing
from gpuprof.priors.input_fixes import COLLATE_RESIDUAL
from tests.unit.fixes.cases import LOADER, evidence, situation
from tests.unit.fixes.representative import TOKENIZING


def test_a_tokenizing_collate_is_named_at_its_line_with_its_share_and_the_text_remedy():
    built = collate_once.build(evidence(loader=TOKENIZING), situation())
    assert built["where"] == "train.py:30"
    assert "Collator.__call__ (train.py:30)" in built["why"] and "94% of making a batch" in built["why"]
    assert "map(" in built["snippet"] and "DataCollatorWithPadding" in built["snippet"]
    assert "Trainer(" not in built["snippet"]


def test_the_estimate_removes_the_collate_but_its_residual_from_the_measured_split():
    """60% of each step waits on an inline producer: the wait shrinks by the batch's new cost."""
    built = collate_once.build(evidence(loader=TOKENIZING), situation())
    made = 0.016
    for residual, got in ((COLLATE_RESIDUAL.value, built["estimated_speedup"]),
                          (COLLATE_RESIDUAL.high, built["estimate_low"]), (COLLATE_RESIDUAL.low, built["estimate_high"])):
        k = made / (0.001 + residual * 0.015)
        assert abs(got - 1 / (0.4 + 0.6 / k)) < 1e-9


def test_a_trainer_gets_the_dataset_and_collator_in_the_trainers_arguments():
    built = collate_once.build(evidence(loader=dict(TOKENIZING, framework="transformers")), situation())
    assert "Trainer(..., train_dataset=tokenized" in built["snippet"]


def test_a_collate_not_named_or_not_notable_gets_no_fix():
    unnamed = dict(TOKENIZING, batch_parts=dict(TOKENIZING["batch_parts"], collate=None, notable=False))
    small = dict(TOKENIZING, batch_parts=dict(TOKENIZING["batch_parts"], collate_share=0.1, notable=False))
    assert collate_once.build(evidence(loader=unnamed), situation()) is None
    assert collate_once.build(evidence(loader=small), situation()) is None
    assert collate_once.build(evidence(loader=TOKENIZING), situation("input.disk")) is None


def test_image_remedies_are_not_given_for_token_batches_nor_a_cache_the_collate_fix_covers():
    assert device_preprocessing.build(evidence(loader=TOKENIZING), situation()) is None
    assert cache_preprocessed.build(evidence(loader=TOKENIZING), situation()) is None
    images = dict(LOADER, batch={"dtype": "float32", "shape": [32, 3, 64, 64]})
    assert device_preprocessing.build(evidence(loader=images), situation()) is not None
