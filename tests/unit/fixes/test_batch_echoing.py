from gpuprof.advise.fixes import batch_echoing
from tests.unit.fixes.cases import evidence, situation


def test_echoing_halves_the_input_and_says_what_it_changes_in_training():
    built = batch_echoing.build(evidence(), situation())
    assert built["change"] == {"echo": 2}
    assert "Randomness" in built["detail"] and "fresh samples" in built["detail"]
    assert batch_echoing.FIX.changes_training


def test_its_try_variant_is_labelled_and_cautioned_by_the_fix():
    assert batch_echoing.FIX.variant_label({"echo": 3}) == "echo x3"
    assert "3 times in a row" in batch_echoing.FIX.variant_caution({"echo": 3})
    assert "training loop" in batch_echoing.FIX.keep({"echo": 2}, "train.py:42")


def test_no_input_bottleneck_no_echoing():
    assert batch_echoing.build(evidence(), situation("compute", 0.02)) is None
