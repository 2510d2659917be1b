from gpuprof.advise.fixes import loader_workers
from tests.unit.fixes.cases import evidence, situation


def test_a_batch_function_in_the_training_thread_moves_into_dataloader_workers():
    ev = evidence(wait_source="sampled", loader=None, data_where="get_batch (train.py:12)", producer_cores=0.5)
    built = loader_workers.build(ev, situation())
    assert "wrap get_batch in an IterableDataset" in built["detail"]
    assert "yield get_batch()" in built["snippet"] and built["where"] is None


def test_only_for_hand_written_cpu_bound_loops():
    assert loader_workers.build(evidence(), situation()) is None
    assert loader_workers.build(evidence(wait_source="sampled", loader=None), situation("input.latency")) is None
