"""Ranking never leaves a fix below another whose whole range lies above its own, and a trait
(leading over unestimated fixes, keeping training the same, a prior) orders fixes of like worth,
not a smaller estimate before a clearly larger one."""

from gpuprof.advise import rank


def item(fix_id, low=None, high=None, prior=None, addresses=("compute",), **fields):
    estimate = {"low": low, "high": high} if low is not None else None
    return dict({"id": fix_id, "estimate": estimate, "prior": prior, "addresses": list(addresses), "effort": 1,
                 "estimated_speedup": round((low + high) / 2, 2) if low is not None else None}, **fields)


def test_a_fix_whose_whole_range_lies_above_goes_ahead_saying_why():
    ranked = rank._whole_range_above_first([item("num-workers", 1.1, 1.4, addresses=("input.cpu",)),
                                             item("cache-preprocessed", 1.5, 3.0, addresses=("input.cpu",))])
    assert [a["id"] for a in ranked] == ["cache-preprocessed", "num-workers"]
    assert "whole range lies above" in ranked[0]["ranked_by"]


def test_overlapping_ranges_keep_their_order():
    ranked = rank._whole_range_above_first([item("num-workers", 1.1, 1.6), item("cache-preprocessed", 1.5, 3.0)])
    assert [a["id"] for a in ranked] == ["num-workers", "cache-preprocessed"]


def test_a_fix_with_a_prior_has_no_range_to_compare():
    ranked = rank._whole_range_above_first([item("cache-preprocessed", prior=1.05, addresses=("input.cpu",)),
                                             item("batch-echoing", 1.25, 1.4, addresses=("input.cpu",))])
    assert ranked[0]["id"] == "cache-preprocessed"


def test_a_lead_about_the_others_figures_keeps_its_place():
    lead = item("ddp", 1.1, 1.2, ranked_by="first: nn.DataParallel is in use")
    ranked = rank._whole_range_above_first([lead, item("mixed-precision", 1.5, 2.0)])
    assert ranked[0]["id"] == "ddp"


def test_a_clearly_larger_estimate_passes_a_lead_over_unestimated_fixes_and_a_prior():
    ranked = rank._clearly_larger_before_traits([
        item("rollout-inference", 1.05, 1.20, ranked_by="first: the rollout is 65% of the training time"),
        item("compile", prior=1.2),
        item("mixed-precision", 1.2, 1.6)], "compute")
    assert ranked[0]["id"] == "mixed-precision" and "clearly larger" in ranked[0]["ranked_by"]


def test_within_the_near_tie_the_trait_still_decides():
    ranked = rank._clearly_larger_before_traits([item("rollout-inference", 1.1, 1.5, ranked_by="first: ..."),
                                                  item("mixed-precision", 1.1, 1.55)], "compute")
    assert ranked[0]["id"] == "rollout-inference"


def test_a_fix_that_changes_training_stays_after_one_that_keeps_it_unless_its_whole_range_is_above():
    keeping = item("rollout-inference", 1.05, 1.58, ranked_by="first: the rollout is 65% of the training time")
    ranked = rank._clearly_larger_before_traits([keeping, item("more-envs-per-call", 1.10, 1.78)], "compute")
    assert ranked[0]["id"] == "rollout-inference"
    ranked = rank._whole_range_above_first([dict(keeping, ranked_by=None), item("more-envs-per-call", 1.6, 2.2)])
    assert ranked[0]["id"] == "more-envs-per-call"


def test_a_fix_worth_no_gain_at_its_figure_goes_after_every_fix_that_gains_whatever_the_tier():
    ranked = rank._no_gain_last([item("compile", prior=1.0), item("mixed-precision", 0.75, 1.33),
                                 item("more-envs-per-call", 1.08, 1.67), item("ddp-buckets")])
    assert [a["id"] for a in ranked] == ["more-envs-per-call", "ddp-buckets", "compile", "mixed-precision"]
