"""The start-up fixes: each applies where its part fills enough of a notable start-up, and
estimates the gain on the run's wall time with that part gone."""

import pytest

from gpuprof.advise.fixes import cache_tokenised_dataset, compile_cache, lazy_dataset_indexing
from gpuprof.record import startup_parts as parts
from tests.unit.fixes.cases import evidence, situation


def startup(notable=True, **seconds_by_part):
    total = sum(seconds_by_part.values())
    return {"seconds": total, "share": 0.5, "notable": notable,
            "parts": [{"part": p, "seconds": s, "share": s / total} for p, s in seconds_by_part.items()],
            "where": {"function": "build", "line": "train.py:17", "part": parts.DATASET, "seconds": 6.0}}


def build(fix, section):
    return fix.build(evidence(startup=section), situation("compute", 0.9))


def test_caching_the_dataset_saves_its_part_of_the_run():
    section = startup(**{parts.DATASET: 6.0, parts.IMPORTS: 4.0})      # 10 s of a 20 s run
    built = build(cache_tokenised_dataset, section)
    assert built["estimated_speedup"] == pytest.approx(20.0 / 14.0)
    assert built["where"] == "train.py:17"
    assert "save_to_disk" in built["snippet"] and "6.0 s of a 10.0 s start-up" in built["why"]


def test_each_fix_needs_its_own_part_in_a_notable_start_up():
    imports_only = startup(**{parts.IMPORTS: 10.0})
    assert build(cache_tokenised_dataset, imports_only) is None
    assert build(lazy_dataset_indexing, imports_only) is None
    assert build(compile_cache, imports_only) is None
    small = startup(**{parts.DATASET: 1.0, parts.IMPORTS: 9.0})        # a tenth of the start-up
    assert build(cache_tokenised_dataset, small) is None
    assert build(cache_tokenised_dataset, startup(notable=False, **{parts.DATASET: 6.0})) is None
    assert build(cache_tokenised_dataset, None) is None


def test_indexing_and_compilation_get_their_own_fix_at_no_dataset_line():
    indexing = build(lazy_dataset_indexing, startup(**{parts.INDEXING: 5.0, parts.IMPORTS: 5.0}))
    assert indexing["estimated_speedup"] == pytest.approx(20.0 / 15.0) and indexing["where"] is None
    compiled = build(compile_cache, startup(**{parts.COMPILATION: 8.0, parts.IMPORTS: 2.0}))
    assert compiled["estimated_speedup"] == pytest.approx(20.0 / 12.0)
    assert "TORCHINDUCTOR_CACHE_DIR" in compiled["snippet"]


def test_spawned_workers_are_told_to_keep_the_scripts_top_level_light():
    from gpuprof.advise.fixes import spawned_worker_imports
    from tests.unit.fixes.cases import LOADER

    def with_loader(**loader):
        settings = dict(dict(LOADER, num_workers=2, epochs=4, epoch_start_wait_s=8.0, context="spawn"), **loader)
        ev = evidence(loader=settings)
        return spawned_worker_imports.build(ev, situation("compute", 0.9))

    built = with_loader()
    assert built["estimated_speedup"] is None and built["where"] == "train.py:42"
    assert built["prior"] == pytest.approx(1.1)               # the bound, 10 / (10 - 6), is larger
    assert '__name__ == "__main__"' in built["snippet"] and "2.00 s" in built["why"]
    assert with_loader(context="forkserver") is not None
    assert with_loader(epochs=2, epoch_start_wait_s=1.2)["prior"] == pytest.approx(10.0 / (10.0 - 0.6))
    assert with_loader(context=None) is None                  # forked workers import nothing again
    assert with_loader(epoch_start_wait_s=1.0) is None        # a quarter second a start
    assert with_loader(num_workers=0) is None
    assert with_loader(epochs=1) is None                      # started once: part of the start-up
    assert with_loader(persistent_workers=True) is None
