"""Slow steps at a steady interval and a slow start, found from the measured steps' durations."""

from gpuprof.analysis.spikes import describe, periodic_spikes, slow_start


def test_an_evaluation_every_ten_steps_is_found_with_its_period_and_cost():
    durations = [0.040] * 100
    for i in range(9, 100, 10):
        durations[i] = 0.400
    found = periodic_spikes(durations)
    assert found["every"] == 10 and found["count"] == 10 and found["typical_s"] == 0.4
    assert abs(found["share"] - 10 * 0.36 / sum(durations)) < 1e-3
    assert describe(found).startswith("every 10 steps a step takes 400 ms instead of 40 ms")


def test_noise_and_irregular_slow_steps_are_no_period():
    assert periodic_spikes([0.040 + 0.004 * (i % 3) for i in range(100)]) is None
    irregular = [0.040] * 100
    for i in (3, 4, 30, 31, 77, 90):
        irregular[i] = 0.400
    assert periodic_spikes(irregular) is None
    assert periodic_spikes([0.04, 0.4] * 5) is None            # too few steps to speak of a period


def test_a_slow_start_is_named_and_a_steady_one_is_not():
    assert slow_start([0.2] * 5 + [0.05] * 45) == {"steps": 5, "times": 4.0}
    assert slow_start([0.05] * 50) is None
