"""The training thread's sampled time: shares weighted by the time each sample stood for, data-making
functions found by name, and batch construction inside the step taken as the data share."""

from gpuprof.judge.sections.host_time import analyse_samples, use_sampled_batching


def samples(t, counts, n=50):
    return {"k": "stack_samples", "pid": 1, "t": t, "n": n, "weights": "us", "counts": counts}


EVENTS = [samples(1.0 + i, {"forward|R": 300_000, "backward|R": 200_000,
                            "host:get_batch (train.py:40)|R": 400_000, "host:log_metrics (train.py:90)|S": 100_000})
          for i in range(3)]


def test_shares_are_weighted_by_time_and_data_functions_are_found_by_name():
    found = analyse_samples(EVENTS, 0.5, 4.0)
    assert found["samples"] == 150
    assert found["shares"] == {"backward": 0.2, "forward": 0.3, "host": 0.5}
    assert found["data_functions"] == [{"function": "get_batch (train.py:40)", "share": 0.4}]
    assert found["data_share"] == 0.4 and found["data_states"]["running"] == 1.0
    assert analyse_samples(EVENTS, 10.0, 20.0) == {"samples": 0}             # outside the window


def test_batch_construction_inside_the_step_becomes_the_data_share():
    steps = {"data_wait_source": "before-first-forward", "data_wait_share": 0.01, "window_s": 3.0,
             "sampled": analyse_samples(EVENTS, 0.5, 4.0)}
    use_sampled_batching(steps)
    assert steps["data_wait_source"] == "sampled" and steps["data_wait_share"] == 0.4
    assert steps["data_wait_where"] == "get_batch (train.py:40)" and steps["data_wait_cpu_share"] == 1.0
    loader = {"data_wait_source": "dataloader", "data_wait_share": 0.1, "sampled": analyse_samples(EVENTS)}
    use_sampled_batching(loader)
    assert loader["data_wait_source"] == "dataloader"                         # a measured wait stands
