"""After `try` measured a fix, the report ranks by the measurement: a fix measured no faster or
slower goes last and says so, and its headline shows the measurement beside the estimate."""

from gpuprof.advise.measured import with_measurements
from gpuprof.present.render.units import gain

ADVICE = [{"id": "num-workers", "estimated_speedup": 1.39}, {"id": "cache-preprocessed", "estimated_speedup": 1.36},
          {"id": "batch-echoing", "estimated_speedup": 1.30}]


def test_a_fix_measured_slower_is_never_first():
    rows = [{"fix": "num-workers", "speedup": 0.58, "interval_low": 0.47, "interval_high": 0.72, "conclusion": "slower"}]
    ranked = with_measurements(ADVICE, rows)
    assert [a["id"] for a in ranked] == ["cache-preprocessed", "batch-echoing", "num-workers"]
    assert ranked[-1]["ranked_by"] == "last: gpuprof try measured it 0.58x, slower than the program as it is"
    assert gain(ranked[-1]) == "est. 1.39x, measured 0.58x"


def test_a_fix_measured_faster_keeps_its_place_and_shows_the_measurement():
    rows = [{"fix": "num-workers", "speedup": 1.31, "speedup_min": 1.2, "speedup_max": 1.4}]
    ranked = with_measurements(ADVICE, rows)
    assert ranked[0]["id"] == "num-workers" and ranked[0]["measured"]["conclusion"] == "faster"
    assert "ranked_by" not in ranked[0] and gain(ranked[0]) == "est. 1.39x, measured 1.31x"
    assert with_measurements(ADVICE, []) == ADVICE


def test_a_change_try_could_not_apply_is_not_a_measurement():
    rows = [{"fix": "hdf5-chunk-cache", "speedup": 0.9, "conclusion": "not applied",
             "error": "the program opens data.h5 again for every read"}]
    advice = [{"id": "hdf5-chunk-cache", "estimated_speedup": 1.6}, {"id": "num-workers", "estimated_speedup": 1.3}]
    assert with_measurements(advice, rows) == advice


def test_a_measurement_takes_the_place_of_the_estimate_in_the_ranking():
    advice = [{"id": "num-workers", "estimated_speedup": 1.6}, {"id": "device-preprocessing", "estimated_speedup": 1.55},
              {"id": "cache-preprocessed", "estimated_speedup": 1.5}, {"id": "batch-echoing", "estimated_speedup": 1.4}]
    rows = [{"fix": "cache-preprocessed", "speedup": 1.9, "conclusion": "faster"},
            {"fix": "num-workers", "speedup": 0.86, "interval_low": 0.7, "interval_high": 1.05,
             "conclusion": "inconclusive"}]
    ranked = with_measurements(advice, rows)
    # Measured 1.9x beats an estimate of 1.55x; measured below 1.0x is never first, even inconclusive.
    assert [a["id"] for a in ranked] == ["cache-preprocessed", "device-preprocessing", "batch-echoing", "num-workers"]
    assert ranked[0]["ranked_by"] == ("ahead of device-preprocessing: measured 1.90x by gpuprof try, where that fix "
                                      "is only estimated")
    assert "not clearly faster" in ranked[-1]["ranked_by"]
    # An unmeasured fix ranked after a measured one stays after it, whatever its estimate.
    later = with_measurements([{"id": "a", "estimated_speedup": 1.2}, {"id": "b", "estimated_speedup": 3.0}],
                              [{"fix": "a", "speedup": 1.1, "conclusion": "faster"}])
    assert [a["id"] for a in later] == ["a", "b"]


def test_when_every_fix_measured_no_faster_the_report_says_no_fix_helped():
    from gpuprof.advise.measured import no_fix_helped
    from gpuprof.advise.wording import no_fix_helped_line
    rows = [{"fix": "num-workers", "speedup": 0.58, "conclusion": "slower"}]
    one = with_measurements(ADVICE[:1], rows)
    assert no_fix_helped(one) and no_fix_helped_line({"advice": one}).startswith("No fix helped")
    assert not no_fix_helped(with_measurements(ADVICE, rows))
