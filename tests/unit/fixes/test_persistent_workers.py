from gpuprof.advise.fixes import persistent_workers
from tests.unit.fixes.cases import LOADER, evidence, situation


def restarted(**loader):
    return evidence(loader=dict(dict(LOADER, num_workers=2, epochs=4, epoch_start_wait_s=3.0), **loader))


def test_workers_restarted_every_epoch_are_kept_alive():
    built = persistent_workers.build(restarted(), situation())
    assert built["change"] == {"persistent_workers": True, "prefetch_factor": 4}
    assert abs(built["estimated_speedup"] - 10.0 / (10.0 - 3.0 * 3 / 4)) < 1e-9
    assert "4 epochs each waited 0.75 s" in built["why"]


def test_nothing_to_keep_alive_with_one_epoch_no_workers_or_workers_already_persistent():
    assert persistent_workers.build(restarted(epochs=1), situation()) is None
    assert persistent_workers.build(restarted(num_workers=0), situation()) is None
    assert persistent_workers.build(restarted(persistent_workers=True), situation()) is None
