from gpuprof.judge.sections.loop import analyse_loop

LOADER = [{"l": "1:1", "batch_size": 32}]


def steps(times, pid=1, gaps=None):
    out = []
    for i, t in enumerate(times):
        event = {"k": "step", "t": t, "pid": pid}
        if gaps is not None and i:
            event["f"] = gaps
        out.append(event)
    return out


def test_data_wait_share_is_waiting_over_the_measured_window():
    step_events = steps([1.0 + 0.1 * i for i in range(11)])            # 10 steps of 100 ms after the first
    batches = [{"k": "batch", "l": "1:1", "t": 0.95 + 0.1 * i, "w": 0.06, "pid": 1} for i in range(11)]
    result = analyse_loop(step_events, batches, LOADER)
    assert result["count"] == 11 and result["measured"] == 10 and result["source"] == "optimizer"
    assert abs(result["median_step_s"] - 0.1) < 1e-9
    assert abs(result["data_wait_share"] - 0.6) < 1e-9                  # 10 waits of 60 ms in 1 s
    assert abs(result["samples_per_second"] - 320) < 1e-6


def test_warmup_steps_are_left_out():
    step_events = steps([0.0, 5.0, 5.1, 5.2, 5.3])                       # a slow first epoch start
    result = analyse_loop(step_events, [], [], warmup_steps=1)
    assert result["measured"] == 3 and abs(result["median_step_s"] - 0.1) < 1e-9


def test_without_an_optimizer_the_dominant_loader_marks_steps():
    batches = [{"k": "batch", "l": "1:1", "t": 0.2 * i, "w": 0.15, "pid": 1} for i in range(6)]
    batches += [{"k": "batch", "l": "1:2", "t": 0.5, "w": 0.01, "pid": 1}]
    result = analyse_loop([], batches, LOADER)
    assert result["source"] == "dataloader" and result["count"] == 6
    assert abs(result["median_step_s"] - 0.2) < 1e-9


def test_handwritten_loops_use_the_gap_before_the_first_forward():
    result = analyse_loop(steps([0.1 * i for i in range(6)], gaps=0.07), [], [])
    assert result["data_wait_source"] == "before-first-forward"
    assert abs(result["data_wait_share"] - 0.7) < 1e-9


def test_blocks_count_every_step_they_stand_for():
    step_events = steps([0.1 * i for i in range(5)])
    step_events.append({"k": "step", "t": 0.4 + 50 * 0.1, "n": 50, "t0": 0.5, "pid": 1})
    result = analyse_loop(step_events, [], [])
    assert result["count"] == 55 and result["measured"] == 54
    assert abs(result["median_step_s"] - 0.1) < 1e-9


def test_no_steps_at_all():
    result = analyse_loop([], [], [])
    assert result["count"] == 0 and result["data_wait_share"] is None


def test_an_evaluation_loaders_waits_are_not_data_wait():
    loaders = [{"l": "1:1", "where": "train.py:20", "batch_size": 32}, {"l": "1:2", "where": "train.py:21"}]
    step_events = steps([1.0 + 0.1 * i for i in range(11)])
    batches = [{"k": "batch", "l": "1:1", "t": 0.95 + 0.1 * i, "w": 0.02, "pid": 1} for i in range(11)]
    batches += [{"k": "batch", "l": "1:2", "t": 1.55 + 0.001 * i, "w": 0.05, "pid": 1} for i in range(3)]
    result = analyse_loop(step_events, batches, loaders)
    # The training loader's waits only, over the training time: the evaluation pass (from the wait
    # for its first batch to the wait for the next training batch) is left out of both.
    assert abs(result["evaluation"]["seconds"] - 0.13) < 1e-6
    assert abs(result["data_wait_share"] - 0.2 / 0.87) < 1e-6
    assert abs(result["other_loaders_wait_s"] - 0.15) < 1e-9


def test_backward_passes_are_steps_when_no_optimizer_stepped():
    backward = [{"k": "bstep", "t": 0.1 * i, "pid": 1} for i in range(6)]
    result = analyse_loop([], [], [], backward_steps=backward)
    assert result["source"] == "backward" and result["count"] == 6
    with_optimizer = analyse_loop(steps([0.2 * i for i in range(4)]), [], [], backward_steps=backward)
    assert with_optimizer["source"] == "optimizer" and with_optimizer["count"] == 4


def test_evaluation_inside_the_window_is_left_out_of_step_time_and_data_wait():
    """Ten 100 ms steps that wait 60 ms each, then a 1 s evaluation pass over a test loader (four
    batches), then ten more steps: the data wait is 60% of training time, not of the 3 s window."""
    times = [1.0 + 0.1 * i for i in range(11)] + [3.1 + 0.1 * i for i in range(10)]
    loaders = LOADER + [{"l": "2:2", "batch_size": 32}]
    train = [{"k": "batch", "l": "1:1", "t": t - 0.05, "w": 0.06, "pid": 1} for t in times]
    test = [{"k": "batch", "l": "2:2", "t": 2.05 + 0.25 * i, "w": 0.05, "pid": 1} for i in range(4)]
    result = analyse_loop(steps(times), train + test, loaders)
    evaluation = result["evaluation"]
    assert evaluation["passes"] == 1 and abs(evaluation["seconds"] - 1.0) < 0.05
    assert abs(result["data_wait_share"] - 0.6) < 0.03
    assert abs(result["mean_step_s"] - 0.1) < 0.01
    assert "evaluation" not in analyse_loop(steps(times), train, LOADER)


def test_the_hosts_wait_for_the_gpu_before_the_forward_is_not_batch_preparation():
    # A blocking .to("cuda") at the top of each step waits 60 ms for the previous step's kernels
    # (CUDA syncs the stream before a pageable copy): of a 70 ms gap, 10 ms prepared the batch.
    step_events = steps([0.1 * i for i in range(6)], gaps=0.07)
    for event in step_events:
        if "f" in event:
            event["fw"] = 0.06
    result = analyse_loop(step_events, [], [])
    assert result["data_wait_source"] == "before-first-forward"
    assert abs(result["data_wait_share"] - 0.1) < 1e-9
    assert abs(result["gpu_wait_before_forward_s"] - 0.3) < 1e-9
