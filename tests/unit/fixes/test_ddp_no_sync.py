from gpuprof.advise.fixes import ddp_no_sync
from tests.unit.fixes.cases import evidence, situation


def test_waiting_in_collectives_gets_accumulation_with_no_sync():
    built = ddp_no_sync.build(evidence(), situation("comm", 0.4))
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.4 * 3 / 4)) < 1e-9
    assert "model.no_sync()" in built["snippet"] and f"{built['estimated_speedup']:.2f}x" in built["why"]


def test_only_for_comm():
    assert ddp_no_sync.build(evidence(), situation("compute", 0.9)) is None


def test_a_program_that_already_accumulates_skips_every_all_reduce_but_the_last():
    """Eight micro-batches per step, each all-reduced: seven of every eight go, training unchanged."""
    built = ddp_no_sync.build(evidence(ddp_syncs_per_step=8.1), situation("comm", 0.8))
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.8 * 7 / 8)) < 1e-9
    assert "7 of every 8" in built["why"] and "stay the same" in built["detail"]
    one = ddp_no_sync.build(evidence(ddp_syncs_per_step=1.0), situation("comm", 0.8))
    assert abs(one["estimated_speedup"] - 1 / (1 - 0.8 * 3 / 4)) < 1e-9 and "grows 4x" in one["detail"]


def test_all_reduces_per_step_come_from_ddps_count_against_the_optimizer_steps():
    from gpuprof.judge.sections.ddp_syncs import syncs_per_step
    notes = [{"t": 1.0, "iteration": 100, "steps": 20}, {"t": 5.0, "iteration": 900, "steps": 220},
             {"t": 3.0, "iteration": 500, "steps": 120}]
    assert syncs_per_step(notes) == 4.0
    assert syncs_per_step(notes[:1]) is None
    assert syncs_per_step([{"t": 1.0, "iteration": 10, "steps": 2}, {"t": 2.0, "iteration": 100, "steps": 25}]) is None
